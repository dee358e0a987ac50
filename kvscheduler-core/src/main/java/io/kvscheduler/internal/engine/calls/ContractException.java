package io.kvscheduler.internal.engine.calls;

/**
 * A descriptor callback answered something its contract forbids (for example metadata of another
 * class than the descriptor declares). Never retriable: calling again would not change the answer,
 * and the southbound may already hold what the call did.
 */
public final class ContractException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public ContractException(String message) {
    super(message);
  }
}
