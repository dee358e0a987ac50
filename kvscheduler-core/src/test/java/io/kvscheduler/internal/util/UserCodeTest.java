package io.kvscheduler.internal.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Throwables from user code: kept when readable, replaced when not, fatal errors rethrown. */
class UserCodeTest {

  /** An exception whose message cannot be read. */
  private static final class NoMessage extends RuntimeException {
    @Override
    public String getMessage() {
      throw new IllegalStateException("no message");
    }
  }

  /** An exception that claims to be its own cause. */
  private static final class OwnCause extends RuntimeException {
    OwnCause() {
      super("loop");
    }

    @Override
    public synchronized Throwable getCause() {
      return this;
    }
  }

  @Test
  @DisplayName("a readable throwable, its causes and suppressed ones included, is kept as it is")
  void readableIsKept() {
    RuntimeException t = new RuntimeException("outer", new IllegalStateException("inner"));
    t.addSuppressed(new IllegalArgumentException("suppressed"));
    assertThat(UserCode.contained(t)).isSameAs(t);
    OwnCause loop = new OwnCause();
    assertThat(UserCode.contained(loop)).isSameAs(loop);
    AssertionError error = new AssertionError("a test's failure");
    assertThat(UserCode.contained(error)).isSameAs(error);
  }

  @Test
  @DisplayName(
      "a throwable with an unreadable message, cause or suppressed one is replaced by one naming its class")
  void unreadableIsReplaced() {
    for (Throwable t :
        new Throwable[] {
          new NoMessage(),
          new RuntimeException("outer", new NoMessage()),
          suppressing(new NoMessage())
        }) {
      Throwable c = UserCode.contained(t);
      assertThat(c).isInstanceOf(UserCode.Unreadable.class).hasNoCause();
      assertThat(c.getMessage())
          .isEqualTo(t.getClass().getName() + " (its message or cause could not be read)");
    }
  }

  @Test
  @DisplayName("fatal errors of the JVM are rethrown; a stack overflow is not fatal")
  void fatalErrorsAreRethrown() {
    OutOfMemoryError oom = new OutOfMemoryError("heap");
    assertThatThrownBy(() -> UserCode.contained(oom)).isSameAs(oom);
    StackOverflowError so = new StackOverflowError();
    assertThat(UserCode.contained(so)).isSameAs(so);
  }

  private static Throwable suppressing(Throwable s) {
    RuntimeException t = new RuntimeException("outer");
    t.addSuppressed(s);
    return t;
  }
}
