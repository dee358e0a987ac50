package io.kvscheduler.agent.internal.rest;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The JSON building blocks of vpp-agent's scheduler API ({@code docs/interop.md} §2.2), as ordered
 * maps Jackson writes in the documented key order: {@code RecordedTxn}, {@code RecordedTxnOp},
 * {@code RecordedNode} and {@code RecordedProtoMessage}; {@code BaseValueStatus}, read for every
 * value at once, is written field by field with a generator instead. Fields documented as omitted
 * when zero are left out.
 */
final class SchedulerJson {
  /** Go's zero {@code time.Time}. */
  static final String ZERO_TIME = "0001-01-01T00:00:00Z";

  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss");
  private static final ObjectMapper PLAIN = new ObjectMapper();

  private final ModelRegistry models;
  private final KVScheduler kvs;
  private final ZoneId zone;

  SchedulerJson(ModelRegistry models, KVScheduler kvs, ZoneId zone) {
    this.models = models;
    this.kvs = kvs;
    this.zone = zone;
  }

  /** RFC 3339 with nanoseconds, trailing zeros of the fraction trimmed, and the zone offset. */
  String time(Instant t) {
    OffsetDateTime d = t.atZone(zone).toOffsetDateTime();
    StringBuilder sb = new StringBuilder(SECONDS.format(d));
    int nanos = d.getNano();
    if (nanos != 0) {
      String f = String.format("%09d", nanos);
      int end = f.length();
      while (f.charAt(end - 1) == '0') {
        end--;
      }
      sb.append('.').append(f, 0, end);
    }
    ZoneOffset off = d.getOffset();
    sb.append(off.getTotalSeconds() == 0 ? "Z" : off.getId());
    return sb.toString();
  }

