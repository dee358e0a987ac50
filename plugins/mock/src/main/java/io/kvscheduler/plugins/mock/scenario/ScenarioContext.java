package io.kvscheduler.plugins.mock.scenario;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.plugins.mock.MockPlugins;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a scenario works with: the scheduler, the mock plugins and the output, plus helpers that
 * commit a step and print what it is about to do.
 */
public final class ScenarioContext {
  private final KVScheduler kvs;
  private final MockPlugins mock;
  private final PrintStream out;

  ScenarioContext(KVScheduler kvs, MockPlugins mock, PrintStream out) {
    this.kvs = kvs;
    this.mock = mock;
    this.out = out;
  }

  public KVScheduler scheduler() {
    return kvs;
  }

  public MockPlugins mock() {
    return mock;
  }

  public PrintStream out() {
    return out;
  }

  /** The key of a value of one of the mock models. */
  public static String keyOf(Object value) {
    if (value instanceof Interface i) {
      return InterfaceModel.key(i);
    }
    if (value instanceof BridgeDomain bd) {
      return L2Model.key(bd);
    }
    if (value instanceof FibEntry fib) {
      return L2Model.key(fib);
    }
    throw new IllegalArgumentException("not a mock model value: " + value);
  }

  /** Values keyed by their model keys, in the given order. */
  public static Map<String, Object> values(Object... values) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (Object v : values) {
      m.put(keyOf(v), v);
    }
    return m;
  }

  /** Prints a box announcing the next step (the parts form one paragraph). */
  public void announce(String... parts) {
    Console.box(out, String.join(" ", parts));
  }

  /** Commits {@code values} as a full resync (the NB state becomes exactly these values). */
  public long resync(String description, Map<String, Object> values) {
    return commit(
        values,
        TxnOptions.builder()
            .description(description)
            .resync(ResyncType.FULL)
            .retryWithDefaults()
            .build());
  }

  /** Commits {@code changes} (null value = delete) as a change transaction. */
  public long change(String description, Map<String, Object> changes, boolean revert) {
    return commit(
        changes,
        TxnOptions.builder().description(description).revert(revert).retryWithDefaults().build());
  }

  private long commit(Map<String, Object> values, TxnOptions options) {
    Txn txn = kvs.startNBTransaction();
    values.forEach(txn::setValue);
    long seq;
    try {
      seq = txn.commit(options);
    } catch (TransactionException e) {
      out.println(Console.red("Transaction failed: " + e.getMessage()));
      seq = e.seqNum();
    }
    printStates();
    return seq;
  }

  /** Prints the state of every base value and its derived values. */
  public void printStates() {
    kvs.transactionBarrier();
    out.println(Console.yellow("Value states:"));
    for (BaseValueStatus st : kvs.valueStatuses()) {
      out.println(Console.yellow("  " + line(st.value())));
      for (ValueStatus d : st.derived()) {
        out.println(Console.yellow("      derived " + line(d)));
      }
    }
  }

  private static String line(ValueStatus st) {
    StringBuilder sb = new StringBuilder(String.format("%-46s %s", st.key(), st.state()));
    if (!st.details().isEmpty()) {
      sb.append(' ')
          .append(st.state() == ValueState.PENDING ? "waiting for " : "invalid fields ")
          .append(st.details());
    }
    if (!st.error().isEmpty()) {
      sb.append(" error: ").append(st.error());
    }
    return sb.toString();
  }
}
