package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A fatal error of the JVM (an {@link OutOfMemoryError}) while the engine processes a transaction
 * reaches the uncaught-exception handler, so that an application that ends on such errors (the
 * agent does) can: the engine thread itself survives it, as it survives every failure.
 */
class FatalErrorTest {
  private final MockSouthbound sb = new MockSouthbound();

  @Test
  @DisplayName("an OutOfMemoryError in the engine goes to the uncaught-exception handler")
  void fatalErrorReachesTheUncaughtExceptionHandler() {
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> reported.add(e));
    try (SchedulerFixture env = CatalogueFixtures.env(false)) {
      KVScheduler kvs = env.kvs();
      kvs.registerDescriptors(
          sb.descriptor("d", String.class)
              .nbKeyPrefix("d/")
              .validate(
                  (key, v) -> {
                    if (v.equals("oom")) {
                      throw new OutOfMemoryError("thrown by the test");
                    }
                  })
              .build());
      assertThatThrownBy(() -> kvs.startNBTransaction().setValue("d/a", "oom").commit())
          .isInstanceOf(OutOfMemoryError.class);
      assertThat(reported).singleElement().isInstanceOf(OutOfMemoryError.class);

      // the engine goes on
      kvs.startNBTransaction().setValue("d/b", "fine").commit();
      assertThat(sb.keys()).contains("d/b");
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(before);
    }
  }
}
