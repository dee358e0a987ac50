package io.kvscheduler.agent.internal.rest;

/** A client mistake: 400 (or {@link #status}) {@code {"Error": message}}, thrown by a handler. */
public final class BadRequest extends RuntimeException {
  private final int status;

  public BadRequest(String message) {
    this(400, message);
  }

  public BadRequest(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  public int status() {
    return status;
  }
}
