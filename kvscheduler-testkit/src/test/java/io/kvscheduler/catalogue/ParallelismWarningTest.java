package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVSchedulerBuilder;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A scheduler built with {@code parallelism(n)} whose descriptors all keep {@code maxConcurrency} 1
 * says so once: the setting is easy to think effective when it hardly is.
 */
class ParallelismWarningTest {

  private static KVDescriptor<String, Void> descriptor(String name, int maxConcurrency) {
    return KVDescriptor.builder(name, String.class)
        .nbKeyPrefix("config/" + name + "/")
        .create((key, value) -> null)
        .delete((key, value, meta) -> {})
        .maxConcurrency(maxConcurrency)
        .build();
  }

  /** The warnings logged while {@code registrations} register their groups on a new scheduler. */
  private static List<String> warnings(
      UnaryOperator<KVSchedulerBuilder> settings, List<List<KVDescriptor<?, ?>>> registrations) {
    Logger log = (Logger) LoggerFactory.getLogger("io.kvscheduler.internal.engine");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    log.addAppender(appender);
    try (KVScheduler kvs = settings.apply(KVScheduler.builder().printTxnSummary(false)).build()) {
      for (List<KVDescriptor<?, ?>> group : registrations) {
        kvs.registerDescriptors(group.toArray(KVDescriptor<?, ?>[]::new));
      }
    } finally {
      log.detachAppender(appender);
    }
    return appender.list.stream()
        .filter(e -> e.getLevel() == Level.WARN)
        .map(ILoggingEvent::getFormattedMessage)
        .filter(m -> m.contains("parallelism"))
        .toList();
  }

  @Test
  @DisplayName("parallelism 4 with no descriptor opting in: one warning naming the count")
  void warnsOnce() {
    List<String> w =
        warnings(
            b -> b.parallelism(4),
            List.of(List.of(descriptor("a", 1), descriptor("b", 1)), List.of(descriptor("c", 1))));
    assertThat(w)
        .singleElement()
        .asString()
        .contains("parallelism is 4", "none of the 2 registered descriptors", "maxConcurrency");
  }

  @Test
  @DisplayName("no warning when a descriptor opts in, or without parallelism")
  void quietOtherwise() {
    assertThat(warnings(b -> b.parallelism(4), List.of(List.of(descriptor("a", 2))))).isEmpty();
    assertThat(warnings(b -> b, List.of(List.of(descriptor("a", 1))))).isEmpty();
  }
}
