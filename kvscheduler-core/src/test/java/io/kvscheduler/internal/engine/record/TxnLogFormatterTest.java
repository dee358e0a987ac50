package io.kvscheduler.internal.engine.record;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxn.RecordedValue;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

class TxnLogFormatterTest {

  /** Test values are already their text form. */
  private static final Function<Object, String> TEXT = Object::toString;

  /** The agent's hint: its REST address of a record. */
  private static final LongFunction<String> REST =
      seq -> "see /scheduler/txn-history?seq-num=" + seq;

  private static final Instant START = Instant.parse("2024-05-06T10:15:01.123Z");
  private static final Instant STOP = START.plus(Duration.ofNanos(2_100_000));

  private static final String PLUS_RULE = "+" + "=".repeat(118) + "+\n";
  private static final String O_RULE = "o" + "-".repeat(118) + "o\n";
  private static final String X_RULE = "x" + "-".repeat(118) + "x\n";

  // ---------------------------------------------------------------- builders

  private static RecordedTxnOp op(
      TxnOperation operation,
      String key,
      String prev,
      String next,
      ValueState prevState,
      ValueState newState,
      String prevErr,
      String newErr,
      boolean noop,
      boolean derived,
      boolean revert,
      boolean retry) {
    EnumSet<RecordedTxnOp.Flag> flags = EnumSet.noneOf(RecordedTxnOp.Flag.class);
    if (noop) flags.add(RecordedTxnOp.Flag.NOOP);
    if (derived) flags.add(RecordedTxnOp.Flag.DERIVED);
    if (revert) flags.add(RecordedTxnOp.Flag.REVERT);
    if (retry) flags.add(RecordedTxnOp.Flag.RETRY);
    return new RecordedTxnOp(
        operation,
        key,
        Optional.ofNullable(prev),
        Optional.ofNullable(next),
        prevState,
        newState,
        prevErr,
        newErr,
        flags,
        Optional.empty(),
        Optional.empty());
  }

  private static RecordedTxnOp create(String key, String value, boolean derived) {
    return op(
        TxnOperation.CREATE,
        key,
        null,
        value,
        ValueState.NONEXISTENT,
        ValueState.CONFIGURED,
        "",
        "",
        false,
        derived,
        false,
        false);
  }

  private static RecordedTxnOp pendingCreate(String key, String value, boolean derived) {
    return op(
        TxnOperation.CREATE,
        key,
        null,
        value,
        ValueState.NONEXISTENT,
        ValueState.PENDING,
        "",
        "",
        true,
        derived,
        false,
        false);
  }

  private static RecordedValue nb(String key, String value) {
    return new RecordedValue(key, Optional.ofNullable(value), ValueOrigin.FROM_NB);
  }

  private static RecordedValue sb(String key, String value) {
    return new RecordedValue(key, Optional.ofNullable(value), ValueOrigin.FROM_SB);
  }

  private static RecordedTxn txn(
      long seq,
      TxnType type,
      ResyncType resync,
      String description,
      long retryFor,
      int attempt,
      List<RecordedValue> values,
      boolean simulated,
      List<RecordedTxnOp> planned,
      List<RecordedTxnOp> executed) {
    return new RecordedTxn(
        seq,
        type,
        resync,
        description,
        retryFor,
        attempt,
        START,
        STOP,
        values,
        simulated,
        planned,
        executed);
  }

  /** The operations of the first transaction of TestDataChangeTransactions. */
  private static List<RecordedTxnOp> dataChangeOps() {
    return List.of(
        create("/prefixA/base-value1", "items:\"item2\"", false),
        create("/prefixA/base-value1/item2", "value:\"item2\"", true),
        create("/prefixB/base-value2", "items:\"item1\" items:\"item2\"", false),
        create("/prefixB/base-value2/item1", "value:\"item1\"", true),
        pendingCreate("/prefixB/base-value2/item2", "value:\"item2\"", true),
        create("/prefixC/base-value3", "items:\"item1\" items:\"item2\"", false),
        create("/prefixC/base-value3/item1", "value:\"item1\"", true),
        create("/prefixC/base-value3/item2", "value:\"item2\"", true));
  }

