package io.kvscheduler.api;

/** A registration that can be cancelled. Closing twice is harmless. */
public interface Subscription extends AutoCloseable {
  @Override
  void close();
}
