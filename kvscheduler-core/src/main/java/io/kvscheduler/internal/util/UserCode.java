package io.kvscheduler.internal.util;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Throwables caught from user code, made safe for the engine to keep, show and log.
 *
 * <p>A throwable is user code too: its {@code getMessage}, {@code getCause} or {@code
 * getStackTrace} may be overridden and may throw. Logging one (SLF4J reads all of them, for the
 * whole cause chain) or building an error message from it would then throw out of the catch block
 * that caught it. {@link #contained} checks the chain once, where the throwable enters the engine,
 * and replaces an unreadable one by a plain exception naming its class.
 */
public final class UserCode {
  private UserCode() {}

  /** Causes and suppressed throwables checked, at most. */
  private static final int MAX_CHECKED = 64;

  /**
   * {@code t}, caught from user code, ready to keep and log: rethrown when it is a fatal error of
   * the JVM (a {@link VirtualMachineError} other than {@link StackOverflowError}); replaced by an
   * {@link Unreadable} when a part of it cannot be read.
   */
  public static Throwable contained(Throwable t) {
    rethrowFatal(t);
    return readable(t) ? t : new Unreadable(t);
  }

  /**
   * Hands a fatal error of the JVM (a {@link VirtualMachineError} other than {@link
   * StackOverflowError}: out of memory, say) to the engine thread's uncaught-exception handler, as
   * if it had ended the thread: an application that ends on such errors (the agent does) ends, and
   * does not go on with a scheduler whose transaction stopped halfway. The engine thread itself
   * goes on, for applications that handle such errors otherwise. Called where the engine catches
   * every throwable so as not to die.
   */
  public static void reportIfFatal(Throwable t) {
    if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
      Thread self = Thread.currentThread();
      try {
        self.getUncaughtExceptionHandler().uncaughtException(self, t);
      } catch (Throwable ignored) {
        // a failing handler changes nothing for the engine
      }
    }
  }

  /** Rethrows {@code t} when it is a fatal error of the JVM. */
  public static void rethrowFatal(Throwable t) {
    if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
      throw (VirtualMachineError) t;
    }
  }

  private static boolean readable(Throwable t) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    try {
      return readable(t, seen);
    } catch (Throwable failed) {
      rethrowFatal(failed);
      return false;
    }
  }

  private static boolean readable(Throwable t, Set<Throwable> seen) {
    if (t == null || !seen.add(t)) {
      return true;
    }
    if (seen.size() > MAX_CHECKED) {
      return true; // long chains are unusual; what was read so far is fine
    }
    t.getMessage();
    t.getLocalizedMessage();
    t.getStackTrace();
    for (Throwable s : t.getSuppressed()) {
      if (!readable(s, seen)) {
        return false;
      }
    }
    return readable(t.getCause(), seen);
  }

  /** Stands for a throwable from user code that could not be read; names its class. */
  public static final class Unreadable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unreadable(Throwable original) {
      super(
          original.getClass().getName() + " (its message or cause could not be read)",
          null,
          false,
          false);
    }
  }
}