  private static RecordedTxn dataChangeTxn() {
    List<RecordedTxnOp> ops = dataChangeOps();
    return txn(
        0,
        TxnType.NB_TRANSACTION,
        ResyncType.NOT_RESYNC,
        "testing data change",
        0,
        0,
        List.of(
            nb("/prefixA/base-value1", "items:\"item2\""),
            nb("/prefixB/base-value2", "items:\"item1\" items:\"item2\""),
            nb("/prefixC/base-value3", "items:\"item1\" items:\"item2\"")),
        true,
        ops,
        ops);
  }

  /** Expected rendering of {@link #dataChangeOps()} (value lines end with one space, as in Go). */
  private static final String DATA_CHANGE_OPS =
      """
            1. CREATE:
                - key: /prefixA/base-value1
                - value: { items:"item2" }\s
            2. CREATE [DERIVED]:
                - key: /prefixA/base-value1/item2
                - value: { value:"item2" }\s
            3. CREATE:
                - key: /prefixB/base-value2
                - value: { items:"item1" items:"item2" }\s
            4. CREATE [DERIVED]:
                - key: /prefixB/base-value2/item1
                - value: { value:"item1" }\s
            5. CREATE [DERIVED NOOP IS-PENDING]:
                - key: /prefixB/base-value2/item2
                - value: { value:"item2" }\s
            6. CREATE:
                - key: /prefixC/base-value3
                - value: { items:"item1" items:"item2" }\s
            7. CREATE [DERIVED]:
                - key: /prefixC/base-value3/item1
                - value: { value:"item1" }\s
            8. CREATE [DERIVED]:
                - key: /prefixC/base-value3/item2
                - value: { value:"item2" }\s
      """;

  // ---------------------------------------------------------------- tests

  @Test
  void longListsAreCutAtTheLimitWithACountAndWhereToSeeTheRest() {
    RecordedTxn t = dataChangeTxn();
    String fin = TxnLogFormatter.finalRecord(t, TEXT, 2, REST);
    assertThat(fin)
        .contains(
            """
              1. CREATE:
                  - key: /prefixA/base-value1
        """)
        .contains(
            """
              2. CREATE [DERIVED]:
                  - key: /prefixA/base-value1/item2
                  - value: { value:"item2" }\s
              … and 6 more (see /scheduler/txn-history?seq-num=0)
        x""")
        .doesNotContain("3. CREATE");
    String pre = TxnLogFormatter.preRecord(t, TEXT, 2, REST);
    assertThat(pre)
        .contains(
            """
                  - key: /prefixB/base-value2
                    val: { items:"item1" items:"item2" }
                  … and 1 more (see /scheduler/txn-history?seq-num=0)
          * planned operations:
        """)
        .doesNotContain("/prefixC/base-value3\n    ")
        .contains("… and 6 more");
    // at or under the limit, and with no limit: everything
    assertThat(TxnLogFormatter.finalRecord(t, TEXT, 8, REST))
        .isEqualTo(TxnLogFormatter.finalRecord(t, TEXT, 0, REST));
    assertThat(TxnLogFormatter.finalRecord(t, TEXT, 0, REST)).doesNotContain("more (see");
  }

  @Test
  void preRecordOfSimulatedNbTransactionListsValuesAndPlannedOperations() {
    String expected =
        PLUS_RULE
            + "| #0 - NBTransaction                                                                    "
            + "                               |\n"
            + PLUS_RULE
            + """
          * transaction arguments:
              - seqNum: 0
              - type: NB Transaction
              - Description: testing data change
              - values:
                  - key: /prefixA/base-value1
                    val: { items:"item2" }
                  - key: /prefixB/base-value2
                    val: { items:"item1" items:"item2" }
                  - key: /prefixC/base-value3
                    val: { items:"item1" items:"item2" }
          * planned operations:
        """
            + DATA_CHANGE_OPS;

    assertThat(TxnLogFormatter.preRecord(dataChangeTxn(), TEXT, 0, REST)).isEqualTo(expected);
  }

