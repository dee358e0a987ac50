/**
 * The KV Scheduler engine. Only {@code io.kvscheduler.api} is exported; everything under {@code
 * io.kvscheduler.internal} is implementation and may change at any time.
 */
module io.kvscheduler.core {
  requires org.slf4j;
  requires org.pcollections;

  exports io.kvscheduler.api;
}
