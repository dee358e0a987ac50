package io.kvscheduler.agent.internal.metrics;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * Reports every gRPC request once, when it ends, with its full method name and status code: the
 * code the server closed it with, or {@code CANCELLED} when the client went away first. Registered
 * for all services, it sees the requests refused before a service runs (a missing token) too.
 */
public final class GrpcRequestCounter implements ServerInterceptor {
  private final BiConsumer<String, String> ended;

  /**
   * @param ended called with the method's full name and the status code's name
   */
  public GrpcRequestCounter(BiConsumer<String, String> ended) {
    this.ended = Objects.requireNonNull(ended, "ended");
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    String rpc = call.getMethodDescriptor().getFullMethodName();
    AtomicBoolean counted = new AtomicBoolean();
    ServerCall<Q, A> counting =
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            if (counted.compareAndSet(false, true)) {
              ended.accept(rpc, status.getCode().name());
            }
            super.close(status, trailers);
          }
        };
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
        next.startCall(counting, headers)) {
      @Override
      public void onCancel() {
        if (counted.compareAndSet(false, true)) {
          ended.accept(rpc, Status.Code.CANCELLED.name());
        }
        super.onCancel();
      }
    };
  }
}