  @Test
  void finalRecordListsExecutedOperationsWithMillisecondTimesAndTookDuration() {
    String expected =
        O_RULE
            + "  * executed operations (2024-05-06 10:15:01.123 +0000 UTC -> "
            + "2024-05-06 10:15:01.125 +0000 UTC, dur: 2ms):\n"
            + DATA_CHANGE_OPS
            + X_RULE
            + "| #0 - NBTransaction                                                                    "
            + "                    took 2.1ms |\n"
            + X_RULE;

    assertThat(TxnLogFormatter.finalRecord(dataChangeTxn(), TEXT, 0, REST)).isEqualTo(expected);
  }

  @Test
  void updateOperationsPrintPrevAndNewValuesAndErrorsOfRevert() {
    List<RecordedTxnOp> executed =
        List.of(
            op(
                TxnOperation.UPDATE,
                "/prefixA/base-value1",
                "items:\"item2\"",
                "items:\"item1\"",
                ValueState.CONFIGURED,
                ValueState.FAILED,
                "",
                "failed to modify value",
                false,
                false,
                false,
                false),
            op(
                TxnOperation.UPDATE,
                "/prefixA/base-value1",
                "",
                "items:\"item2\"",
                ValueState.FAILED,
                ValueState.CONFIGURED,
                "failed to modify value",
                "",
                false,
                false,
                true,
                false),
            op(
                TxnOperation.CREATE,
                "/prefixA/base-value1/item2",
                null,
                "value:\"item2\"",
                ValueState.NONEXISTENT,
                ValueState.CONFIGURED,
                "",
                "",
                false,
                true,
                true,
                false));
    RecordedTxn t =
        txn(
            1,
            TxnType.NB_TRANSACTION,
            ResyncType.NOT_RESYNC,
            "",
            0,
            0,
            List.of(nb("/prefixA/base-value1", "items:\"item1\"")),
            false,
            List.of(),
            executed);

    assertThat(TxnLogFormatter.finalRecord(t, TEXT, 0, REST))
        .contains(
            """
              1. UPDATE [FAILED]:
                  - key: /prefixA/base-value1
                  - prev-value: { items:"item2" }\s
                  - new-value: { items:"item1" }\s
                  - error: failed to modify value
              2. UPDATE [REVERT FIXED]:
                  - key: /prefixA/base-value1
                  - prev-value: {  }\s
                  - new-value: { items:"item2" }\s
                  - prev-error: failed to modify value
              3. CREATE [DERIVED REVERT]:
                  - key: /prefixA/base-value1/item2
                  - value: { value:"item2" }\s
        x---""");
  }

  @Test
  void retryTransactionHeaderNamesRetriedTxnAndAttempt() {
    RecordedTxnOp retried =
        op(
            TxnOperation.UPDATE,
            "/prefixA/base-value1",
            "items:\"item2\"",
            "items:\"item1\"",
            ValueState.RETRYING,
            ValueState.CONFIGURED,
            "failed to modify value",
            "",
            false,
            false,
            false,
            true);
    RecordedTxn t =
        txn(
            1,
            TxnType.RETRY_FAILED_OPS,
            ResyncType.NOT_RESYNC,
            "",
            0,
            1,
            List.of(nb("/prefixA/base-value1", "items:\"item1\"")),
            true,
            List.of(retried),
            List.of(retried));

    String expected =
        PLUS_RULE
            + "| #1 - RetryFailedOps                                                               "
            + "retrying failed TXN #0 (attempt 1) |\n"
            + PLUS_RULE
            + """
          * transaction arguments:
              - seqNum: 1
              - type: Retry Transaction (for txn #0, attempt #1)
              - values:
                  - key: /prefixA/base-value1
                    val: { items:"item1" }
          * planned operations:
              1. UPDATE [RETRY]:
                  - key: /prefixA/base-value1
                  - prev-value: { items:"item2" }\s
                  - new-value: { items:"item1" }\s
                  - prev-error: failed to modify value
        """;
    assertThat(TxnLogFormatter.preRecord(t, TEXT, 0, REST)).isEqualTo(expected);
  }

