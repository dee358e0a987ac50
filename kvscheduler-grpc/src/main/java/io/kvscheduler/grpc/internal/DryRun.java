package io.kvscheduler.grpc.internal;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.PlannedOperation;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The request metadata {@code dry-run} (our extension): {@code true}, {@code 1} or empty asks the
 * call to plan its transaction instead of committing it; {@code false} or {@code 0} (or no such
 * metadata) commits. Any other value, or {@code dry-run} together with {@code confirm-within}, is
 * refused with {@code INVALID_ARGUMENT} naming the metadata, before the call runs.
 *
 * <p>A planning call answers as its service defines ({@code SetConfig}: one result per planned
 * operation) and adds the response headers {@code dry-run-operations} (how many operations) and
 * {@code dry-run-plan} (the operations, {@code "CREATE key STATE [details]"} separated by {@code ";
 * "}, cut at {@value #MAX_PLAN_CHARS} characters), the plan of a call whose response has no field
 * for it ({@code ConfiguratorService.Update}).
 */
public final class DryRun implements ServerInterceptor {
  static final Metadata.Key<String> DRY_RUN =
      Metadata.Key.of("dry-run", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> CONFIRM_WITHIN =
      Metadata.Key.of("confirm-within", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> OPERATIONS =
      Metadata.Key.of("dry-run-operations", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> PLAN =
      Metadata.Key.of("dry-run-plan", Metadata.ASCII_STRING_MARSHALLER);

  /** The longest {@code dry-run-plan} header: response headers are limited in size. */
  static final int MAX_PLAN_CHARS = 4000;

  /** The current call's plan once made (null: not a dry run; an empty reference: not yet). */
  private static final Context.Key<AtomicReference<Plan>> PLANNED = Context.key("kvs-dry-run");

  /** Whether the current call asked for a dry run. */
  static boolean requested() {
    return PLANNED.get() != null;
  }

  /** Records the current call's plan, sent in its response headers. */
  static void answer(Plan plan) {
    AtomicReference<Plan> holder = PLANNED.get();
    if (holder != null) {
      holder.set(plan);
    }
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String value = headers.get(DRY_RUN);
    if (value == null) {
      return next.startCall(call, headers);
    }
    boolean dryRun;
    switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "", "true", "1" -> dryRun = true;
      case "false", "0" -> dryRun = false;
      default -> {
        return refuse(
            call,
            "bad value '"
                + value
                + "' of request metadata 'dry-run': accepted are 'true' or '1' (plan, apply"
                + " nothing) and 'false' or '0'");
      }
    }
    if (!dryRun) {
      return next.startCall(call, headers);
    }
    if (headers.get(CONFIRM_WITHIN) != null) {
      return refuse(
          call,
          "request metadata 'dry-run' cannot be combined with 'confirm-within': a dry run"
              + " applies nothing, there is nothing to confirm");
    }
    AtomicReference<Plan> planned = new AtomicReference<>();
    ServerCall<Q, R> wrapped =
        new SimpleForwardingServerCall<>(call) {
          @Override
          public void sendHeaders(Metadata h) {
            Plan plan = planned.get();
            if (plan != null) {
              h.put(OPERATIONS, Integer.toString(plan.size()));
              h.put(PLAN, text(plan));
            }
            super.sendHeaders(h);
          }
        };
    return Contexts.interceptCall(
        Context.current().withValue(PLANNED, planned), wrapped, headers, next);
  }

  private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String message) {
    call.close(Status.INVALID_ARGUMENT.withDescription(message), new Metadata());
    return new ServerCall.Listener<>() {};
  }

  /** The plan as one header value: printable ASCII, cut at {@link #MAX_PLAN_CHARS}. */
  static String text(Plan plan) {
    StringBuilder b = new StringBuilder();
    int shown = 0;
    for (PlannedOperation op : plan.operations()) {
      String one =
          op.operation()
              + " "
              + op.key()
              + " "
              + op.state()
              + (op.details().isEmpty() ? "" : " " + op.details());
      if (b.length() + one.length() + 2 > MAX_PLAN_CHARS) {
        b.append(b.length() > 0 ? "; " : "")
            .append("... (")
            .append(plan.size() - shown)
            .append(" more)");
        break;
      }
      b.append(b.length() > 0 ? "; " : "").append(one);
      shown++;
    }
    StringBuilder ascii = new StringBuilder(b.length());
    for (int i = 0; i < b.length(); i++) {
      char c = b.charAt(i);
      ascii.append(c >= 0x20 && c < 0x7f ? c : '?');
    }
    return ascii.toString();
  }
}
