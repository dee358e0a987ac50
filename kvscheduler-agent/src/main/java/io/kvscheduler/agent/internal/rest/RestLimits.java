package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.agent.internal.format.ConfigDocument;
import java.time.Duration;

/**
 * How much the server serves at once and how long and how large a request may be.
 *
 * @param threads requests served at the same time (each waits for its transaction)
 * @param queue connections waiting to be accepted (the listen backlog); requests that arrive while
 *     every thread is busy wait in Jetty's queue until one is free
 * @param ioTimeout how long a connection may stay idle: a request whose bytes stop arriving, or
 *     whose response is not taken, for this long has its connection closed
 * @param maxBodyBytes largest request body; a larger one gets 413
 * @param bodyBytesInFlight request body bytes held at once by all requests together: a body that
 *     would go beyond it gets 503 with {@code Retry-After} (a body alone is always admitted, up to
 *     {@link #maxBodyBytes})
 * @param bodyReaders requests receiving their bodies at the same time (a body that has arrived
 *     whole needs no slot): one more waits up to {@link BodyReader#READER_WAIT} for a slot, then
 *     gets 503 with {@code Retry-After}, so that slow uploads hold at most this many threads and
 *     reads always find one
 * @param eventClients server-sent event streams open at once; one more gets 503
 * @param headerTimeout longest time from a connection's first byte of a request to the end of its
 *     headers (and from the connection's opening to its first byte): a slower connection is closed
 */
public record RestLimits(
    int threads,
    int queue,
    Duration ioTimeout,
    long maxBodyBytes,
    long bodyBytesInFlight,
    int bodyReaders,
    int eventClients,
    Duration headerTimeout) {
  /**
   * 32 threads, a backlog of 256, 60 s idle at most, bodies up to {@link
   * ConfigDocument#MAX_CODE_POINTS} bytes (256 MiB), 64 MiB of bodies in flight, 8 requests reading
   * bodies, 64 event streams, 10 s for request headers.
   */
  public static final RestLimits DEFAULT =
      new RestLimits(32, 256, Duration.ofSeconds(60), ConfigDocument.MAX_CODE_POINTS);

  public RestLimits {
    if (threads < 1
        || queue < 0
        || ioTimeout.isNegative()
        || ioTimeout.isZero()
        || maxBodyBytes < 0
        || bodyBytesInFlight < 0
        || bodyReaders < 1
        || eventClients < 0
        || headerTimeout.isNegative()
        || headerTimeout.isZero()) {
      throw new IllegalArgumentException(
          "REST limits: threads "
              + threads
              + ", queue "
              + queue
              + ", I/O timeout "
              + ioTimeout
              + ", body limit "
              + maxBodyBytes
              + ", body bytes in flight "
              + bodyBytesInFlight
              + ", body readers "
              + bodyReaders
              + ", event clients "
              + eventClients
              + ", header timeout "
              + headerTimeout
              + " (threads, body readers and the timeouts must be positive, the rest not"
              + " negative)");
    }
  }

  /**
   * Limits with these four and the defaults of the others: 64 MiB of bodies in flight, a quarter of
   * the threads (at least one) reading bodies, 64 event streams, 10 s for request headers.
   */
  public RestLimits(int threads, int queue, Duration ioTimeout, long maxBodyBytes) {
    this(
        threads,
        queue,
        ioTimeout,
        maxBodyBytes,
        64L << 20,
        Math.max(1, threads / 4),
        64,
        Duration.ofSeconds(10));
  }

  /** These limits with other bounds on the request bodies read at once. */
  public RestLimits withBodies(long bytesInFlight, int readers) {
    return new RestLimits(
        threads,
        queue,
        ioTimeout,
        maxBodyBytes,
        bytesInFlight,
        readers,
        eventClients,
        headerTimeout);
  }

  /** These limits with another bound on the open event streams. */
  public RestLimits withEventClients(int clients) {
    return new RestLimits(
        threads,
        queue,
        ioTimeout,
        maxBodyBytes,
        bodyBytesInFlight,
        bodyReaders,
        clients,
        headerTimeout);
  }

  /** These limits with another time for request headers. */
  public RestLimits withHeaderTimeout(Duration timeout) {
    return new RestLimits(
        threads,
        queue,
        ioTimeout,
        maxBodyBytes,
        bodyBytesInFlight,
        bodyReaders,
        eventClients,
        timeout);
  }
}
