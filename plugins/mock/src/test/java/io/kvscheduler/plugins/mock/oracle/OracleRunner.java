package io.kvscheduler.plugins.mock.oracle;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.plugins.mock.MockPlugins;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Runs one scenario script of the differential corpus through our scheduler with the mock plugins,
 * producing, step by step, the same JSON shape as the reference's expected output (see the corpus
 * README).
 */
final class OracleRunner {
  static final ObjectMapper JSON =
      new ObjectMapper()
          .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final ObjectMapper SORTED =
      JSON.copy().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

  private OracleRunner() {}

  /** Runs {@code script}; returns one step object per script step. */
  static List<ObjectNode> run(JsonNode script) throws Exception {
    List<ObjectNode> out = new ArrayList<>();
    TreeSet<String> keysSoFar = new TreeSet<>();
    try (KVScheduler kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .recordHistory(true)
            .threadName("oracle-" + script.path("name").asText())
            .build()) {
      MockPlugins mock = MockPlugins.register(kvs, SbPrinter.silent());
      int index = 0;
      for (JsonNode step : script.path("steps")) {
        String resync = step.path("resync").asText("none");
        boolean revert = step.path("revert").asBoolean(false);
        Txn txn = kvs.startNBTransaction();
        for (JsonNode v : step.path("values")) {
          String key = v.path("key").asText();
          keysSoFar.add(key);
          JsonNode value = v.get("value");
          txn.setValue(key, value == null || value.isNull() ? null : decode(key, value));
        }
        TxnOptions.Builder options = TxnOptions.builder().revert(revert);
        switch (resync) {
          case "full" -> options.resync(ResyncType.FULL, false);
          case "upstream" -> options.resync(ResyncType.UPSTREAM, false);
          case "downstream" -> options.resync(ResyncType.DOWNSTREAM, false);
          case "none" -> {}
          default -> throw new IllegalArgumentException("unknown resync " + resync);
        }
        long seq;
        String commitError = "";
        try {
          seq = txn.commit(options.build());
        } catch (TransactionException e) {
          seq = e.seqNum();
          commitError = goStyle(e.keyErrors());
        }
        kvs.transactionBarrier();

        ObjectNode s = NODES.objectNode();
        s.put("index", index++);
        s.put("description", step.path("description").asText(""));
        s.put("resync", resync);
        s.put("revert", revert);
        s.put("seq", (int) seq);
        s.put("commit_error", commitError);
        RecordedTxn rec =
            kvs.recordedTransaction(seq)
                .orElseThrow(() -> new AssertionError("no record of transaction #"));
        s.put("txn_type", rec.type().jsonName());
        s.put("resync_type", rec.resyncType().jsonName());
        s.set("executed", ops(rec.executed()));
        ArrayNode later = s.putArray("later_transactions");
        for (RecordedTxn t : kvs.transactionHistory()) {
          if (t.seqNum() > seq) {
            ObjectNode l = later.addObject();
            l.put("seq", (int) t.seqNum());
            l.put("txn_type", t.type().jsonName());
            l.put("resync_type", t.resyncType().jsonName());
            l.set("executed", ops(t.executed()));
          }
        }
        for (RecordedTxnOp op : rec.executed()) {
          if (!op.is(RecordedTxnOp.Flag.DERIVED)) {
            keysSoFar.add(op.key());
          }
        }
        ObjectNode sb = sb(mock);
        sb.fields()
            .forEachRemaining(
                e -> e.getValue().forEach(kv -> keysSoFar.add(kv.path("key").asText())));
        for (String prefix :
            List.of(InterfaceModel.KEY_PREFIX, L2Model.BD_KEY_PREFIX, L2Model.FIB_KEY_PREFIX)) {
          for (View view : List.of(View.NB, View.CACHED)) {
            kvs.dumpValuesByKeyPrefix(prefix, view).forEach(kv -> keysSoFar.add(kv.key()));
          }
        }
        ArrayNode status = s.putArray("status");
        for (String key : keysSoFar) {
          BaseValueStatus st = kvs.valueStatus(key);
          if (st.state() != ValueState.NONEXISTENT) {
            ObjectNode o = status(st.value());
            ArrayNode derived = o.putArray("derived_values");
            st.derived().stream()
                .sorted(Comparator.comparing(ValueStatus::key))
                .forEach(d -> derived.add(status(d)));
            status.add(o);
          }
        }
        s.set("sb", sb);
        s.set("sb_duplicate_keys", duplicates(sb));
        s.putArray("warnings");
        out.add(s);
      }
    }
    return out;
  }

