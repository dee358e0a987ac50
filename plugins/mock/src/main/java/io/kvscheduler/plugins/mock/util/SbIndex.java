package io.kvscheduler.plugins.mock.util;

/**
 * Metadata of a value created in the mock southbound: the integer handle the southbound assigned to
 * it (handles count from 0 per kind of object).
 */
public record SbIndex(int index) {
  @Override
  public String toString() {
    return "{index:" + index + "}";
  }
}
