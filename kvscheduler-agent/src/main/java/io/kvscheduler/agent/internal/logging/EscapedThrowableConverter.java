package io.kvscheduler.agent.internal.logging;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import io.kvscheduler.api.Excerpt;

/**
 * {@code %safeex}: the stack trace of a log event as {@code %ex} prints it, with the control
 * characters of every message in it (causes and suppressed ones included) escaped ({@link
 * Excerpt#escaped}): an exception's message often quotes user data.
 */
public final class EscapedThrowableConverter extends ThrowableProxyConverter {
  @Override
  protected String throwableProxyToString(IThrowableProxy tp) {
    return super.throwableProxyToString(new Escaped(tp));
  }

  /** {@code tp} with escaped messages. */
  private record Escaped(IThrowableProxy tp) implements IThrowableProxy {
    @Override
    public String getMessage() {
      return tp.getMessage() == null ? null : Excerpt.escaped(tp.getMessage());
    }

    @Override
    public String getOverridingMessage() {
      return tp.getOverridingMessage() == null ? null : Excerpt.escaped(tp.getOverridingMessage());
    }

    @Override
    public String getClassName() {
      return tp.getClassName();
    }

    @Override
    public StackTraceElementProxy[] getStackTraceElementProxyArray() {
      return tp.getStackTraceElementProxyArray();
    }

    @Override
    public int getCommonFrames() {
      return tp.getCommonFrames();
    }

    @Override
    public IThrowableProxy getCause() {
      return tp.getCause() == null ? null : new Escaped(tp.getCause());
    }

    @Override
    public IThrowableProxy[] getSuppressed() {
      IThrowableProxy[] s = tp.getSuppressed();
      if (s == null) {
        return null;
      }
      IThrowableProxy[] out = new IThrowableProxy[s.length];
      for (int i = 0; i < s.length; i++) {
        out[i] = new Escaped(s[i]);
      }
      return out;
    }

    @Override
    public boolean isCyclic() {
      return tp.isCyclic();
    }
  }
}
