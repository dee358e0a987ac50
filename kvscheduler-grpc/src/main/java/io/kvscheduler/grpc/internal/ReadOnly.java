package io.kvscheduler.grpc.internal;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.generic.ManagerServiceGrpc;
import io.kvscheduler.grpc.proto.generic.MetaServiceGrpc;
import java.util.Set;

/**
 * Refuses, with {@code PERMISSION_DENIED} naming the flag, every call that is not known to only
 * read: {@code ConfiguratorService.Update} and {@code Delete}, {@code ManagerService.SetConfig},
 * and any method not listed here (a method added later is refused until it is known to read).
 * Allowed: {@code ConfiguratorService} {@code Get}, {@code Dump}, {@code Notify}; {@code
 * ManagerService} {@code GetConfig}, {@code DumpState}, {@code Subscribe}; {@code MetaService};
 * server reflection.
 */
public final class ReadOnly implements ServerInterceptor {
  private static final Set<String> READS =
      Set.of(
          ConfiguratorServiceGrpc.getGetMethod().getFullMethodName(),
          ConfiguratorServiceGrpc.getDumpMethod().getFullMethodName(),
          ConfiguratorServiceGrpc.getNotifyMethod().getFullMethodName(),
          ManagerServiceGrpc.getGetConfigMethod().getFullMethodName(),
          ManagerServiceGrpc.getDumpStateMethod().getFullMethodName(),
          ManagerServiceGrpc.getSubscribeMethod().getFullMethodName(),
          MetaServiceGrpc.getKnownModelsMethod().getFullMethodName(),
          MetaServiceGrpc.getProtoFileDescriptorMethod().getFullMethodName(),
          ServerReflectionGrpc.getServerReflectionInfoMethod().getFullMethodName(),
          io.grpc.reflection.v1alpha.ServerReflectionGrpc.getServerReflectionInfoMethod()
              .getFullMethodName());

  /** Whether {@code fullMethodName} is allowed in read-only mode. */
  public static boolean reads(String fullMethodName) {
    return READS.contains(fullMethodName);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (!reads(method)) {
      call.close(
          Status.PERMISSION_DENIED.withDescription(
              method
                  + " is refused: the agent is read-only (--read-only, or --rest-read-only);"
                  + " only reads are served"),
          new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }
}
