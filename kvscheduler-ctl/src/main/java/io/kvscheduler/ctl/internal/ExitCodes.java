package io.kvscheduler.ctl.internal;

/** The exit codes of kvsctl (listed in docs/operating.md and in {@code kvsctl --help}). */
public final class ExitCodes {
  private ExitCodes() {}

  /** The command did what was asked. */
  public static final int OK = 0;

  /** The agent (or etcd) answered with an error, or a local file could not be read or written. */
  public static final int FAILED = 1;

  /** Bad command line: unknown command or option, missing or malformed argument. */
  public static final int USAGE = 2;

  /** The agent (or etcd) could not be reached. */
  public static final int UNREACHABLE = 3;

  /** The agent refused the request: no token, a wrong token (401) or a read-only agent (403). */
  public static final int REFUSED = 4;

  /** The configuration given to {@code config put} is invalid (named line and cause). */
  public static final int INVALID_CONFIG = 5;
}