  /** The reference's aggregated error text: {@code KeyErrors: [<key> (<OP>): <err>, ...]}. */
  static String goStyle(List<KeyError> errors) {
    StringBuilder sb = new StringBuilder("KeyErrors: [");
    for (int i = 0; i < errors.size(); i++) {
      KeyError e = errors.get(i);
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(e.key()).append(" (").append(e.operation()).append("): ").append(e.message());
    }
    return sb.append(']').toString();
  }

  static Object decode(String key, JsonNode value) throws Exception {
    if (InterfaceModel.isKey(key)) {
      return JSON.treeToValue(value, Interface.class);
    }
    if (L2Model.isBridgeDomainKey(key)) {
      return JSON.treeToValue(value, BridgeDomain.class);
    }
    if (L2Model.isFibKey(key)) {
      return JSON.treeToValue(value, FibEntry.class);
    }
    throw new IllegalArgumentException("no model for key " + key);
  }

  private static ArrayNode ops(List<RecordedTxnOp> ops) {
    ArrayNode arr = NODES.arrayNode();
    for (RecordedTxnOp op : ops) {
      ObjectNode o = arr.addObject();
      o.put("operation", op.operation().name());
      o.put("key", op.key());
      o.put("prev_state", op.prevState().name());
      o.put("new_state", op.newState().name());
      o.set("prev_value", value(op.prevValue()));
      o.set("new_value", value(op.newValue()));
      o.put("prev_error", op.prevError());
      o.put("error", op.newError());
      ArrayNode flags = o.putArray("flags");
      RecordedTxnOp.labels(op.flags()).stream().sorted().forEach(flags::add);
      ArrayNode display = o.putArray("display_flags");
      RecordedTxnOp.labels(op.displayFlags()).forEach(display::add);
    }
    return arr;
  }

  private static JsonNode value(Optional<Object> v) {
    return v.<JsonNode>map(JSON::valueToTree).orElse(NODES.nullNode());
  }

  private static ObjectNode status(ValueStatus st) {
    ObjectNode o = NODES.objectNode();
    o.put("key", st.key());
    o.put("state", st.state().name());
    o.put("last_operation", st.lastOperation().name());
    o.put("error", st.error());
    ArrayNode details = o.putArray("details");
    st.details().forEach(details::add);
    return o;
  }

  private static ObjectNode sb(MockPlugins mock) {
    ObjectNode sb = NODES.objectNode();
    List<Map.Entry<String, Object>> bds = new ArrayList<>();
    mock.l2().bridgeDomainState().values().forEach(bd -> bds.add(Map.entry(L2Model.key(bd), bd)));
    List<Map.Entry<String, Object>> ifaces = new ArrayList<>();
    mock.interfaces()
        .southboundState()
        .values()
        .forEach(i -> ifaces.add(Map.entry(InterfaceModel.key(i), i)));
    List<Map.Entry<String, Object>> fibs = new ArrayList<>();
    mock.l2().fibState().forEach(f -> fibs.add(Map.entry(L2Model.key(f), f)));
    sb.set("mock-bridge-domain", sortedKvs(bds));
    sb.set("mock-interface", sortedKvs(ifaces));
    sb.set("mock-l2-fib", sortedKvs(fibs));
    return sb;
  }

  private static ArrayNode sortedKvs(List<Map.Entry<String, Object>> kvs) {
    List<ObjectNode> nodes = new ArrayList<>();
    for (Map.Entry<String, Object> e : kvs) {
      ObjectNode o = NODES.objectNode();
      o.put("key", e.getKey());
      o.set("value", JSON.valueToTree(e.getValue()));
      nodes.add(o);
    }
    nodes.sort(
        Comparator.<ObjectNode, String>comparing(o -> o.path("key").asText())
            .thenComparing(o -> canonical(o.path("value"))));
    ArrayNode arr = NODES.arrayNode();
    nodes.forEach(arr::add);
    return arr;
  }

  static String canonical(JsonNode node) {
    try {
      return SORTED.writeValueAsString(JSON.treeToValue(node, Object.class));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static ArrayNode duplicates(ObjectNode sb) {
    TreeSet<String> dups = new TreeSet<>();
    sb.fields()
        .forEachRemaining(
            e -> {
              TreeSet<String> seen = new TreeSet<>();
              e.getValue()
                  .forEach(
                      kv -> {
                        if (!seen.add(kv.path("key").asText())) {
                          dups.add(kv.path("key").asText());
                        }
                      });
            });
    ArrayNode arr = NODES.arrayNode();
    dups.forEach(arr::add);
    return arr;
  }
}
