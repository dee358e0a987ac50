package io.kvscheduler.ctl.internal;

import io.kvscheduler.agent.internal.etcd.EtcdClients;
import java.util.concurrent.TimeoutException;

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

  /**
   * The agent refused the request: no token, a wrong token (401) or a read-only agent (403); or
   * etcd refused the user: authentication failed or no permission on the keys.
   */
  public static final int REFUSED = 4;

  /** The configuration given to {@code config put} is invalid (named line and cause). */
  public static final int INVALID_CONFIG = 5;

  /**
   * The exit code for a failed exchange with etcd: {@link #UNREACHABLE} when etcd did not answer,
   * {@link #REFUSED} when it refused the user, else {@link #FAILED}.
   */
  public static int ofEtcdFailure(Throwable failure) {
    Throwable c = EtcdClients.unwrap(failure);
    if (c instanceof TimeoutException || String.valueOf(c.getMessage()).contains("UNAVAILABLE")) {
      return UNREACHABLE;
    }
    return EtcdClients.refused(c) ? REFUSED : FAILED;
  }
}
