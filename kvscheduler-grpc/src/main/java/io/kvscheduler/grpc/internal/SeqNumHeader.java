package io.kvscheduler.grpc.internal;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Adds the response header {@code seqnum} (the transaction's sequence number) to calls whose
 * handler recorded one with {@link #record}; in the trailers when the call ends with an error
 * before any header was sent.
 */
public final class SeqNumHeader implements ServerInterceptor {
  static final Metadata.Key<String> SEQNUM =
      Metadata.Key.of("seqnum", Metadata.ASCII_STRING_MARSHALLER);
  private static final Context.Key<AtomicLong> SEQ = Context.key("kvs-seqnum");

  /** Records the sequence number of the current call's transaction. */
  static void record(long seqNum) {
    AtomicLong holder = SEQ.get();
    if (holder != null) {
      holder.set(seqNum);
    }
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    AtomicLong seq = new AtomicLong(-1);
    ServerCall<Q, R> wrapped =
        new SimpleForwardingServerCall<>(call) {
          private boolean headersSent;

          @Override
          public void sendHeaders(Metadata h) {
            add(h);
            headersSent = true;
            super.sendHeaders(h);
          }

          @Override
          public void close(Status status, Metadata trailers) {
            if (!headersSent) {
              add(trailers);
            }
            super.close(status, trailers);
          }

          private void add(Metadata m) {
            if (seq.get() >= 0) {
              m.put(SEQNUM, Long.toString(seq.get()));
            }
          }
        };
    return Contexts.interceptCall(Context.current().withValue(SEQ, seq), wrapped, headers, next);
  }
}
