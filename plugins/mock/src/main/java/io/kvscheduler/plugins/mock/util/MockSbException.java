package io.kvscheduler.plugins.mock.util;

/**
 * A failure reported by the mock southbound (unknown handle, duplicate binding, injected error).
 */
public final class MockSbException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public MockSbException(String message) {
    super(message);
  }
}
