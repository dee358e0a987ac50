package io.kvscheduler.internal.engine.calls;

/**
 * The error of a southbound call the scheduler does not make: a call for the value (or its base)
 * failed in an earlier transaction and no Retrieve has answered since, so what the southbound holds
 * for it is unknown, and a call would start from a guess (a Create over what the failure left, an
 * old value the southbound may not hold). Retriable: the retry reads the key first.
 */
public final class UnreadStateException extends RuntimeException {
  public UnreadStateException(String baseKey) {
    super(
        "what the southbound holds for "
            + baseKey
            + " is unknown: a call for it failed, or a resync could not read it, and no Retrieve"
            + " has answered since; no call is made until it is read (if the southbound holds"
            + " nothing for it, commit a transaction with assumeAbsent(\""
            + baseKey
            + "\"))",
        null,
        false,
        false);
  }
}
