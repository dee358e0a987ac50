package io.kvscheduler.grpc.internal;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.kvscheduler.agent.spi.ConfirmedCommits;

/**
 * Reads the request metadata {@code confirm-within} (our extension: the request's values are a
 * confirmed commit, see {@link ConfirmedCommits}) into the call's context, and whether {@code
 * dry-run} was given with it.
 */
public final class ConfirmWithinHeader implements ServerInterceptor {
  static final Metadata.Key<String> CONFIRM_WITHIN =
      Metadata.Key.of(ConfirmedCommits.PARAMETER, Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> DRY_RUN =
      Metadata.Key.of("dry-run", Metadata.ASCII_STRING_MARSHALLER);

  /** What the metadata said: {@code confirm-within}, and whether {@code dry-run} came too. */
  record Given(String confirmWithin, boolean dryRun) {}

  private static final Context.Key<Given> GIVEN = Context.key("kvs-confirm-within");

  /** The current call's {@code confirm-within}, or null when it gave none. */
  static Given current() {
    return GIVEN.get();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String within = headers.get(CONFIRM_WITHIN);
    if (within == null) {
      return next.startCall(call, headers);
    }
    Given given = new Given(within, headers.containsKey(DRY_RUN));
    return Contexts.interceptCall(Context.current().withValue(GIVEN, given), call, headers, next);
  }
}
