package io.kvscheduler.agent.spi;

/**
 * A request about confirmed commits that does not fit the one pending (or its absence): a second
 * commit while one is pending, a delivery of the pending commit's source, a confirmation or
 * rollback with nothing pending. Nothing of the request was applied. REST answers 409, gRPC {@code
 * FAILED_PRECONDITION}.
 */
public final class ConfirmationConflictException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ConfirmationConflictException(String message) {
    super(message, null, false, false);
  }
}
