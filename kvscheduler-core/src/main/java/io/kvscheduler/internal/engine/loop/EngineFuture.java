package io.kvscheduler.internal.engine.loop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The future of a transaction committed without waiting ({@code commitAsync}), and of the stages
 * chained on it: waiting for it ({@code get}, {@code join}) inside a descriptor callback or an
 * operation listener, while it is not done, fails at once with an {@link IllegalStateException}
 * instead of waiting for ever (the transaction can only run after the one the engine is processing,
 * which waits for the callback).
 */
public final class EngineFuture<T> extends CompletableFuture<T> {
  private final EngineLoop loop;

  public EngineFuture(EngineLoop loop) {
    this.loop = loop;
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new EngineFuture<>(loop);
  }

  @Override
  public T get() throws InterruptedException, ExecutionException {
    refuseWaitInCallback();
    return super.get();
  }

  @Override
  public T get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    refuseWaitInCallback();
    return super.get(timeout, unit);
  }

  @Override
  public T join() {
    refuseWaitInCallback();
    return super.join();
  }

  private void refuseWaitInCallback() {
    if (!isDone() && loop.inCallback()) {
      throw new IllegalStateException(
          "waiting for a transaction inside a descriptor callback or an operation listener would"
              + " wait for ever: the transaction runs only after the one being processed, which"
              + " waits for this callback; chain on the future (thenAccept, whenComplete) instead"
              + " of waiting, or wait outside the callback");
    }
  }
}
