package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.internal.northbound.NorthboundProblems.Problem;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The registry's rules: one problem per source and subject, {@code since} kept while it stays. */
class NorthboundProblemsRegistryTest {
  /** A clock the test moves. */
  static final class Manual extends Clock {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }

  @Test
  @DisplayName(
      "a problem reported again keeps its since, even with another message; replace clears the"
          + " subjects left out; listeners hear each change once")
  void sinceIsKeptWhileTheProblemStays() {
    Manual clock = new Manual();
    NorthboundProblems r = new NorthboundProblems(clock);
    AtomicInteger changes = new AtomicInteger();
    r.listen(changes::incrementAndGet);
    Instant first = clock.now;
    r.replace("file", List.of(Problem.of("file", "a.yaml", null, 3, 5, "bad")));
    clock.now = first.plusSeconds(10);
    r.replace("file", List.of(Problem.of("file", "a.yaml", null, 3, 5, "bad")));
    assertThat(changes.get()).isEqualTo(1); // the same again is no change
    r.replace(
        "file",
        List.of(
            Problem.of("file", "a.yaml", null, 4, 1, "worse"),
            Problem.of("file", "b.yaml", null, 0, 0, "dangling")));
    assertThat(r.list()).extracting(Problem::subject).containsExactly("a.yaml", "b.yaml");
    assertThat(r.list().get(0).since()).isEqualTo(first);
    assertThat(r.list().get(0).message()).isEqualTo("worse");
    assertThat(r.list().get(1).since()).isEqualTo(first.plusSeconds(10));
    assertThat(r.json().get(0))
        .containsEntry("source", "file")
        .containsEntry("file", "a.yaml")
        .containsEntry("line", 4)
        .containsEntry("column", 1)
        .containsEntry("since", first.toString())
        .doesNotContainKeys("key", "kept_values");
    assertThat(r.json().get(1)).doesNotContainKeys("line", "column");

    r.report(Problem.of("etcd", null, "config/x", 0, 0, "malformed").keeping(Set.of("config/x")));
    assertThat(r.count("etcd")).isEqualTo(1);
    assertThat(r.note("config/x")).contains("etcd", "restart");
    assertThat(r.json().get(0)).containsEntry("key", "config/x").containsEntry("kept_values", 1);

    r.replace("file", List.of(Problem.of("file", "b.yaml", null, 0, 0, "dangling")));
    assertThat(r.count("file")).isEqualTo(1);
    r.clear("etcd", "config/x");
    assertThat(r.note("config/x")).isNull();
    assertThat(r.list()).extracting(Problem::subject).containsExactly("b.yaml");
    int before = changes.get();
    r.clear("etcd", "config/x");
    assertThat(changes.get()).isEqualTo(before);
  }
}
