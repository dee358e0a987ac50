package io.kvscheduler.internal.engine.calls;

/**
 * Carried in a key error when a verifying refresh finds that the southbound does not hold what was
 * applied.
 */
public final class VerificationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public VerificationException(String msg) {
    super(msg);
  }
}
