package io.kvscheduler.agent.internal.northbound;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Lists the last configuration a gRPC client sent that was refused as invalid ({@code
 * INVALID_ARGUMENT} of {@code SetConfig}, {@code Update} or {@code Delete}) in the northbound
 * problems, as source {@code grpc}; the next accepted one clears it. The client was told too; the
 * problem lets an operator see it without the client's log.
 */
public final class GrpcRejections implements ServerInterceptor {
  /** The methods that change the configuration. */
  static final Set<String> CHANGES =
      Set.of(
          "ligato.generic.ManagerService/SetConfig",
          "ligato.configurator.ConfiguratorService/Update",
          "ligato.configurator.ConfiguratorService/Delete");

  private final NorthboundProblems problems;

  public GrpcRejections(NorthboundProblems problems) {
    this.problems = Objects.requireNonNull(problems, "problems");
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    String rpc = call.getMethodDescriptor().getFullMethodName();
    if (!CHANGES.contains(rpc)) {
      return next.startCall(call, headers);
    }
    ServerCall<Q, A> watched =
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            if (status.isOk()) {
              problems.replace("grpc", List.of());
            } else if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
              String method = rpc.substring(rpc.lastIndexOf('/') + 1);
              problems.replace(
                  "grpc",
                  List.of(
                      NorthboundProblems.Problem.of(
                          "grpc",
                          null,
                          null,
                          0,
                          0,
                          "the last "
                              + method
                              + " was refused: "
                              + (status.getDescription() != null
                                  ? status.getDescription()
                                  : status.getCode().name())
                              + " (nothing of it was applied; the next accepted one clears"
                              + " this)")));
            }
            super.close(status, trailers);
          }
        };
    return next.startCall(watched, headers);
  }
}
