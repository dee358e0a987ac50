package io.kvscheduler.grpc.internal;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.grpc.proto.configurator.Notification;
import io.kvscheduler.grpc.proto.configurator.NotifyRequest;
import io.kvscheduler.grpc.proto.configurator.NotifyResponse;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The notifications of {@code ConfiguratorService.Notify}: a ring buffer of the last {@link
 * #capacity} notifications, numbered from 0, and the open streams. A stream first replays the
 * buffered notifications from the index it asks for, then follows new ones. Each stream keeps only
 * a position in the buffer and sends while its client is ready to receive: a client that reads
 * slowly holds no memory of its own; if it falls behind the buffer's oldest notification it
 * continues from the oldest one still buffered.
 */
public final class NotificationBuffer {
  private final int capacity;
  private final Notification[] ring;
  private long next; // index of the next notification published
  private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  public NotificationBuffer(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    this.capacity = capacity;
    this.ring = new Notification[capacity];
  }

  /** Appends a notification and sends it to the streams whose filters match it. */
  public void publish(Notification n) {
    synchronized (this) {
      ring[(int) (next % capacity)] = n;
      next++;
    }
    streams.forEach(Stream::drain);
  }

  /** The index the next notification will have. */
  public synchronized long nextIndex() {
    return next;
  }

  /** The number of open streams. */
  public int streams() {
    return streams.size();
  }

  /** A buffered notification and its index. */
  private record Kept(long index, Notification notification) {}

  /** The notification at {@code idx} or, when it left the buffer, the oldest kept; null if none. */
  private synchronized Kept at(long idx) {
    if (idx >= next) {
      return null;
    }
    long oldest = Math.max(0, next - capacity);
    long i = Math.max(idx, oldest);
    return new Kept(i, ring[(int) (i % capacity)]);
  }

  /** Opens a stream for {@code request}. */
  void open(NotifyRequest request, StreamObserver<NotifyResponse> observer) {
    if (closed) {
      observer.onError(
          Status.UNAVAILABLE.withDescription("the agent is stopping").asRuntimeException());
      return;
    }
    ServerCallStreamObserver<NotifyResponse> call =
        (ServerCallStreamObserver<NotifyResponse>) observer;
    Stream s = new Stream(call, Integer.toUnsignedLong(request.getIdx()), request.getFiltersList());
    call.setOnCancelHandler(() -> streams.remove(s));
    call.setOnReadyHandler(s::drain);
    streams.add(s);
    s.drain();
  }

  /** Ends every open stream (the agent stops). */
  public void close() {
    closed = true;
    for (Stream s : streams) {
      s.end();
    }
    streams.clear();
  }

  private final class Stream {
    private final ServerCallStreamObserver<NotifyResponse> call;
    private final List<Notification> filters;
    private long cursor;
    private boolean ended;

    Stream(ServerCallStreamObserver<NotifyResponse> call, long from, List<Notification> filters) {
      this.call = call;
      this.cursor = from;
      this.filters = filters;
    }

    synchronized void drain() {
      while (!ended && !call.isCancelled() && call.isReady()) {
        Kept found = at(cursor);
        if (found == null) {
          return;
        }
        Notification n = found.notification();
        cursor = found.index() + 1;
        if (matches(n)) {
          call.onNext(
              NotifyResponse.newBuilder().setNextIdx((int) cursor).setNotification(n).build());
        }
      }
    }

    private boolean matches(Notification n) {
      if (filters.isEmpty()) {
        return true;
      }
      for (Notification f : filters) {
        if (n.toBuilder().mergeFrom(f).build().equals(n)) {
          return true;
        }
      }
      return false;
    }

    synchronized void end() {
      if (!ended && !call.isCancelled()) {
        ended = true;
        call.onError(
            Status.UNAVAILABLE.withDescription("the agent is stopping").asRuntimeException());
      }
    }
  }
}
