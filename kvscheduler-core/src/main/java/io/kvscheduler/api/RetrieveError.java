package io.kvscheduler.api;

import java.util.Objects;

/**
 * A descriptor whose Retrieve failed during a resync's refresh: what the southbound holds for its
 * values could not be read, so the resync confirms none of them (they fail as {@link
 * KeyError.Kind#UNREAD} and are read again by the next transaction).
 *
 * @param descriptor the descriptor's name
 * @param message the error Retrieve failed with
 */
public record RetrieveError(String descriptor, String message) {
  public RetrieveError {
    Objects.requireNonNull(descriptor, "descriptor");
    Objects.requireNonNull(message, "message");
  }

  @Override
  public String toString() {
    return "descriptor " + descriptor + ": Retrieve failed: " + message;
  }
}