  /** {@code RecordedTxn}. */
  Map<String, Object> txn(RecordedTxn t) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (t.withSimulation()) {
      m.put("WithSimulation", true);
    }
    m.put("Start", time(t.start()));
    m.put("Stop", time(t.stop()));
    m.put("SeqNum", t.seqNum());
    m.put("TxnType", t.type().jsonName());
    if (t.resyncType() != ResyncType.NOT_RESYNC) {
      m.put("ResyncType", t.resyncType().jsonName());
    }
    putIfNotEmpty(m, "Description", t.description());
    if (t.retryForTxn() != 0) {
      m.put("RetryForTxn", t.retryForTxn());
    }
    if (t.retryAttempt() != 0) {
      m.put("RetryAttempt", t.retryAttempt());
    }
    if (!t.values().isEmpty() && t.resyncType() != ResyncType.DOWNSTREAM) {
      List<Object> values = new ArrayList<>(t.values().size());
      for (RecordedTxn.RecordedValue v : t.values()) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("Key", v.key());
        e.put("Value", v.value().map(x -> proto(v.key(), x)).orElse(null));
        e.put("Origin", v.origin().ordinal());
        values.add(e);
      }
      m.put("Values", values);
    }
    if (t.withSimulation() && !t.planned().isEmpty()) {
      m.put("Planned", t.planned().stream().map(this::op).toList());
    }
    if (!t.executed().isEmpty()) {
      m.put("Executed", t.executed().stream().map(this::op).toList());
    }
    if (!t.retrieveErrors().isEmpty()) {
      // ours: the descriptors whose Retrieve failed in a resync's refresh
      List<Object> errors = new ArrayList<>(t.retrieveErrors().size());
      for (RetrieveError e : t.retrieveErrors()) {
        Map<String, Object> em = new LinkedHashMap<>();
        em.put("Descriptor", e.descriptor());
        em.put("Error", e.message());
        errors.add(em);
      }
      m.put("RetrieveErrors", errors);
    }
    return m;
  }

  /** {@code RecordedTxnOp}. */
  Map<String, Object> op(RecordedTxnOp o) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("Operation", o.operation().name());
    m.put("Key", o.key());
    if (o.newState() != ValueState.NONEXISTENT) {
      m.put("NewState", o.newState().name());
    }
    o.newValue().ifPresent(v -> m.put("NewValue", proto(o.key(), v)));
    putIfNotEmpty(m, "NewErrMsg", o.newError());
    if (o.prevState() != ValueState.NONEXISTENT) {
      m.put("PrevState", o.prevState().name());
    }
    o.prevValue().ifPresent(v -> m.put("PrevValue", proto(o.key(), v)));
    putIfNotEmpty(m, "PrevErrMsg", o.prevError());
    putIfTrue(m, "NOOP", o.is(RecordedTxnOp.Flag.NOOP));
    putIfTrue(m, "IsDerived", o.is(RecordedTxnOp.Flag.DERIVED));
    putIfTrue(m, "IsProperty", o.is(RecordedTxnOp.Flag.PROPERTY));
    putIfTrue(m, "IsRevert", o.is(RecordedTxnOp.Flag.REVERT));
    putIfTrue(m, "IsRetry", o.is(RecordedTxnOp.Flag.RETRY));
    putIfTrue(m, "IsRecreate", o.is(RecordedTxnOp.Flag.RECREATE));
    putIfTrue(m, "IsRanAhead", o.is(RecordedTxnOp.Flag.RAN_AHEAD));
    return m;
  }

  /**
   * {@code RecordedNode}; {@code present} tells which keys exist in the same snapshot (for the
   * matching keys of each dependency), null when unknown.
   */
  Map<String, Object> node(NodeRevision n, Collection<String> present) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("Since", time(n.since()));
    m.put("Until", n.until().map(this::time).orElse(ZERO_TIME));
    m.put("Key", n.key());
    m.put("Label", n.label());
    m.put("Value", n.value().map(v -> proto(n.key(), v)).orElse(null));
    m.put("Flags", flags(n));
    m.put("MetadataFields", metadataFields(n));
    List<Object> targets = new ArrayList<>();
    n.dependencies()
        .forEach(
            (label, target) -> {
              Map<String, Object> t = new LinkedHashMap<>();
              t.put("Relation", "depends-on");
              t.put("Label", label);
              List<String> prefixes = anyOfPrefixes(target);
              t.put("ExpectedKey", prefixes == null ? target : "");
              List<String> matching = new ArrayList<>();
              if (present != null) {
                if (prefixes == null) {
                  if (present.contains(target)) {
                    matching.add(target);
                  }
                } else {
                  for (String k : present) {
                    if (prefixes.stream().anyMatch(k::startsWith)) {
                      matching.add(k);
                    }
                  }
                }
              }
              t.put("MatchingKeys", matching);
              targets.add(t);
            });
    for (String d : n.derivedKeys()) {
      Map<String, Object> t = new LinkedHashMap<>();
      t.put("Relation", "derives");
      t.put("Label", d);
      t.put("ExpectedKey", d);
      t.put("MatchingKeys", present == null || present.contains(d) ? List.of(d) : List.of());
      targets.add(t);
    }
    m.put("Targets", targets.isEmpty() ? null : targets);
    m.put("TargetUpdateOnly", false);
    return m;
  }

  /** The prefixes of an any-of dependency as a revision describes it, or null for a key. */
  static List<String> anyOfPrefixes(String target) {
    if (!target.startsWith("anyOf[") || !target.endsWith("]")) {
      return null;
    }
    String inner = target.substring(6, target.length() - 1);
    return inner.isEmpty() ? List.of() : List.of(inner.split(", "));
  }

  /** The flags of a revision, in vpp-agent's flag index order, all values strings. */
  static Map<String, String> flags(NodeRevision n) {
    Map<String, String> f = new LinkedHashMap<>();
    if (n.lastUpdateSeq() >= 0) {
      f.put("last-update", "TXN-" + n.lastUpdateSeq());
    }
    if (!n.error().isEmpty()) {
      f.put("error", n.error());
    }
    f.put("value-state", n.state().name());
    if (n.unavailable()) {
      f.put("unavailable", "");
    }
    if (!n.descriptor().isEmpty()) {
      f.put("descriptor", n.descriptor());
    }
    if (!n.derivedFrom().isEmpty()) {
      f.put("derived", n.derivedFrom());
    }
    return f;
  }

  /** The descriptor's secondary metadata indexes applied to the revision's metadata, or null. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Map<String, List<String>> metadataFields(NodeRevision n) {
    if (n.metadata().isEmpty() || n.descriptor().isEmpty()) {
      return null;
    }
    Optional<KVDescriptor<?, ?>> d = kvs.descriptor(n.descriptor());
    if (d.isEmpty() || d.get().metadataIndexes().isEmpty()) {
      return null;
    }
    Map<String, List<String>> out = new TreeMap<>();
    Object md = n.metadata().get();
    for (Map.Entry<String, ? extends Function<?, ? extends Collection<String>>> e :
        d.get().metadataIndexes().entrySet()) {
      try {
        Collection<String> values = (Collection<String>) ((Function) e.getValue()).apply(md);
        out.put(e.getKey(), values == null ? List.of() : List.copyOf(values));
      } catch (RuntimeException ex) {
        out.put(e.getKey(), List.of());
      }
    }
    return out;
  }

  /**
   * {@code BaseValueStatus} with the proto JSON names of vpp-agent's generated structs, written
   * field by field: {@code derived_values} only when there are some.
   */
  static void writeStatus(JsonGenerator g, BaseValueStatus s) throws IOException {
    g.writeStartObject();
    g.writeFieldName("value");
    writeValueStatus(g, s.value());
    if (!s.derived().isEmpty()) {
      g.writeArrayFieldStart("derived_values");
      for (ValueStatus d : s.derived()) {
        writeValueStatus(g, d);
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  /**
   * {@code ValueStatus}: the key, then what is not zero of state, error, last operation and
   * details.
   */
  static void writeValueStatus(JsonGenerator g, ValueStatus v) throws IOException {
    g.writeStartObject();
    g.writeStringField("key", v.key());
    if (v.state() != ValueState.NONEXISTENT) {
      g.writeStringField("state", v.state().name());
    }
    if (!v.error().isEmpty()) {
      g.writeStringField("error", v.error());
    }
    if (v.lastOperation() != TxnOperation.UNDEFINED) {
      g.writeStringField("last_operation", v.lastOperation().name());
    }
    if (!v.details().isEmpty()) {
      g.writeArrayFieldStart("details");
      for (String d : v.details()) {
        g.writeString(d);
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  /**
   * The statuses {@code source} gives to its consumer, as a JSON array written while they come (one
   * status in memory at a time); {@code null} when it gives none, as vpp-agent answers.
   */
  static void writeStatuses(JsonGenerator g, Consumer<Consumer<BaseValueStatus>> source)
      throws IOException {
    boolean[] started = {false};
    try {
      source.accept(
          s -> {
            try {
              if (!started[0]) {
                g.writeStartArray();
                started[0] = true;
              }
              writeStatus(g, s);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    } catch (UncheckedIOException e) {
      throw e.getCause(); // the client went away: nothing more to read
    }
    if (started[0]) {
      g.writeEndArray();
    } else {
      g.writeNull();
    }
  }

  /** {@code RecordedProtoMessage}: the value's proto name and its protobuf JSON. */
  Map<String, Object> proto(String key, Object value) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("ProtoMsgName", protoName(key, value));
    m.put("ProtoMsgData", data(value));
    return m;
  }

  /** The value as protobuf JSON (lowerCamelCase names, defaults left out). */
  JsonNode data(Object value) {
    try {
      return models.toTree(value, true);
    } catch (RuntimeException e) {
      return PLAIN.valueToTree(String.valueOf(value));
    }
  }

  /**
   * The proto message name of a value: its model's; else its descriptor's value type name; else,
   * for a class nested in a model's value class, the model's name and the class's simple name
   * ({@code mock.l2.BridgeDomain.Interface}); else the class's simple name.
   */
  String protoName(String key, Object value) {
    Optional<Model<?>> model = models.forValue(value);
    if (model.isPresent()) {
      return model.get().protoName();
    }
    Optional<KVDescriptor<?, ?>> d = kvs.descriptorForKey(key);
    if (d.isPresent()
        && d.get().valueType().isInstance(value)
        && !d.get().valueTypeName().equals(d.get().valueType().getName())) {
      return d.get().valueTypeName();
    }
    Class<?> outer = value.getClass().getEnclosingClass();
    if (outer != null) {
      for (Model<?> m : models.models()) {
        if (m.valueClass() == outer) {
          return m.protoName() + "." + value.getClass().getSimpleName();
        }
      }
    }
    return value.getClass().getSimpleName();
  }

  /** Metadata as plain JSON (its public fields and getters), or null. */
  static JsonNode metadata(Object metadata) {
    if (metadata == null) {
      return null;
    }
    try {
      return PLAIN.valueToTree(metadata);
    } catch (RuntimeException e) {
      return PLAIN.valueToTree(String.valueOf(metadata));
    }
  }

  private static void putIfNotEmpty(Map<String, Object> m, String key, String value) {
    if (value != null && !value.isEmpty()) {
      m.put(key, value);
    }
  }

  private static void putIfTrue(Map<String, Object> m, String key, boolean value) {
    if (value) {
      m.put(key, true);
    }
  }
}