  @Test
  void retryOfUnimplementedOpsUsesItsOwnHeaderAndTypeLine() {
    RecordedTxn t =
        txn(
            4,
            TxnType.RETRY_UNIMPL_OPS,
            ResyncType.NOT_RESYNC,
            "",
            2,
            0,
            List.of(),
            false,
            List.of(),
            List.of());

    String text = TxnLogFormatter.preRecord(t, TEXT, 0, REST);

    assertThat(text.lines().skip(1).findFirst())
        .hasValue("| #4 - RetryUnimplOps" + " ".repeat(68) + "retrying unimplemented TXN #2 |");
    assertThat(text)
        .contains("      - type: RetryUnimplOps (for txn #2)\n")
        .contains("      - values: NONE\n")
        .doesNotContain("planned operations");
  }

  @Test
  void finalRecordWithoutExecutedOperationsPrintsNoneAndNoTimes() {
    RecordedTxn t =
        txn(
            3,
            TxnType.SB_NOTIFICATION,
            ResyncType.NOT_RESYNC,
            "",
            0,
            0,
            List.of(sb("/sb/value", "x:1")),
            false,
            List.of(),
            List.of());

    String expected =
        O_RULE
            + "  * executed operations:\n"
            + "      <NONE>\n"
            + X_RULE
            + "| #3 - SBNotification"
            + " ".repeat(87)
            + "took 2.1ms |\n"
            + X_RULE;
    assertThat(TxnLogFormatter.finalRecord(t, TEXT, 0, REST)).isEqualTo(expected);
    assertThat(TxnLogFormatter.preRecord(t, TEXT, 0, REST))
        .contains("      - type: SB Notification\n")
        .contains("          - key: /sb/value\n            val: { x:1 }\n");
  }

  @Test
  void downstreamResyncPrintsNoValuesAtAll() {
    RecordedTxn t =
        txn(
            5,
            TxnType.NB_TRANSACTION,
            ResyncType.DOWNSTREAM,
            "",
            0,
            0,
            List.of(nb("/a", "a:1"), sb("/b", "b:1")),
            false,
            List.of(),
            List.of());

    String expected =
        PLUS_RULE
            + "| #5 - NBTransaction"
            + " ".repeat(82)
            + "DownstreamResync |\n"
            + PLUS_RULE
            + """
          * transaction arguments:
              - seqNum: 5
              - type: NB Transaction, SB Sync
        """;
    assertThat(TxnLogFormatter.preRecord(t, TEXT, 0, REST)).isEqualTo(expected);
  }

  @Test
  void fullResyncOmitsSbValuesAndPrintsDeletionsAsNil() {
    RecordedTxn t =
        txn(
            0,
            TxnType.NB_TRANSACTION,
            ResyncType.FULL,
            "",
            0,
            0,
            List.of(nb("/a", "a:1"), sb("/b", "b:1"), nb("/c", null)),
            false,
            List.of(),
            List.of());

    String text = TxnLogFormatter.preRecord(t, TEXT, 0, REST);

    assertThat(text.lines().skip(1).findFirst())
        .hasValue("| #0 - NBTransaction" + " ".repeat(88) + "FullResync |");
    assertThat(text)
        .endsWith(
            """
              - type: NB Transaction, Full Resync
              - values:
                  - key: /a
                    val: { a:1 }
                  - key: /c
                    val: <NIL>
        """);
  }

  @Test
  void upstreamResyncWithEmptyValuesAndMultiLineDescription() {
    RecordedTxn t =
        txn(
            2,
            TxnType.NB_TRANSACTION,
            ResyncType.UPSTREAM,
            "first\nsecond",
            0,
            0,
            List.of(),
            true,
            List.of(),
            List.of());

    assertThat(TxnLogFormatter.preRecord(t, TEXT, 0, REST))
        .endsWith(
            """
              - type: NB Transaction, NB Sync
              - Description: first
                  second
              - values: NONE
          * planned operations:
              <NONE>
        """);
  }

