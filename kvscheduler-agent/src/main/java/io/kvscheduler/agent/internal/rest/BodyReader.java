package io.kvscheduler.agent.internal.rest;

import io.javalin.http.Context;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads request bodies within the server's {@link RestLimits}: a body larger than {@link
 * RestLimits#maxBodyBytes} gets 413 (before it is read when the request says its length), one
 * arriving slower than {@link #MIN_DATA_RATE} gets 408, and the bodies held at once are bounded
 * ({@link RestLimits#bodyBytesInFlight}, {@link RestLimits#bodyReaders}: 503 with {@code
 * Retry-After} beyond, before the body is read). Each refusal closes the connection.
 */
final class BodyReader {
  // the server's logger: its refusals are the server's
  private static final Logger LOG = LoggerFactory.getLogger(RestServer.class);

  /** Slowest accepted upload of a request body, in bytes per second (a slow-client limit). */
  static final long MIN_DATA_RATE = 1024;

  /** Longest wait of a request for a slot of {@link RestLimits#bodyReaders} before its 503. */
  static final Duration READER_WAIT = Duration.ofMillis(100);

  /** Time a body may take before {@link #MIN_DATA_RATE} applies. */
  static final Duration RATE_GRACE = Duration.ofSeconds(5);

  private final RestLimits limits;

  /** Bytes of request bodies being read or held by their handlers. */
  private final AtomicLong bodyBytes = new AtomicLong();

  private final Semaphore bodyReaders;

  BodyReader(RestLimits limits) {
    this.limits = limits;
    this.bodyReaders = new Semaphore(limits.bodyReaders());
  }

  /** Gives back the bytes counted for a body once its handler is done with it. */
  void release(long[] held) {
    bodyBytes.addAndGet(-held[0]);
  }

  /**
   * Counts {@code n} more bytes of a body of which {@code held[0]} are counted already, within
   * {@link RestLimits#bodyBytesInFlight} (a body alone is always admitted); false when they would
   * go beyond it.
   */
  private boolean reserve(long n, long[] held) {
    while (true) {
      long all = bodyBytes.get();
      if (all - held[0] > 0 && all + n > limits.bodyBytesInFlight()) {
        return false;
      }
      if (bodyBytes.compareAndSet(all, all + n)) {
        held[0] += n;
        return true;
      }
    }
  }

  /** 503 with {@code Retry-After}: the body is not read and its connection is closed. */
  private static Response busy(Context ctx, String message) {
    LOG.warn("REST {} {}: {}", ctx.method(), ctx.path(), message);
    ctx.header("Retry-After", "1");
    ctx.header("Connection", "close");
    return Response.error(503, message + "; send it again later");
  }

  /** Thrown while a chunked body is read when it grows beyond the bytes in flight allowed. */
  private static final class OverBudget extends RuntimeException {
    OverBudget() {
      super(null, null, false, false);
    }
  }

  /**
   * Reads the request body within {@link RestLimits#maxBodyBytes}: the bytes, or the refusal to
   * answer instead (413, 408 or 503). The bytes it holds are counted in {@code held[0]} until
   * {@link #release} is called with it, after the handler.
   */
  Object read(Context ctx, long[] held) throws IOException {
    long max = limits.maxBodyBytes();
    long declared = ctx.req().getContentLengthLong();
    String size;
    if (declared > max) {
      size = declared + " bytes";
    } else if (declared == 0) {
      return new byte[0];
    } else {
      if (declared > 0 && !reserve(declared, held)) {
        return busy(ctx, inFlightMessage(declared + " bytes"));
      }
      InputStream in = ctx.req().getInputStream();
      // a body that has arrived whole is read at once, without a reader's slot
      boolean slot = declared <= 0 || in.available() < declared;
      if (slot && !awaitReader()) {
        in.close();
        return busy(
            ctx,
            "request body not read: "
                + limits.bodyReaders()
                + " requests are receiving their bodies already (the limit)");
      }
      byte[] body;
      try (in) {
        body =
            readAtMinimumRate(
                in,
                (int) Math.min(max + 1, Integer.MAX_VALUE - 8),
                declared,
                declared >= 0
                    ? n -> {}
                    : n -> {
                      if (!reserve(n, held)) {
                        throw new OverBudget();
                      }
                    });
      } catch (OverBudget e) {
        return busy(ctx, inFlightMessage("more than " + held[0] + " bytes"));
      } finally {
        if (slot) {
          bodyReaders.release();
        }
      }
      if (body == null) {
        LOG.warn(
            "REST {} {}: request body arrives slower than {} bytes per second; its"
                + " connection is closed",
            ctx.method(),
            ctx.path(),
            MIN_DATA_RATE);
        ctx.header("Connection", "close");
        return Response.error(
            408, "request body arrives slower than " + MIN_DATA_RATE + " bytes per second");
      }
      if (body.length <= max) {
        return body;
      }
      size = "more than " + max + " bytes";
    }
    LOG.warn(
        "REST {} {}: request body too large ({}, limit {} bytes)",
        ctx.method(),
        ctx.path(),
        size,
        max);
    ctx.header("Connection", "close");
    return Response.json(413, "request body too large (" + size + ", limit " + max + " bytes)\n");
  }

  /**
   * Takes a slot of {@link RestLimits#bodyReaders}, waiting up to {@link #READER_WAIT} for one (a
   * burst of quick uploads passes; slow ones that hold every slot get their 503 soon).
   */
  private boolean awaitReader() {
    try {
      return bodyReaders.tryAcquire(READER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private String inFlightMessage(String size) {
    return "request body of "
        + size
        + " not read: other request bodies are in flight and with it they would exceed "
        + limits.bodyBytesInFlight()
        + " bytes (the limit)";
  }

  /**
   * Reads up to {@code limit} bytes, or null when they arrive slower than {@link #MIN_DATA_RATE}
   * after a {@link #RATE_GRACE}. The rate is measured from the first read here, not from the
   * request's first byte (as Jetty's own minimum rate is): a small body that arrived long ago,
   * while its request waited for a thread, is read at once and is not slow.
   */
  private static byte[] readAtMinimumRate(
      InputStream in, int limit, long declared, LongConsumer beforeKeeping) throws IOException {
    long start = System.nanoTime();
    ByteArrayOutputStream out =
        new ByteArrayOutputStream((int) Math.max(32, Math.min(declared, Math.min(limit, 1 << 20))));
    byte[] chunk = new byte[64 * 1024];
    long total = 0;
    while (total < limit) {
      int n = in.read(chunk, 0, (int) Math.min(chunk.length, limit - total));
      if (n < 0) {
        break;
      }
      beforeKeeping.accept(n);
      out.write(chunk, 0, n);
      total += n;
      long allowedNanos = RATE_GRACE.toNanos() + total * 1_000_000_000L / MIN_DATA_RATE;
      if (total < limit && System.nanoTime() - start > allowedNanos) {
        return null;
      }
    }
    return out.toByteArray();
  }
}
