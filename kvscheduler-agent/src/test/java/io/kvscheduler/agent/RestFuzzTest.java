package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.ValueState;
import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Property-based fuzzing of the REST API through the real server (Jetty on a free loopback port, a
 * raw HTTP/1.1 client so that malformed targets reach it): random and mutated query strings for
 * every {@code /scheduler/*} endpoint and {@code /configuration}, random and mutated bodies for
 * {@code PUT /configuration}. One agent per property, with values from a configuration file applied
 * before.
 *
 * <p>Properties: never a 5xx, except the documented 500 of {@code PUT /configuration} whose
 * transaction fails (a JSON string naming the failed key); every rejection is a 4xx {@code
 * {"Error": ...}} naming the query parameter, or the line, field or encoding of the body; the
 * values applied before stay applied. Each property tries {@value #TRIES} inputs and prints {@code
 * fuzz rest ...: N inputs, A accepted, R rejected}.
 */
class RestFuzzTest {
  static final int TRIES = 10_000;
  static final ObjectMapper JSON = new ObjectMapper();
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  static final String KEEP = "config/mock/v1/interfaces/keep-if";
  static final String KEEP_BD = "config/mock/v1/bridge-domain/keep-bd";

  /** One endpoint: method, path and the query parameters it takes. */
  record Endpoint(String method, String path, List<String> params) {}

  static final List<Endpoint> ENDPOINTS =
      List.of(
          new Endpoint(
              "GET", "/scheduler/txn-history", List.of("seq-num", "since", "until", "format")),
          new Endpoint("GET", "/scheduler/key-timeline", List.of("key", "time")),
          new Endpoint("GET", "/scheduler/graph-snapshot", List.of("time")),
          new Endpoint("GET", "/scheduler/flag-stats", List.of("flag", "prefix")),
          new Endpoint("POST", "/scheduler/downstream-resync", List.of("retry", "verbose")),
          new Endpoint("GET", "/scheduler/dump", List.of("descriptor", "key-prefix", "view")),
          new Endpoint("GET", "/scheduler/status", List.of("key", "descriptor", "key-prefix")),
          new Endpoint("GET", "/scheduler/stats", List.of()),
          new Endpoint("GET", "/scheduler/graph", List.of("txn", "format")),
          new Endpoint("GET", "/scheduler/explain", List.of("key", "format")),
          new Endpoint("GET", "/scheduler/drift", List.of()),
          new Endpoint("GET", "/metrics", List.of()),
          new Endpoint("GET", "/info/version", List.of()),
          new Endpoint("GET", "/configuration", List.of()),
          new Endpoint("PUT", "/configuration", List.of("replace", "dry-run")));

  static final List<String> ALL_PARAMS =
      ENDPOINTS.stream().flatMap(e -> e.params().stream()).distinct().toList();

  /** Values the parameters' parsers have to tell apart. */
  static final List<String> VALUES =
      List.of(
          "",
          "0",
          "1",
          "-1",
          "2",
          "true",
          "false",
          "TRUE",
          "yes",
          "no",
          "9223372036854775807",
          "9223372036854775808",
          "-9223372036854775808",
          "99999999999999999999999",
          "1e3",
          "0x10",
          "1.5",
          " 1",
          "+1",
          "NaN",
          "Infinity",
          "1700000000",
          "1700000000000",
          "2024-01-02T03:04:05Z",
          "2024-01-02T03:04:05.123+02:00",
          "2024-13-45T99:99:99Z",
          "0001-01-01T00:00:00Z",
          "9999-12-31T23:59:59Z",
          "1s",
          "5m",
          "json",
          "text",
          "txt",
          "dot",
          "svg",
          "yaml",
          "JSON",
          "SB",
          "NB",
          "cached",
          "sb",
          "nb",
          "internal",
          "last-update",
          "error",
          "value-state",
          "unavailable",
          "descriptor",
          "derived",
          "config/mock/v1/interfaces/",
          "config/mock/v1/interfaces/keep-if",
          KEEP_BD,
          "mock-interface",
          "mock-bridge-domain",
          "config/",
          "/",
          "..",
          "%",
          "%%",
          "%zz",
          "%4",
          "%00",
          "%C3%28",
          "%E2%82",
          "%F0%9F%98%80",
          "%2F",
          "%26",
          "%3D",
          "+",
          "&",
          "=",
          "==",
          ";",
          "#",
          "\"",
          "'",
          "<script>",
          "{}",
          "[]",
          "null",
          "\\",
          "|",
          "^",
          "`",
          "a".repeat(300),
          "€",
          "\u0000",
          "é");

  static final List<String> RAW_JUNK =
      List.of(
          "%",
          "%z", "%%", "&", "=", "&&", "==", "?", "#", "[", "]", "{", "|", "\\", "^", "`", "\"", "<",
          ">", "\u007f", "é", "\u00ff");

  Agent agent;
  RawHttpClient http;
  Path dir;
  String what;
  final AtomicLong inputs = new AtomicLong();
  final AtomicLong accepted = new AtomicLong();
  final AtomicLong rejected = new AtomicLong();
  final AtomicLong failed = new AtomicLong();

  @BeforeProperty
  void startAgent() throws Exception {
    dir = Files.createTempDirectory("kvs-rest-fuzz");
    Files.writeString(
        dir.resolve("keep.yaml"),
        KEEP
            + ": {name: keep-if, type: TAP,"
            + " enabled: true}\n"
            + KEEP_BD
            + ": {name: keep-bd, interfaces: [{name: keep-if}]}\n");
    agent =
        Agent.start(
            AgentConfig.builder()
                .configDir(dir)
                .restAddress("127.0.0.1:0")
                .printTxnSummary(false)
                .build());
    await().atMost(Duration.ofSeconds(20)).until(() -> keptApplied());
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    http = new RawHttpClient(port);
  }

  @AfterProperty
  void stopAgent() throws Exception {
    if (what != null) {
      report(what);
    }
    if (http != null) {
      http.close();
    }
    if (agent != null) {
      agent.close();
    }
    try (var files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  boolean keptApplied() {
    return agent.northbound().desired().containsKey(KEEP)
        && agent.northbound().desired().containsKey(KEEP_BD)
        && agent.scheduler().valueStatus(KEEP).state() == ValueState.CONFIGURED
        && agent.scheduler().valueStatus(KEEP_BD).state() == ValueState.CONFIGURED;
  }

  void report(String what) {
    System.out.printf(
        "fuzz rest %s: %d inputs, %d accepted, %d rejected%s%n",
        what,
        inputs.get(),
        accepted.get(),
        rejected.get(),
        failed.get() > 0 ? ", " + failed.get() + " failed transactions (500 naming the key)" : "");
  }

  // ------------------------------------------------------------------ query strings

  /** A request with a generated query string. */
  record QueryProbe(Endpoint endpoint, String rawQuery) {
    String target() {
      return endpoint.path() + (rawQuery == null ? "" : "?" + rawQuery);
    }

    @Override
    public String toString() {
      return endpoint.method() + " " + target();
    }
  }

  @Provide
  Arbitrary<QueryProbe> queries() {
    Arbitrary<String> name =
        Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.of(ALL_PARAMS)),
            Tuple.of(1, Arbitraries.strings().ofMaxLength(8)),
            Tuple.of(1, Arbitraries.of("", "KEY", "key ", "format[]", "seq_num")));
    Arbitrary<String> value =
        Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.of(VALUES)),
            Tuple.of(2, Arbitraries.strings().ofMaxLength(24)),
            Tuple.of(1, Arbitraries.longs().map(String::valueOf)),
            Tuple.of(
                1,
                Arbitraries.strings().withCharRange(' ', '~').ofMinLength(200).ofMaxLength(3000)));
    Arbitrary<String> part =
        Combinators.combine(name, value, Arbitraries.integers().between(0, 5))
            .as((n, v, form) -> form == 0 ? encode(n) : encode(n) + "=" + encode(v));
    // under the server's 8 KiB request line (a longer one is refused by Jetty with 431 before the
    // agent sees it)
    Arbitrary<String> query =
        part.list().ofMaxSize(5).map(l -> String.join("&", l)).filter(q -> q.length() <= 6000);
    Arbitrary<String> mutated =
        Combinators.combine(
                query,
                Arbitraries.of(RAW_JUNK),
                Arbitraries.integers().between(0, 1000),
                Arbitraries.integers().between(0, 3))
            .as(
                (q, junk, at, kind) ->
                    switch (kind) {
                      case 0 ->
                          q.substring(0, at % (q.length() + 1))
                              + rawEncode(junk)
                              + q.substring(at % (q.length() + 1));
                      case 1 -> q.isEmpty() ? q : q.substring(0, at % q.length());
                      default -> q;
                    });
    Arbitrary<String> raw =
        Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(null)), Tuple.of(12, mutated));
    return Combinators.combine(Arbitraries.of(ENDPOINTS), raw).as(QueryProbe::new);
  }

  /** Percent-encodes what may not stand in a query (everything but a few safe characters). */
  static String encode(String s) {
    StringBuilder b = new StringBuilder();
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if (c > 0x20 && c < 0x7f && "\"#%&+<=>[\\]^`{|}".indexOf(c) < 0) {
        b.append((char) c);
      } else {
        b.append('%').append(String.format("%02X", c));
      }
    }
    return b.toString();
  }

  /**
   * A character kept as it is when it is ASCII (so a raw {@code %}, {@code &} or {@code [} reaches
   * the server), its UTF-8 bytes as ISO-8859-1 characters otherwise (raw non-ASCII bytes on the
   * wire).
   */
  static String rawEncode(String s) {
    return new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void queryStringsNeverCauseA5xxAndEveryRejectionNamesTheParameter(
      @ForAll("queries") QueryProbe probe) throws Exception {
    what = "query strings";
    inputs.incrementAndGet();
    Endpoint e = probe.endpoint();
    byte[] body =
        e.method().equals("PUT")
            ? "mockConfig:\n  Interface_list:\n  - name: fuzz-q\n    type: TAP\n"
                .getBytes(StandardCharsets.UTF_8)
            : new byte[0];
    RawHttpClient.Answer a =
        http.send(
            e.method(), probe.target(), e.method().equals("PUT") ? "application/yaml" : null, body);
    assertThat(a.status()).as(probe + " -> " + a.text()).isBetween(200, 499);
    if (a.status() < 300) {
      accepted.incrementAndGet();
    } else {
      rejected.incrementAndGet();
      String error = jsonError(probe.toString(), a);
      assertThat(a.status()).as(probe + " -> " + a.text()).isIn(400, 404);
      assertThat(namesAParameter(error, e.params(), probe.rawQuery()))
          .as(probe + " -> " + error + ": the error names no query parameter")
          .isTrue();
    }
    assertThat(keptApplied()).as("values applied before, after " + probe).isTrue();
  }

  /** The {@code Error} of a JSON error answer (fails the property when it is none). */
  static String jsonError(String what, RawHttpClient.Answer a) throws Exception {
    assertThat(a.header("content-type").toLowerCase(Locale.ROOT))
        .as(what + " -> " + a.text())
        .contains("application/json");
    JsonNode n = JSON.readTree(a.body());
    assertThat(n.isObject() && n.size() == 1 && n.path("Error").isTextual())
        .as(what + " -> " + a.text() + ": not {\"Error\": \"...\"}")
        .isTrue();
    String error = n.get("Error").asText();
    assertThat(error).as(what).isNotBlank();
    return error;
  }

  /**
   * Whether {@code error} names the query: a parameter given ({@code 'name'}), one the endpoint
   * takes ({@code 'name'}, {@code name=} for a missing one, {@code name 'value'} (a dash may be
   * written as a space) or {@code : name 123} for a value not found), or the query string itself (a
   * malformed one).
   */
  static boolean namesAParameter(String error, List<String> params, String rawQuery) {
    String lower = error.toLowerCase(Locale.ROOT);
    if (lower.contains("query") || lower.contains("malformed request")) {
      return true;
    }
    for (String p : params) {
      if (error.contains("'" + p + "'")
          || error.contains(p + "=")
          || error.contains(p + " '")
          || error.contains(p.replace('-', ' ') + " '")
          || error.matches("(?s).*: " + Pattern.quote(p) + " -?\\d+")) {
        return true;
      }
    }
    if (rawQuery == null) {
      return false;
    }
    for (String part : rawQuery.split("&")) {
      int eq = part.indexOf('=');
      String n = decode(eq < 0 ? part : part.substring(0, eq));
      if (!n.isEmpty() && error.contains("'" + n + "'")) {
        return true;
      }
    }
    return false;
  }

  static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void putBodiesNeverCauseA5xxButAFailedTransactionAndEveryRejectionNamesThePlace(
      @ForAll("bodies") BodyProbe probe) throws Exception {
    what = "PUT /configuration bodies";
    inputs.incrementAndGet();
    RawHttpClient.Answer a =
        http.send(
            "PUT",
            "/configuration" + (probe.replace() ? "?replace" : ""),
            probe.contentType(),
            probe.body());
    String what = "PUT " + probe;
    if (a.status() == 200) {
      accepted.incrementAndGet();
      assertThat(a.text()).isEqualTo("{}\n");
    } else if (a.status() == 500) {
      // the documented answer of a transaction that fails: a JSON string naming the key
      failed.incrementAndGet();
      assertThat(a.header("content-type")).as(what).contains("json");
      JsonNode n = JSON.readTree(a.body());
      assertThat(n.isTextual() && n.asText().contains("config/mock/v1/"))
          .as(what + " -> " + a.text() + ": a 500 that is not a failed transaction")
          .isTrue();
    } else if (probe.contentType() == null
        || !List.of("application/yaml", "application/json").contains(probe.contentType())) {
      // a body of another type (or of none) is not read
      rejected.incrementAndGet();
      assertThat(a.status()).as(what + " -> " + a.text()).isEqualTo(415);
      assertThat(jsonError(what, a)).contains("Content-Type", "application/yaml");
    } else {
      rejected.incrementAndGet();
      assertThat(a.status()).as(what + " -> " + a.text()).isEqualTo(400);
      String error = jsonError(what, a);
      assertThat(namesAPlace(error)).as(what + " -> " + error + ": no place named").isTrue();
    }
    assertThat(keptApplied()).as("values applied before, after " + what).isTrue();
  }

  /**
   * Whether a body error says where: a line, a quoted field, group or model, the encoding, or the
   * top of the document (which must be a mapping of {@code <group>Config} keys).
   */
  static boolean namesAPlace(String error) {
    return error.matches("(?s).*\\(line \\d+\\).*")
        || error.contains("'")
        || error.contains("UTF-8")
        || error.contains("Config");
  }

  // ------------------------------------------------------------------ bodies

  /** A PUT body with its content type and whether it replaces. */
  record BodyProbe(byte[] body, String contentType, boolean replace) {
    @Override
    public String toString() {
      String text = new String(body, StandardCharsets.UTF_8);
      return (replace ? "?replace " : "")
          + "["
          + contentType
          + "] "
          + (text.length() > 400 ? text.substring(0, 400) + "…" : text);
    }
  }

  static final List<String> FIELDS =
      List.of(
          "name",
          "type",
          "enabled",
          "physAddress",
          "phys_address",
          "interfaces",
          "bridgedVirtualInterface",
          "bridgeDomain",
          "outgoingInterface",
          "action",
          "mtu",
          "");
  static final List<String> SNIPPETS =
      List.of(
          ":",
          ": ",
          "- ",
          "\t",
          "{",
          "}",
          "[",
          "]",
          "\"",
          "'",
          ",",
          "&a ",
          "*a",
          "!!binary ",
          "!!str ",
          "!!int ",
          "<<: *a\n",
          "\n",
          "\n  ",
          "%",
          "\u0000",
          "\uFEFF",
          "---\n",
          "...\n",
          "? ",
          "|\n",
          ">\n",
          "#",
          "!tag ",
          "~",
          "null",
          "0x1F",
          ".inf",
          "1e999",
          "-0",
          "99999999999999999999",
          "\u00e9",
          "\u0085",
          "\r",
          "\\u0000",
          "\\",
          "@",
          "`");

  @Provide
  Arbitrary<BodyProbe> bodies() {
    Arbitrary<Object> scalar =
        Arbitraries.oneOf(
            Arbitraries.of(
                    "fuzz-a",
                    "fuzz-b",
                    "fuzz-c",
                    "TAP",
                    "LOOPBACK",
                    "UNDEFINED_TYPE",
                    "VXLAN",
                    "02:00:00:00:00:01",
                    "zz",
                    "",
                    "true",
                    "DROP",
                    "FORWARD",
                    "tap9")
                .map(o -> (Object) o),
            Arbitraries.strings().ofMaxLength(12).map(o -> (Object) o),
            Arbitraries.integers().map(o -> (Object) o),
            Arbitraries.of(true, false).map(o -> (Object) o),
            Arbitraries.just(null));
    Arbitrary<Object> member =
        Combinators.combine(Arbitraries.of("fuzz-a", "fuzz-b", "x"), Arbitraries.of(true, false))
            .as(
                (n, bvi) -> {
                  Map<String, Object> m = new LinkedHashMap<>();
                  m.put("name", n);
                  m.put("bridgedVirtualInterface", bvi);
                  return (Object) m;
                });
    Arbitrary<Object> fieldValue =
        Arbitraries.frequencyOf(
            Tuple.of(8, scalar),
            Tuple.of(1, member.list().ofMaxSize(3).map(l -> (Object) l)),
            Tuple.of(1, scalar.list().ofMaxSize(3).map(l -> (Object) l)));
    Arbitrary<Object> item =
        Combinators.combine(Arbitraries.of(FIELDS).list().ofMaxSize(5), fieldValue.list().ofSize(5))
            .as(
                (names, values) -> {
                  Map<String, Object> m = new LinkedHashMap<>();
                  m.put(
                      "name",
                      values.get(4) instanceof String s && !s.isEmpty() ? "fuzz-" + s : "fuzz-a");
                  for (int i = 0; i < names.size(); i++) {
                    m.put(names.get(i), values.get(i));
                  }
                  return (Object) m;
                });
    Arbitrary<Map<String, Object>> group =
        Combinators.combine(
                Arbitraries.of(
                        "Interface_list",
                        "BridgeDomain_list",
                        "FIBEntry_list",
                        "Foo_list",
                        "interfaces",
                        "")
                    .list()
                    .ofMinSize(1)
                    .ofMaxSize(3),
                item.list().ofMaxSize(3))
            .as(
                (lists, items) -> {
                  Map<String, Object> g = new LinkedHashMap<>();
                  for (String l : lists) {
                    g.put(l, items);
                  }
                  return g;
                });
    Arbitrary<byte[]> document =
        Combinators.combine(
                Arbitraries.of(
                        "mockConfig",
                        "mockConfig",
                        "mockConfig",
                        "vppConfig",
                        "linuxConfig",
                        "netallocConfig",
                        "mock",
                        "")
                    .list()
                    .ofMinSize(1)
                    .ofMaxSize(2),
                group,
                Arbitraries.of(true, false))
            .as(
                (groups, g, json) -> {
                  Map<String, Object> root = new LinkedHashMap<>();
                  for (String n : groups) {
                    root.put(n, g);
                  }
                  try {
                    return (json ? JSON : YAML).writeValueAsBytes(root);
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                });
    Arbitrary<byte[]> mutated =
        Combinators.combine(
                document,
                Arbitraries.integers().between(0, 5),
                Arbitraries.of(SNIPPETS),
                Arbitraries.integers().between(0, 100_000),
                Arbitraries.integers().between(0, 100_000))
            .as(RestFuzzTest::mutate);
    Arbitrary<byte[]> body =
        Arbitraries.frequencyOf(
            Tuple.of(3, document),
            Tuple.of(6, mutated),
            Tuple.of(1, Arbitraries.bytes().array(byte[].class).ofMaxSize(200)));
    Arbitrary<String> type =
        Arbitraries.of(
            "application/yaml",
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            null);
    return Combinators.combine(body, type, Arbitraries.integers().between(0, 9))
        .as((b, t, r) -> new BodyProbe(b, t, r == 0));
  }

  /** One of a few mutations of {@code doc} at positions {@code a} and {@code b}. */
  static byte[] mutate(byte[] doc, int kind, String snippet, int a, int b) {
    int n = doc.length;
    int i = n == 0 ? 0 : a % (n + 1);
    int j = n == 0 ? 0 : b % (n + 1);
    int from = Math.min(i, j);
    int to = Math.max(i, j);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    switch (kind) {
      case 0 -> { // insert a snippet
        out.write(doc, 0, i);
        out.writeBytes(snippet.getBytes(StandardCharsets.UTF_8));
        out.write(doc, i, n - i);
      }
      case 1 -> { // delete a range
        out.write(doc, 0, from);
        out.write(doc, to, n - to);
      }
      case 2 -> { // duplicate a range
        out.write(doc, 0, to);
        out.write(doc, from, to - from);
        out.write(doc, to, n - to);
      }
      case 3 -> out.write(doc, 0, i); // truncate
      case 4 -> { // an invalid UTF-8 byte
        out.write(doc, 0, i);
        out.write(0xC3);
        out.write(0x28);
        out.write(doc, i, n - i);
      }
      default -> { // deep nesting
        out.write(doc, 0, i);
        int depth = 1 + b % 3000;
        out.writeBytes("[".repeat(depth).getBytes(StandardCharsets.US_ASCII));
        out.write(doc, i, n - i);
      }
    }
    return out.toByteArray();
  }
}
