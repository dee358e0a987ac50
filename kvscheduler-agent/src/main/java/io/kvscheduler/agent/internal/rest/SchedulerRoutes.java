package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * The {@code /scheduler/*} endpoints of vpp-agent ({@code docs/interop.md} §2.3) plus {@code
 * /scheduler/explain}, over the scheduler's public read API: every read is served from the engine's
 * published snapshots, never from the engine thread, and large arrays stream.
 *
 * <p>Where vpp-agent answers a client mistake with 500 or a crash (an unknown flag or format, a bad
 * number or view), these answer 400 {@code {"Error": ...}} naming the parameter and the accepted
 * values.
 *
 * <p>Why one class of this size: it holds one short method per endpoint of vpp-agent's {@code
 * /scheduler} API and the parameter checks they share, so that every endpoint's parameters and
 * errors read side by side; the JSON shapes are in {@link SchedulerJson}, the graph in {@link
 * GraphExport}, the text form in {@link TxnText}.
 */
public final class SchedulerRoutes {
  /** The flags of {@code /scheduler/flag-stats}, in vpp-agent's index order. */
  static final List<String> FLAGS =
      List.of("last-update", "error", "value-state", "unavailable", "descriptor", "derived");

  private final KVScheduler kvs;
  private final SchedulerJson json;
  private final TxnText text;
  private final Function<String, String> notes;

  SchedulerRoutes(
      KVScheduler kvs, ModelRegistry models, ZoneId zone, Function<String, String> notes) {
    this.kvs = kvs;
    this.json = new SchedulerJson(models, kvs, zone);
    this.text = new TxnText(zone);
    this.notes = notes;
  }

  /** Adds the {@code /scheduler/*} endpoints and {@code /metrics} to {@code server}. */
  public static void register(
      RestServer server, KVScheduler kvs, ModelRegistry models, AgentMetrics metrics) {
    register(server, kvs, models, metrics, key -> null);
  }

  /**
   * Adds the {@code /scheduler/*} endpoints and {@code /metrics} to {@code server}; {@code notes}
   * gives, for a value's key, a line added to its status' {@code details} in {@code
   * /scheduler/status} (null for none): a value kept from before a rejected edit says so.
   */
  public static void register(
      RestServer server,
      KVScheduler kvs,
      ModelRegistry models,
      AgentMetrics metrics,
      Function<String, String> notes) {
    SchedulerRoutes r = new SchedulerRoutes(kvs, models, ZoneId.systemDefault(), notes);
    // vpp-agent's clients send every parameter, empty when unused (agentctl values asks
    // /scheduler/status?key=&key-prefix=): an empty parameter is an absent one on every route
    EmptyAsAbsent routes = new EmptyAsAbsent(server);
    routes.route(
        "GET",
        "/scheduler/txn-history",
        Set.of("seq-num", "since", "until", "format"),
        r::txnHistory);
    routes.route("GET", "/scheduler/key-timeline", Set.of("key", "time"), r::keyTimeline);
    routes.route("GET", "/scheduler/graph-snapshot", Set.of("time"), r::graphSnapshot);
    routes.route("GET", "/scheduler/flag-stats", Set.of("flag", "prefix"), r::flagStats);
    // agentctl config resync posts no body and says text/plain
    routes.bodylessPost(
        "/scheduler/downstream-resync", Set.of("retry", "verbose"), r::downstreamResync);
    routes.route("GET", "/scheduler/dump", Set.of("descriptor", "key-prefix", "view"), r::dump);
    routes.route("GET", "/scheduler/status", Set.of("key", "descriptor", "key-prefix"), r::status);
    routes.route("GET", "/scheduler/stats", Set.of(), r::stats);
    routes.route("GET", "/scheduler/graph", Set.of("txn", "format"), r::graph);
    routes.route("GET", "/scheduler/explain", Set.of("key", "format"), r::explain);
    DriftRoute.register(server, kvs, models);
    server.route(
        "GET",
        "/metrics",
        Set.of(),
        req ->
            Response.bytes(
                200, "text/plain; version=0.0.4; charset=utf-8", utf8(metrics.scrape())));
  }

  /** Adds routes whose handlers see empty query parameters as absent. */
  private record EmptyAsAbsent(RestServer server) {
    void route(String method, String path, Set<String> params, RestServer.Handler h) {
      server.route(method, path, params, req -> h.handle(req.withoutEmptyParams()));
    }

    void bodylessPost(String path, Set<String> params, RestServer.Handler h) {
      server.bodylessPost(path, params, req -> h.handle(req.withoutEmptyParams()));
    }
  }

  // ------------------------------------------------------------------ parameters

  /** A non-negative integer parameter, or empty when absent. */
  static Optional<Long> number(Request req, String name, String what) {
    Optional<String> v = req.param(name);
    if (v.isEmpty()) {
      return Optional.empty();
    }
    try {
      long n = Long.parseLong(v.get().strip());
      if (n >= 0) {
        return Optional.of(n);
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new BadRequest(
        "bad value '"
            + abbreviate(v.get())
            + "' of query parameter '"
            + name
            + "': expected "
            + what);
  }

  /** A time parameter: nanoseconds since the Unix epoch. */
  static Optional<Instant> time(Request req, String name) {
    return number(
            req,
            name,
            "a time in nanoseconds since the Unix epoch (a whole number, 0 or" + " more)")
        .map(ns -> Instant.ofEpochSecond(ns / 1_000_000_000L, ns % 1_000_000_000L));
  }

  /** A required parameter. */
  static String required(Request req, String name, String message) {
    Optional<String> v = req.param(name);
    if (v.isEmpty() || v.get().isEmpty()) {
      throw new BadRequest(message);
    }
    return v.get();
  }

  /** A choice among {@code accepted} (the first is the default). */
  static String choice(Request req, String name, List<String> accepted) {
    Optional<String> v = req.param(name);
    if (v.isEmpty()) {
      return accepted.get(0);
    }
    for (String a : accepted) {
      if (a.equalsIgnoreCase(v.get())) {
        return a;
      }
    }
    throw new BadRequest(
        "bad value '"
            + abbreviate(v.get())
            + "' of query parameter '"
            + name
            + "': accepted are "
            + String.join(", ", accepted));
  }

  static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 77) + "...";
  }

  // ------------------------------------------------------------------ endpoints

  private Response txnHistory(Request req) {
    String format = choice(req, "format", List.of("json", "text"));
    Optional<Long> seq =
        number(req, "seq-num", "a transaction sequence number (a whole number," + " 0 or more)");
    Optional<Instant> since = time(req, "since");
    Optional<Instant> until = time(req, "until");
    if (seq.isPresent()) {
      Optional<RecordedTxn> t = kvs.recordedTransaction(seq.get());
      if (t.isEmpty()) {
        return Response.error(
            404,
            "transaction with such sequence number is not recorded:" + " seq-num " + seq.get());
      }
      return format.equals("text")
          ? Response.text(200, text.single(t.get()))
          : Response.json(200, json.txn(t.get()));
    }
    List<RecordedTxn> all = kvs.transactionHistory();
    Instant from = since.orElse(Instant.MIN);
    Instant to = until.orElse(Instant.MAX);
    List<RecordedTxn> window =
        all.isEmpty() || to.isBefore(from) ? null : kvs.transactionHistory(from, to);
    if (format.equals("text")) {
      return Response.text(200, text.history(window == null ? List.of() : window));
    }
    return window == null ? Response.json(200, null) : Response.jsonArray(200, window, json::txn);
  }

  private Response keyTimeline(Request req) {
    String key = required(req, "key", "missing key argument: give key=<key>");
    Optional<Instant> at = time(req, "time");
    List<NodeRevision> revs = kvs.keyTimeline(key);
    if (at.isPresent()) {
      Instant t = at.get();
      for (NodeRevision r : revs) {
        if (r.since().isBefore(t) && (r.until().isEmpty() || r.until().get().isAfter(t))) {
          return Response.json(200, json.node(r, presentAt(r)));
        }
      }
      return Response.json(200, null);
    }
    if (revs.isEmpty()) {
      return Response.json(200, null);
    }
    return Response.jsonArray(200, revs, r -> json.node(r, presentAt(r)));
  }

  /** The keys present when {@code r} started (only computed for a revision with dependencies). */
  private Set<String> presentAt(NodeRevision r) {
    if (r.dependencies().isEmpty() && r.derivedKeys().isEmpty()) {
      return Set.of();
    }
    Set<String> keys = new HashSet<>();
    kvs.graphSnapshot(r.since()).forEach(n -> keys.add(n.key()));
    return keys;
  }

  private Response graphSnapshot(Request req) {
    Instant t = time(req, "time").orElse(Instant.now());
    List<NodeRevision> snapshot = kvs.graphSnapshot(t);
    Set<String> keys = new HashSet<>();
    snapshot.forEach(n -> keys.add(n.key()));
    return Response.jsonArray(200, snapshot, n -> json.node(n, keys));
  }

  private Response flagStats(Request req) {
    String flag =
        required(
            req,
            "flag",
            "missing flag argument: give flag=<one of " + String.join(", ", FLAGS) + ">");
    if (!FLAGS.contains(flag)) {
      throw new BadRequest(
          "unknown flag '" + abbreviate(flag) + "': accepted are " + String.join(", ", FLAGS));
    }
    List<String> prefixes = req.params("prefix");
    KeySelector selector =
        prefixes.isEmpty() ? KeySelector.any() : key -> prefixes.stream().anyMatch(key::startsWith);
    FlagStats stats = kvs.flagStats(flag, selector);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("TotalCount", stats.total());
    // a flag without a value (unavailable, derived) is counted under its own name, not ""
    Map<String, Long> perValue = new TreeMap<>();
    stats.perValue().forEach((v, n) -> perValue.merge(v.isEmpty() ? flag : v, n, Long::sum));
    m.put("PerValueCount", perValue);
    return Response.json(200, m);
  }

  private Response downstreamResync(Request req) throws Exception {
    boolean retry = yes(req, "retry");
    boolean verbose = yes(req, "verbose");
    TxnOptions.Builder options =
        TxnOptions.builder()
            .description("downstream resync (REST)")
            .resync(ResyncType.DOWNSTREAM, verbose);
    if (retry) {
      options.retryWithDefaults();
    }
    long seq;
    try {
      seq = kvs.startNBTransaction().commitAsync(options.build()).get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TransactionException te && te.seqNum() >= 0) {
        seq = te.seqNum();
      } else {
        return Response.error(500, String.valueOf(e.getCause().getMessage()));
      }
    }
    return Response.json(200, kvs.recordedTransaction(seq).map(json::txn).orElse(null));
  }

  /** A yes/no parameter as vpp-agent reads it: {@code true} or {@code 1} is yes. */
  private static boolean yes(Request req, String name) {
    Optional<String> v = req.param(name);
    if (v.isEmpty()) {
      return false;
    }
    return switch (v.get().toLowerCase(Locale.ROOT)) {
      case "true", "1", "" -> true;
      case "false", "0" -> false;
      default ->
          throw new BadRequest(
              "bad value '"
                  + abbreviate(v.get())
                  + "' of query"
                  + " parameter '"
                  + name
                  + "': accepted are true, 1, false, 0");
    };
  }

  private Response dump(Request req) {
    Optional<String> descriptor = req.param("descriptor");
    Optional<String> prefix = req.param("key-prefix");
    if (descriptor.isEmpty() && prefix.isEmpty()) {
      if (req.has("view")) {
        throw new BadRequest("query parameter 'view' needs 'descriptor' or 'key-prefix'");
      }
      Map<String, Object> index = new LinkedHashMap<>();
      List<String> names = new ArrayList<>();
      List<String> prefixes = new ArrayList<>();
      for (KVDescriptor<?, ?> d : kvs.descriptors()) {
        names.add(d.name());
        if (d.nbKeyPrefix() != null && !d.nbKeyPrefix().isEmpty()) {
          prefixes.add(d.nbKeyPrefix()); // a derived values' descriptor has none
        }
      }
      index.put("Descriptors", names);
      index.put("KeyPrefixes", prefixes);
      index.put("Views", List.of("SB", "NB", "cached"));
      return Response.json(200, index);
    }
    if (descriptor.isPresent() && prefix.isPresent()) {
      throw new BadRequest("give either 'descriptor' or 'key-prefix', not both");
    }
    String v = choice(req, "view", List.of("SB", "NB", "cached"));
    View view =
        switch (v) {
          case "NB" -> View.NB;
          case "cached" -> View.CACHED;
          default -> View.SB;
        };
    List<KVWithMetadata<Object, Object>> values;
    if (descriptor.isPresent()) {
      KVDescriptor<?, ?> d =
          kvs.descriptor(descriptor.get())
              .orElseThrow(
                  () ->
                      new BadRequest(
                          404,
                          "descriptor '"
                              + abbreviate(descriptor.get())
                              + "' is not registered (registered: "
                              + String.join(
                                  ", ", kvs.descriptors().stream().map(KVDescriptor::name).toList())
                              + ")"));
      if (view == View.SB && d.retrieve().isEmpty()) {
        throw new BadRequest(
            "descriptor does not support Retrieve operation: "
                + d.name()
                + " has no SB view (use view=cached or view=NB)");
      }
      values = kvs.dumpValues(d.name(), view);
    } else {
      String p = prefix.get();
      Optional<KVDescriptor<?, ?>> d =
          kvs.descriptors().stream().filter(x -> p.equals(x.nbKeyPrefix())).findFirst();
      if (d.isEmpty()) {
        // vpp-agent's words, then which parameter and value, and what would have matched
        return Response.error(
            404,
            "no descriptor found matching the key prefix: key-prefix '"
                + abbreviate(p)
                + "' (known: "
                + String.join(", ", kvs.registeredNBKeyPrefixes())
                + ")");
      }
      if (view == View.SB && d.get().retrieve().isEmpty()) {
        throw new BadRequest(
            "descriptor does not support Retrieve operation: "
                + d.get().name()
                + " has no SB view (use view=cached or view=NB)");
      }
      values = kvs.dumpValuesByKeyPrefix(p, view);
    }
    return Response.jsonArray(
        200,
        values,
        kv -> {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("Key", kv.key());
          m.put("Value", kv.value() == null ? null : json.proto(kv.key(), kv.value()));
          m.put("Origin", kv.origin().ordinal());
          m.put("Metadata", SchedulerJson.metadata(kv.metadata()));
          return m;
        });
  }

  private Response status(Request req) {
    Optional<String> key = req.param("key");
    Optional<String> descriptor = req.param("descriptor");
    Optional<String> prefix = req.param("key-prefix");
    if ((key.isPresent() ? 1 : 0) + (descriptor.isPresent() ? 1 : 0) + (prefix.isPresent() ? 1 : 0)
        > 1) {
      throw new BadRequest("give at most one of 'key', 'descriptor' and 'key-prefix'");
    }
    if (key.isPresent()) {
      BaseValueStatus one = noted(kvs.valueStatus(key.get()));
      return Response.jsonStream(200, g -> SchedulerJson.writeStatus(g, one));
    }
    KeySelector select = KeySelector.any();
    if (descriptor.isPresent()) {
      KVDescriptor<?, ?> d =
          kvs.descriptor(descriptor.get())
              .orElseThrow(
                  () ->
                      new BadRequest(
                          404,
                          "descriptor '" + abbreviate(descriptor.get()) + "' is not registered"));
      select = d::selects;
    } else if (prefix.isPresent()) {
      String p = prefix.get();
      KVDescriptor<?, ?> d =
          kvs.descriptors().stream()
              .filter(x -> p.equals(x.nbKeyPrefix()))
              .findFirst()
              .orElseThrow(
                  () ->
                      new BadRequest(
                          404,
                          "unknown key prefix '"
                              + abbreviate(p)
                              + "' (known: "
                              + String.join(", ", kvs.registeredNBKeyPrefixes())
                              + ")"));
      select = d::selects;
    }
    KeySelector selected = select;
    // read while written, from one published snapshot: nothing waits for the engine, and no
    // list or tree of every status is built first
    return Response.jsonStream(
        200,
        g ->
            SchedulerJson.writeStatuses(
                g, each -> kvs.forEachValueStatus(selected, st -> each.accept(noted(st)))));
  }

  /** {@code s} with the note about its value, if there is one, added to its details. */
  private BaseValueStatus noted(BaseValueStatus s) {
    ValueStatus v = s.value();
    String note = notes.apply(v.key());
    if (note == null) {
      return s;
    }
    List<String> details = new ArrayList<>(v.details());
    details.add(note);
    return new BaseValueStatus(
        new ValueStatus(v.key(), v.state(), v.error(), v.lastOperation(), details), s.derived());
  }

  private Response stats(Request req) {
    List<RecordedTxn> history = kvs.transactionHistory();
    Map<String, Long> ops = new LinkedHashMap<>();
    ops.put("CREATE", 0L);
    ops.put("UPDATE", 0L);
    ops.put("DELETE", 0L);
    long errors = 0;
    Map<String, Map<String, Long>> perDescriptor = new TreeMap<>();
    for (RecordedTxn t : history) {
      for (RecordedTxnOp op : t.executed()) {
        ops.merge(op.operation().name(), 1L, Long::sum);
        if (!op.newError().isEmpty()) {
          errors++;
        }
        if (!op.is(RecordedTxnOp.Flag.NOOP)) {
          String d = kvs.descriptorForKey(op.key()).map(KVDescriptor::name).orElse("");
          if (!d.isEmpty()) {
            perDescriptor
                .computeIfAbsent(d, x -> new TreeMap<>())
                .merge(op.operation().name(), 1L, Long::sum);
          }
        }
      }
    }
    Map<String, Long> states = new LinkedHashMap<>();
    for (ValueState s : ValueState.values()) {
      states.put(s.name(), 0L);
    }
    kvs.forEachValueStatus(
        KeySelector.any(),
        s -> {
          states.merge(s.state().name(), 1L, Long::sum);
          s.derived().forEach(d -> states.merge(d.state().name(), 1L, Long::sum));
        });
    Map<String, Object> txnStats = new LinkedHashMap<>();
    txnStats.put("TotalProcessed", history.size());
    txnStats.put("OperationCount", ops);
    txnStats.put("ValueStateCount", states);
    txnStats.put("ErrorCount", errors);
    txnStats.put("Methods", List.of());
    Map<String, Object> descriptors = new TreeMap<>();
    Map<String, Long> all = new TreeMap<>();
    perDescriptor.forEach(
        (d, byOp) -> {
          descriptors.put(d, callStats(byOp));
          byOp.forEach((op, n) -> all.merge(op, n, Long::sum));
        });
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("TxnStats", txnStats);
    m.put("GraphMethods", List.of());
    m.put("AllDescriptors", callStats(all));
    m.put("Descriptors", descriptors);
    return Response.json(200, m);
  }

  /** {@code CallStats} with counts only (durations are in {@code /metrics}), by count desc. */
  private static List<Object> callStats(Map<String, Long> counts) {
    return counts.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .map(
            e -> {
              Map<String, Object> c = new LinkedHashMap<>();
              c.put("name", e.getKey());
              c.put("count", e.getValue());
              return (Object) c;
            })
        .toList();
  }

  private Response graph(Request req) throws Exception {
    String format = choice(req, "format", List.of("svg", "raw", "dot", "json"));
    Optional<Long> txn =
        number(req, "txn", "a transaction sequence number (a whole number, 0" + " or more)");
    Instant at = Instant.now();
    if (txn.isPresent()) {
      RecordedTxn t =
          kvs.recordedTransaction(txn.get())
              .orElseThrow(
                  () ->
                      new BadRequest(
                          404,
                          "transaction with such sequence number is not recorded: txn "
                              + txn.get()));
      at = t.stop();
    }
    GraphExport g = new GraphExport(kvs.graphSnapshot(at));
    switch (format) {
      case "json":
        return Response.json(200, g.json(json));
      case "raw":
        return Response.text(200, g.dot());
      default:
        try {
          byte[] out = GraphExport.render(g.dot(), format.equals("dot") ? "dot" : "svg");
          return format.equals("dot")
              ? Response.bytes(200, Response.TEXT_TYPE, out)
              : Response.bytes(200, "image/svg+xml", out);
        } catch (GraphExport.NoGraphviz e) {
          return Response.error(501, e.getMessage());
        }
    }
  }

  private Response explain(Request req) {
    String key = required(req, "key", "missing key argument: give key=<key>");
    String format = choice(req, "format", List.of("json", "text"));
    if (format.equals("text")) {
      List<String> lines = kvs.explain(key);
      return Response.text(200, lines.isEmpty() ? "" : String.join("\n", lines) + "\n");
    }
    return Response.json(200, ExplanationJson.of(kvs.explanation(key)));
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
