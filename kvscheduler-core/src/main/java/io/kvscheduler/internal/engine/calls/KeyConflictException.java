package io.kvscheduler.internal.engine.calls;

/**
 * A value that would take a key another value holds: a derived value whose key holds a value not
 * derived from the same base, or a northbound value for a key that holds a derived value. Nothing
 * is done for it; the value holding the key keeps it. Reported as a key error of kind CONFLICT,
 * naming both keys.
 */
public final class KeyConflictException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public KeyConflictException(String message) {
    super(message, null, false, false);
  }
}
