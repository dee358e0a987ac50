package io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls;

/**
 * A failure reported by the route southbound. {@link #temporary()} tells whether repeating the same
 * call may succeed (e.g. the southbound was busy) — what the descriptor's {@code
 * isRetriableFailure} reports to the scheduler.
 */
public final class RouteSbException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final boolean temporary;

  public RouteSbException(String message, boolean temporary) {
    super(message);
    this.temporary = temporary;
  }

  /** Whether the same call may succeed when repeated. */
  public boolean temporary() {
    return temporary;
  }
}
