package io.kvscheduler.agent.internal.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.TxnType;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A record's failed Retrieves in the {@code txn-history} JSON. */
class TxnHistoryJsonTest {
  private static RecordedTxn resync(List<RetrieveError> errors) {
    Instant t = Instant.parse("2026-01-02T03:04:05Z");
    return new RecordedTxn(
        7,
        TxnType.NB_TRANSACTION,
        ResyncType.DOWNSTREAM,
        "",
        0,
        0,
        t,
        t,
        List.of(),
        false,
        List.of(),
        List.of(),
        errors);
  }

  @Test
  @DisplayName("a resync whose Retrieve failed lists the descriptor and its error; others do not")
  void retrieveErrors() {
    SchedulerJson json = new SchedulerJson(null, null, ZoneOffset.UTC);

    Map<String, Object> failed =
        json.txn(resync(List.of(new RetrieveError("linux-interface", "netlink: busy"))));
    Map<String, Object> fine = json.txn(resync(List.of()));

    assertThat(failed.get("RetrieveErrors"))
        .isEqualTo(List.of(Map.of("Descriptor", "linux-interface", "Error", "netlink: busy")));
    assertThat(fine).doesNotContainKey("RetrieveErrors");
  }
}
