package io.kvscheduler.ctl.internal;

/** A failure of a kvsctl command: the message for the user and the process exit code. */
public final class CtlException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;

  public CtlException(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public CtlException(int exitCode, String message, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  /** One of {@link ExitCodes}. */
  public int exitCode() {
    return exitCode;
  }
}