  @Test
  void deleteOperationPrintsPreviousValueAndMissingValuesAsNil() {
    List<RecordedTxnOp> executed =
        List.of(
            op(
                TxnOperation.DELETE,
                "/a",
                "a:1",
                null,
                ValueState.CONFIGURED,
                ValueState.REMOVED,
                "",
                "",
                false,
                false,
                false,
                false),
            op(
                TxnOperation.DELETE,
                "/b",
                null,
                null,
                ValueState.REMOVED,
                ValueState.REMOVED,
                "",
                "",
                true,
                false,
                false,
                false));
    RecordedTxn t =
        txn(
            6,
            TxnType.NB_TRANSACTION,
            ResyncType.NOT_RESYNC,
            "",
            0,
            0,
            List.of(nb("/a", null), nb("/b", null)),
            false,
            List.of(),
            executed);

    assertThat(TxnLogFormatter.finalRecord(t, TEXT, 0, REST))
        .contains(
            """
              1. DELETE:
                  - key: /a
                  - value: { a:1 }\s
              2. DELETE [NOOP ALREADY-REMOVED]:
                  - key: /b
                  - value: <NIL>\s
        """);
  }

  @Test
  void durationsAreFormattedLikeGoTimeDurationString() {
    Object[][] table = {
      {0L, "0s"},
      {1L, "1ns"},
      {999L, "999ns"},
      {1_000L, "1µs"},
      {1_500L, "1.5µs"},
      {350_000L, "350µs"},
      {512_300L, "512.3µs"},
      {1_000_000L, "1ms"},
      {2_100_000L, "2.1ms"},
      {1_234_567L, "1.234567ms"},
      {1_000_000_000L, "1s"},
      {1_500_000_000L, "1.5s"},
      {60_000_000_000L, "1m0s"},
      {90_000_000_000L, "1m30s"},
      {3_600_000_000_000L, "1h0m0s"},
      {3_723_400_000_000L, "1h2m3.4s"},
      {-2_100_000L, "-2.1ms"},
      {Long.MIN_VALUE, "-2562047h47m16.854775808s"},
    };
    for (Object[] row : table) {
      assertThat(TxnLogFormatter.goDuration((Long) row[0])).as("%s ns", row[0]).isEqualTo(row[1]);
    }
  }

  @Test
  void durationRoundingGoesHalfwayAwayFromZero() {
    assertThat(TxnLogFormatter.round(2_149_999L, 100_000L)).isEqualTo(2_100_000L);
    assertThat(TxnLogFormatter.round(2_150_000L, 100_000L)).isEqualTo(2_200_000L);
    assertThat(TxnLogFormatter.round(-1_500_000L, 1_000_000L)).isEqualTo(-2_000_000L);
    assertThat(TxnLogFormatter.round(-1_400_000L, 1_000_000L)).isEqualTo(-1_000_000L);
  }

  @Test
  void timesAreRoundedToMillisAndPrintedLikeGoTimeStringInUtc() {
    Instant t = Instant.parse("2024-05-06T10:15:01.1205Z");
    assertThat(TxnLogFormatter.goTime(TxnLogFormatter.roundToMillis(t)))
        .isEqualTo("2024-05-06 10:15:01.121 +0000 UTC");
    assertThat(TxnLogFormatter.goTime(Instant.parse("2024-05-06T10:15:01.120Z")))
        .isEqualTo("2024-05-06 10:15:01.12 +0000 UTC");
    assertThat(
            TxnLogFormatter.goTime(
                TxnLogFormatter.roundToMillis(Instant.parse("2024-05-06T10:15:01.9996Z"))))
        .isEqualTo("2024-05-06 10:15:02 +0000 UTC");
  }
}
