package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.TxnOperation.VALIDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.INVALID;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.catalogue.CatalogueFixtures.status;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Catalogue §11: validation and the INVALID state, on the setup of the hands-on scenario {@code
 * fixed_invalid_config}: interfaces {@code if/X} validate their MAC address, bridge domains {@code
 * bd/B} derive memberships {@code bd/B/interface/X} (depending on {@code if/X}, validated by the bd
 * descriptor), FIB entries {@code fib/N} depend on a membership.
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true, checkSouthbound = false)
class ValidationTest {
  record Iface(String mac) {}

  record Bd(List<String> ifaces) {}

  record Member(String iface) {}

  record Fib(String bd, String iface) {}

  static final String TAP1 = "if/tap1";
  static final String TAP2 = "if/tap2";
  static final String TAP3 = "if/tap3";
  static final String BD1 = "bd/bd1";
  static final String BD2 = "bd/bd2";
  static final String FIB1 = "fib/fib1";
  static final String FIB2 = "fib/fib2";
  static final String MAC1 = "aa:bb:cc:dd:ee:01";
  static final String MAC2 = "aa:bb:cc:dd:ee:02";
  static final String BAD_MAC = "invalid-hw-address";
  static final String PHYS_ERR = "field phys_address is invalid: bad";
  private static final Pattern MAC = Pattern.compile("([0-9a-f]{2}:){5}[0-9a-f]{2}");

  static String member(String bd, String iface) {
    return "bd/" + bd + "/interface/" + iface;
  }

  private MockSouthbound sb;

  /** "VALIDATE key #n": n = number of SB calls seen when Validate ran. */
  private final List<String> validations = new CopyOnWriteArrayList<>();

