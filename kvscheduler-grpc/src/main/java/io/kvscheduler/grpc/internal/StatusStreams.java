package io.kvscheduler.grpc.internal;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.grpc.proto.generic.Notification;
import io.kvscheduler.grpc.proto.generic.SubscribeResponse;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * The open {@code ManagerService.Subscribe} streams: each follows the scheduler's value-status
 * changes of the selected keys and sends one response per change while its client is ready. Changes
 * wait in a queue of at most {@link #limit} per stream; a client that lets more pile up has its
 * stream ended with {@code RESOURCE_EXHAUSTED} (memory stays bounded).
 */
public final class StatusStreams {
  private final KVScheduler kvs;
  private final Supplier<Map<String, Object>> desired;
  private final int limit;
  private final Executor executor;
  private final Set<Stream> open = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * @param desired the desired values (to put each changed value into its notification)
   * @param limit changes waiting per stream before it is ended
   * @param executor where the changes are sent from (not the scheduler's thread, which reports them
   *     and must not wait for the desired values' lock)
   */
  public StatusStreams(
      KVScheduler kvs, Supplier<Map<String, Object>> desired, int limit, Executor executor) {
    this.kvs = kvs;
    this.desired = desired;
    this.limit = limit;
    this.executor = executor;
  }

  /** The number of open streams. */
  public int streams() {
    return open.size();
  }

  void open(
      KeySelector selector,
      StreamObserver<SubscribeResponse> observer,
      BiFunction<BaseValueStatus, Map<String, Object>, Notification> toNotification) {
    if (closed) {
      observer.onError(
          Status.UNAVAILABLE.withDescription("the agent is stopping").asRuntimeException());
      return;
    }
    ServerCallStreamObserver<SubscribeResponse> call =
        (ServerCallStreamObserver<SubscribeResponse>) observer;
    Stream s = new Stream(call, toNotification);
    call.setOnCancelHandler(s::stop);
    call.setOnReadyHandler(s::drain);
    open.add(s);
    s.attach(kvs.watchValueStatus(selector, s::offer));
    call.request(1); // the request message was read; nothing more comes from the client
  }

  /** Ends every stream (the agent stops). */
  public void close() {
    closed = true;
    for (Stream s : open) {
      s.end(Status.UNAVAILABLE.withDescription("the agent is stopping"));
    }
  }

  private final class Stream {
    private final ServerCallStreamObserver<SubscribeResponse> call;
    private final BiFunction<BaseValueStatus, Map<String, Object>, Notification> toNotification;
    private final ArrayDeque<BaseValueStatus> queue = new ArrayDeque<>();
    private final AtomicBoolean drainQueued = new AtomicBoolean();
    private volatile Subscription subscription;
    private boolean ended;

    Stream(
        ServerCallStreamObserver<SubscribeResponse> call,
        BiFunction<BaseValueStatus, Map<String, Object>, Notification> toNotification) {
      this.call = call;
      this.toNotification = toNotification;
    }

    synchronized void attach(Subscription sub) {
      if (ended) {
        sub.close();
      } else {
        subscription = sub;
      }
    }

    void offer(BaseValueStatus status) {
      boolean over;
      synchronized (this) {
        if (ended || queue.size() > limit) {
          return;
        }
        queue.add(status);
        over = queue.size() > limit;
      }
      if (over) {
        executor.execute(
            () ->
                end(
                    Status.RESOURCE_EXHAUSTED.withDescription(
                        "the client does"
                            + " not read the stream: more than "
                            + limit
                            + " status changes are waiting")));
        return;
      }
      // one drain waiting at most: a burst of changes does not become a burst of tasks (each a
      // thread of the executor, waiting for this stream's lock)
      if (drainQueued.compareAndSet(false, true)) {
        executor.execute(
            () -> {
              drainQueued.set(false);
              drain();
            });
      }
    }

    synchronized void drain() {
      Map<String, Object> values = null;
      while (!ended && !queue.isEmpty() && call.isReady() && !call.isCancelled()) {
        if (values == null) {
          values = desired.get();
        }
        BaseValueStatus s = queue.poll();
        call.onNext(
            SubscribeResponse.newBuilder()
                .addNotifications(toNotification.apply(s, values))
                .build());
      }
    }

    synchronized void end(Status status) {
      if (ended) {
        return;
      }
      stop();
      if (!call.isCancelled()) {
        call.onError(status.asRuntimeException());
      }
    }

    synchronized void stop() {
      ended = true;
      queue.clear();
      open.remove(this);
      if (subscription != null) {
        subscription.close();
      }
    }
  }
}