  private final List<String> expectedInconsistencies = new ArrayList<>();
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
    kvs.registerDescriptors(
        sb.descriptor("interface", Iface.class)
            .nbKeyPrefix("if/")
            .validate(
                (key, v) -> {
                  validations.add("VALIDATE " + key + " #" + sb.calls().size());
                  if (v.mac().equals("plain")) {
                    throw new IllegalArgumentException("invalid MAC address");
                  }
                  if (v.mac().equals("two-fields")) {
                    throw new InvalidValueException("bad", "phys_address", "host_if_name");
                  }
                  if (!MAC.matcher(v.mac()).matches()) {
                    throw new InvalidValueException("bad", "phys_address");
                  }
                })
            .build(),
        sb.descriptor("bd", Object.class)
            .nbKeyPrefix("bd/")
            .derivedValues(
                (key, v) -> {
                  List<KeyValuePair> out = new ArrayList<>();
                  if (v instanceof Bd bd) {
                    for (String i : bd.ifaces()) {
                      out.add(KeyValuePair.of(key + "/interface/" + i, new Member(i)));
                    }
                  }
                  return out;
                })
            .dependencies(
                (key, v) ->
                    v instanceof Member m
                        ? List.of(Dependency.onKey("interface", "if/" + m.iface()))
                        : List.of())
            .validate(
                (key, v) -> {
                  validations.add("VALIDATE " + key + " #" + sb.calls().size());
                  if (v instanceof Member m && m.iface().equals("bad")) {
                    throw new InvalidValueException("unknown interface", "iface");
                  }
                })
            .build(),
        sb.descriptor("fib", Fib.class)
            .nbKeyPrefix("fib/")
            .dependencies(
                (key, v) -> List.of(Dependency.onKey("bd-member", member(v.bd(), v.iface()))))
            .validate(
                (key, v) -> {
                  validations.add("VALIDATE " + key + " #" + sb.calls().size());
                  if (v.iface().isEmpty()) {
                    throw new IllegalArgumentException("missing outgoing interface");
                  }
                })
            .build());
  }

  @AfterEach
  void tearDown() {
    assertThat(sb.inconsistencies()).containsExactlyElementsOf(expectedInconsistencies);
  }

  private TransactionException commitFails(TxnOptions o, Object... kv) {
    return assertThrows(TransactionException.class, () -> env.commit(o, kv));
  }

  private TransactionException commitFails(Object... kv) {
    return commitFails(TxnOptions.defaults(), kv);
  }

  private static OpSpec[] ops(OpSpec... o) {
    return o;
  }

  // ------------------------------------------------------------------ B117

  @Test
  @DisplayName(
      "B117 Validate runs right before Create and before Update, once (not during simulation)")
  void validateBeforeCreateAndUpdate() {
    env.commit(TAP1, new Iface(MAC1));
    assertThat(validations).containsExactly("VALIDATE " + TAP1 + " #0");
    assertThat(sb.callLog()).containsExactly("CREATE " + TAP1);

    sb.clearCalls();
    validations.clear();
    env.commit(TAP1, new Iface(MAC2));
    assertThat(validations).containsExactly("VALIDATE " + TAP1 + " #0");
    assertThat(sb.callLog()).containsExactly("UPDATE " + TAP1);
    assertThat(kvs).value(TAP1).isExactly(CONFIGURED, UPDATE, "");
  }

  @Test
  @DisplayName(
      "B117 an invalid NB value is stored INVALID (NOOP, error, details = invalid fields); the plan shows success")
  void invalidValueOnCreate() {
    TransactionException e = commitFails(TAP2, new Iface(BAD_MAC));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(tuple(TAP2, CREATE, PHYS_ERR));
    assertThat(e.keyErrors().get(0).cause()).isInstanceOf(InvalidValueException.class);
    assertThat(sb.callLog()).isEmpty();
    assertThat(validations).containsExactly("VALIDATE " + TAP2 + " #0");

    RecordedTxn txn = env.txn(0);
    TxnAssert.assertThat(txn)
        .planned(op(CREATE, TAP2).states(NONEXISTENT, CONFIGURED).error(""))
        .executed(
            op(CREATE, TAP2)
                .states(NONEXISTENT, INVALID)
                .flags("NOOP")
                .newValue(new Iface(BAD_MAC))
                .error(PHYS_ERR));
    assertThat(RecordedTxnOp.labels(txn.executed().get(0).displayFlags()))
        .containsExactly("NOOP", "INVALID");
    assertThat(kvs).value(TAP2).isExactly(INVALID, CREATE, PHYS_ERR, "phys_address");
  }

  @Test
  @DisplayName("B117 derived values are validated by their own descriptor")
  void derivedValuesValidated() {
    env.commit(TAP1, new Iface(MAC1));
    sb.clearCalls();
    TransactionException e = commitFails(BD1, new Bd(List.of("tap1", "bad")));
    String memberErr = "field iface is invalid: unknown interface";
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(tuple(member("bd1", "bad"), CREATE, memberErr));
    assertThat(sb.callLog()).containsExactly("CREATE " + BD1, "CREATE " + member("bd1", "tap1"));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, BD1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, member("bd1", "bad"))
                .states(NONEXISTENT, INVALID)
                .flags("DERIVED", "NOOP")
                .error(memberErr),
            op(CREATE, member("bd1", "tap1")).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    assertThat(kvs.valueStatus(BD1).derived())
        .containsExactly(
            status(member("bd1", "bad"), INVALID, CREATE, memberErr, "iface"),
            status(member("bd1", "tap1"), CONFIGURED, CREATE, ""));
  }

  // ------------------------------------------------------------------ B118

  @Test
  @DisplayName("B118 an INVALID value blocks its dependents and is neither refreshed nor retried")
  void invalidBlocksDependentsAndIsNotRetried() {
    sb.planError(TAP3, new RuntimeException("failed to create"));
    TxnOptions retry =
        TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build();
    TransactionException e =
        commitFails(
            retry,
            TAP2,
            new Iface(BAD_MAC),
            BD1,
            new Bd(List.of("tap2")),
            FIB2,
            new Fib("bd1", "tap2"),
            TAP3,
            new Iface(MAC1));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(tuple(TAP2, CREATE, PHYS_ERR), tuple(TAP3, CREATE, "failed to create"));
    // only the failed (not the invalid) value is refreshed
    assertThat(sb.callLog())
        .containsExactly("CREATE " + BD1, "CREATE " + TAP3 + " ✗", "RETRIEVE interface");
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, BD1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, member("bd1", "tap2")).states(NONEXISTENT, PENDING).flags("DERIVED", "NOOP"),
            op(CREATE, FIB2).states(NONEXISTENT, PENDING).flags("NOOP"),
            op(CREATE, TAP2).states(NONEXISTENT, INVALID).flags("NOOP").error(PHYS_ERR),
            op(CREATE, TAP3).states(NONEXISTENT, RETRYING).error("failed to create"));
    assertThat(kvs)
        .derivedValue(BD1, member("bd1", "tap2"))
        .isExactly(PENDING, CREATE, "", "interface");
    assertThat(kvs).value(FIB2).isExactly(PENDING, CREATE, "", "bd-member");
    assertThat(kvs).value(TAP2).isExactly(INVALID, CREATE, PHYS_ERR, "phys_address");
    // one retry is scheduled (~1 s; the manual clock ticks 1 ms per read): for tap3 only
    assertThat(env.timers().pending())
        .hasSize(1)
        .allSatisfy(d -> assertThat(d).isBetween(Duration.ofMillis(900), Duration.ofSeconds(1)));

    sb.clearCalls();
    env.timers().advance(Duration.ofSeconds(1));
    kvs.transactionBarrier();
    RecordedTxn retryTxn = env.txn(1);
    assertThat(retryTxn.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(retryTxn.values()).extracting(RecordedTxn.RecordedValue::key).containsExactly(TAP3);
    assertThat(sb.callLog()).containsExactly("CREATE " + TAP3);
    TxnAssert.assertThat(retryTxn)
        .executed(op(CREATE, TAP3).states(RETRYING, CONFIGURED).flags("RETRY"));

    env.timers().advance(Duration.ofMinutes(5));
    kvs.transactionBarrier();
    assertThat(kvs.transactionHistory()).hasSize(2);
    assertThat(env.timers().pending()).isEmpty();
    assertThat(kvs).value(TAP2).isExactly(INVALID, CREATE, PHYS_ERR, "phys_address");
    assertThat(kvs).value(FIB2).isPending();
  }

  // ------------------------------------------------------------------ B119

  @Test
  @DisplayName(
      "B119 fixing an INVALID value is a CREATE flagged FIXED; its pending dependents follow")
  void fixingInvalidValue() {
    commitFails(
        TAP2, new Iface(BAD_MAC), BD1, new Bd(List.of("tap2")), FIB2, new Fib("bd1", "tap2"));
    sb.clearCalls();

    long seq = env.commit(TAP2, new Iface(MAC2));
    assertThat(sb.callLog())
        .containsExactly("CREATE " + TAP2, "CREATE " + member("bd1", "tap2"), "CREATE " + FIB2);
    OpSpec[] expected =
        ops(
            op(CREATE, TAP2)
                .states(INVALID, CONFIGURED)
                .prevValue(new Iface(BAD_MAC))
                .newValue(new Iface(MAC2))
                .prevError(PHYS_ERR)
                .error(""),
            op(CREATE, member("bd1", "tap2")).states(PENDING, CONFIGURED).flags("DERIVED"),
            op(CREATE, FIB2).states(PENDING, CONFIGURED));
    RecordedTxn txn = env.txn(seq);
    TxnAssert.assertThat(txn).executed(expected).planned(expected);
    assertThat(RecordedTxnOp.labels(txn.executed().get(0).displayFlags())).containsExactly("FIXED");
    assertThat(RecordedTxnOp.labels(txn.executed().get(1).displayFlags()))
        .containsExactly("DERIVED", "WAS-PENDING");
    assertThat(kvs).value(TAP2).isExactly(CONFIGURED, CREATE, "");
    assertThat(kvs).value(FIB2).isExactly(CONFIGURED, CREATE, "");
  }

  // ------------------------------------------------------------------ B120

  @Test
  @DisplayName(
      "B120 an invalid update leaves the old value applied (no call); a later valid value"
          + " updates it (D35)")
  void invalidUpdateLeavesOldValue() {
    env.commit(TAP1, new Iface(MAC1), BD1, new Bd(List.of("tap1")));
    assertThat(sb.callLog())
        .containsExactly("CREATE " + BD1, "CREATE " + TAP1, "CREATE " + member("bd1", "tap1"));
    sb.clearCalls();

    TransactionException e = commitFails(TAP1, new Iface(BAD_MAC));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(tuple(TAP1, UPDATE, PHYS_ERR));
    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(1))
        .planned(
            op(UPDATE, TAP1)
                .states(CONFIGURED, CONFIGURED)
                .prevValue(new Iface(MAC1))
                .newValue(new Iface(BAD_MAC)))
        .executed(
            op(UPDATE, TAP1)
                .states(CONFIGURED, INVALID)
                .flags("NOOP")
                .prevValue(new Iface(MAC1))
                .newValue(new Iface(BAD_MAC))
                .error(PHYS_ERR));
    // old content stays in SB; dependents untouched
    assertThat(sb.get(TAP1).orElseThrow().value()).isEqualTo(new Iface(MAC1));
    assertThat(kvs).value(TAP1).isExactly(INVALID, UPDATE, PHYS_ERR, "phys_address");
    assertThat(kvs).derivedValue(BD1, member("bd1", "tap1")).isExactly(CONFIGURED, CREATE, "");
    // the node holds the invalid value and is unavailable
    assertThat(kvs.dumpValues("interface", View.NB))
        .containsExactly(new KVWithMetadata<>(TAP1, new Iface(BAD_MAC), null, ValueOrigin.FROM_NB));
    assertThat(kvs.dumpValues("interface", View.CACHED)).isEmpty();
    env.commit(BD2, new Bd(List.of("tap1")));
    assertThat(sb.callLog()).containsExactly("CREATE " + BD2);
    assertThat(kvs)
        .derivedValue(BD2, member("bd2", "tap1"))
        .isExactly(PENDING, CREATE, "", "interface");

    // a later valid value updates the old content the southbound still holds (D35: the
    // reference creates it a second time)
    sb.clearCalls();
    long seq = env.commit(TAP1, new Iface(MAC2));
    assertThat(sb.callLog()).containsExactly("UPDATE " + TAP1, "CREATE " + member("bd2", "tap1"));
    TxnAssert.assertThat(env.txn(seq))
        .executed(
            op(UPDATE, TAP1)
                .states(INVALID, CONFIGURED)
                .prevValue(new Iface(MAC1))
                .newValue(new Iface(MAC2))
                .prevError(PHYS_ERR),
            op(CREATE, member("bd2", "tap1")).states(PENDING, CONFIGURED).flags("DERIVED"));
    assertThat(sb.get(TAP1).orElseThrow().value()).isEqualTo(new Iface(MAC2));
    assertThat(kvs).value(TAP1).isExactly(CONFIGURED, UPDATE, "");
  }

  // ------------------------------------------------------------------ B121

  @Test
  @DisplayName(
      "B121 invalid-value error message: plain without field, 'field f is invalid', 'fields [f1 f2] are invalid'")
  void invalidValueMessageFormat() {
    InvalidValueException none = new InvalidValueException("bad");
    assertThat(none.getMessage()).isEqualTo("bad");
    assertThat(none.invalidFields()).isEmpty();
    assertThat(none.reason()).isEqualTo("bad");
    InvalidValueException one = new InvalidValueException("bad", "phys_address");
    assertThat(one.getMessage()).isEqualTo("field phys_address is invalid: bad");
    assertThat(one.invalidFields()).containsExactly("phys_address");
    assertThat(one.reason()).isEqualTo("bad");
    InvalidValueException two = new InvalidValueException("bad", List.of("f1", "f2"));
    assertThat(two.getMessage()).isEqualTo("fields [f1 f2] are invalid: bad");
    assertThat(two.invalidFields()).containsExactly("f1", "f2");
  }

  @Test
  @DisplayName(
      "B121 the invalid fields become the Details of the INVALID status (none for a plain error)")
  void invalidFieldsBecomeDetails() {
    TransactionException e = commitFails(TAP1, new Iface("two-fields"), TAP2, new Iface("plain"));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::message)
        .containsExactly(
            tuple(TAP1, "fields [phys_address host_if_name] are invalid: bad"),
            tuple(TAP2, "invalid MAC address"));
    assertThat(kvs)
        .value(TAP1)
        .isExactly(
            INVALID,
            CREATE,
            "fields [phys_address host_if_name] are invalid: bad",
            "phys_address",
            "host_if_name");
    assertThat(kvs).value(TAP2).isExactly(INVALID, CREATE, "invalid MAC address");
    assertThat(sb.callLog()).isEmpty();
  }

  // ------------------------------------------------------------------ B122

  @Test
  @DisplayName(
      "B122 validateSemantically (ours: List<KeyError>) lists every invalid value incl. derived, skips unknown keys, touches nothing")
  void validateSemantically() {
    List<KeyError> errs =
        kvs.validateSemantically(
            List.of(
                KeyValuePair.of(TAP1, new Iface(MAC1)),
                KeyValuePair.of(TAP2, new Iface(BAD_MAC)),
                KeyValuePair.of(BD1, new Bd(List.of("tap1", "bad"))),
                KeyValuePair.of(FIB1, new Fib("bd1", "")),
                KeyValuePair.of("unknown/key", "no descriptor")));
    assertThat(errs)
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(
            tuple(TAP2, VALIDATE, PHYS_ERR),
            tuple(member("bd1", "bad"), VALIDATE, "field iface is invalid: unknown interface"),
            tuple(FIB1, VALIDATE, "missing outgoing interface"));
    assertThat(errs)
        .extracting(ValidationTest::invalidFields)
        .containsExactly(List.of("phys_address"), List.of("iface"), List.of());

    // nothing applied, nothing recorded
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs.transactionHistory()).isEmpty();
    assertThat(kvs.valueStatuses()).isEmpty();
    assertThat(kvs).value(TAP2).doesNotExist();

    assertThat(
            kvs.validateSemantically(
                List.of(
                    KeyValuePair.of(TAP1, new Iface(MAC1)),
                    KeyValuePair.of(BD1, new Bd(List.of("tap1"))))))
        .isEmpty();
  }

  private static List<String> invalidFields(KeyError e) {
    return e.cause() instanceof InvalidValueException iv ? iv.invalidFields() : List.of();
  }
}
