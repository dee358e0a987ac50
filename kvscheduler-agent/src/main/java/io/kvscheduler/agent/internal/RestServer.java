package io.kvscheduler.agent.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvscheduler.agent.internal.ConfigFormat.ConfigException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's REST API (JDK HTTP server), following vpp-agent's conventions ({@code
 * spec/interop.md} §2.1): exact paths, a wrong method gets 405, an unknown path 404; JSON indented
 * as Go's {@code MarshalIndent(v, "", "  ")} with a trailing newline.
 *
 * <ul>
 *   <li>{@code GET /info/version}: the agent's version (the keys of vpp-agent's, values honest:
 *       empty when unknown);
 *   <li>{@code GET /configuration}: the desired NB configuration of all sources in the YAML
 *       configuration format;
 *   <li>{@code PUT /configuration}: YAML (or JSON) in that format, applied as data source {@code
 *       grpc} — a change, or with query parameter {@code replace} a resync of that source; waits
 *       for the transaction; 200 {@code {}}, or 500 with a JSON string naming the problem.
 * </ul>
 *
 * More endpoints can be added with {@link #route}.
 */
public final class RestServer implements NorthboundSource {
  /** The data source label of configuration pushed with {@code PUT /configuration}. */
  public static final String SOURCE = "rest";

  private static final Logger LOG = LoggerFactory.getLogger(RestServer.class);
  private static final String JSON_TYPE = "application/json; charset=UTF-8";
  private static final String YAML_TYPE = "application/yaml; charset=UTF-8";
  private static final String TEXT_TYPE = "text/plain; charset=UTF-8";
  private static final Duration TXN_WAIT = Duration.ofMinutes(2);

  /** Go-style indented JSON: {@code "key": value}, two-space indent, {@code {}} when empty. */
  public static final ObjectWriter JSON = new ObjectMapper().writer(
      new DefaultPrettyPrinter(Separators.createDefaultInstance()
          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
          .withObjectEmptySeparator("")
          .withArrayEmptySeparator(""))
          .withObjectIndenter(new DefaultIndenter("  ", "\n"))
          .withArrayIndenter(new DefaultIndenter("  ", "\n")));

  private final String address;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final Map<String, Map<String, Handler>> routes = new ConcurrentHashMap<>();
  private HttpServer server;
  private ExecutorService executor;

  /** Handles one request. */
  @FunctionalInterface
  public interface Handler {
    Response handle(HttpExchange exchange) throws Exception;
  }

  /** A response: status, content type and body. */
  public record Response(int status, String contentType, byte[] body) {
    /** Go-style indented JSON of {@code value}, with a trailing newline. */
    public static Response json(int status, Object value) {
      try {
        return new Response(status, JSON_TYPE,
            (JSON.writeValueAsString(value) + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("cannot write JSON", e);
      }
    }

    public static Response text(int status, String text) {
      return new Response(status, TEXT_TYPE, text.getBytes(StandardCharsets.UTF_8));
    }
  }

  /**
   * @param address {@code host:port}, {@code :port} (every interface) or {@code [v6]:port}; port
   *     0 picks a free port
   */
  public RestServer(String address, ModelRegistry models, Northbound northbound) {
    this.address = Objects.requireNonNull(address, "address");
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    route("GET", "/info/version", ex -> Response.json(200, version()));
    route("GET", "/configuration", ex -> getConfiguration());
    route("PUT", "/configuration", this::putConfiguration);
  }

  @Override
  public String name() {
    return "rest";
  }

  /** Adds (or replaces) the handler of {@code method} on the exact path {@code path}. */
  public void route(String method, String path, Handler handler) {
    routes.computeIfAbsent(path, p -> new ConcurrentHashMap<>())
        .put(method.toUpperCase(Locale.ROOT), handler);
  }

  @Override
  public void start() throws IOException {
    InetSocketAddress bind = parseAddress(address);
    try {
      server = HttpServer.create(bind, 0);
    } catch (IOException e) {
      throw new IOException("REST API: cannot listen on " + address + ": " + e.getMessage(), e);
    }
    AtomicInteger n = new AtomicInteger();
    executor = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "kvs-rest-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", this::dispatch);
    server.start();
    LOG.info("REST API listening on {}:{}", server.getAddress().getHostString(), port());
  }

  /** The port listened on (after start). */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
    }
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  /**
   * Checks that {@code address} is {@code host:port}, {@code :port} or {@code [v6]:port}, without
   * resolving the host.
   *
   * @throws IllegalArgumentException naming the address when it is none of these
   */
  public static void checkAddress(String address) {
    parse(address, false);
  }

  /** Parses {@code host:port}, {@code :port} or {@code [v6]:port}, resolving the host. */
  static InetSocketAddress parseAddress(String address) {
    return parse(address, true);
  }

  private static InetSocketAddress parse(String address, boolean resolve) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("REST address '" + address + "' is not host:port");
    }
    String host = address.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("REST address '" + address + "': bad port", e);
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("REST address '" + address + "': bad port");
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (host.isEmpty()) {
      return new InetSocketAddress(port);
    }
    return resolve ? new InetSocketAddress(host, port)
        : InetSocketAddress.createUnresolved(host, port);
  }

  private void dispatch(HttpExchange ex) throws IOException {
    try (ex) {
      Response r;
      Map<String, Handler> byMethod = routes.get(ex.getRequestURI().getPath());
      if (byMethod == null) {
        r = Response.text(404, "404 page not found\n");
      } else {
        Handler h = byMethod.get(ex.getRequestMethod().toUpperCase(Locale.ROOT));
        if (h == null) {
          ex.getResponseHeaders().set("Allow", String.join(", ", byMethod.keySet()));
          r = new Response(405, null, new byte[0]);
        } else {
          try {
            r = h.handle(ex);
          } catch (Exception | Error e) {
            LOG.error("REST {} {} failed", ex.getRequestMethod(), ex.getRequestURI(), e);
            r = Response.json(500, Map.of("Error", String.valueOf(e.getMessage())));
          }
        }
      }
      if (r.contentType() != null) {
        ex.getResponseHeaders().set("Content-Type", r.contentType());
      }
      boolean head = ex.getRequestMethod().equalsIgnoreCase("HEAD");
      ex.sendResponseHeaders(r.status(), head || r.body().length == 0 ? -1 : r.body().length);
      if (!head && r.body().length > 0) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(r.body());
        }
      }
    }
  }

  private Response getConfiguration() {
    String yaml = ConfigFormat.toYaml(ConfigFormat.encode(models, northbound.desired()));
    return new Response(200, YAML_TYPE, yaml.getBytes(StandardCharsets.UTF_8));
  }

  private Response putConfiguration(HttpExchange ex) throws IOException, InterruptedException {
    String body;
    try (InputStream in = ex.getRequestBody()) {
      body = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
          .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(in.readAllBytes())).toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      return error("can't unmarshall input yaml data into dynamically created config: the"
          + " request body is not UTF-8 text");
    }
    boolean replace = hasQueryParameter(ex.getRequestURI().getRawQuery(), "replace");
    String type = ex.getRequestHeaders().getFirst("Content-Type");
    boolean json = type != null && type.toLowerCase(java.util.Locale.ROOT).contains("json");
    Map<String, Object> values;
    try {
      // JSON is YAML too, except for tabs, which JSON allows between tokens and YAML does not
      ConfigDocument doc = json ? ConfigDocument.parseJson(body) : ConfigDocument.parseYaml(body);
      values = ConfigFormat.decodeYamlConfig(models, doc);
    } catch (ConfigDocument.SyntaxException e) {
      return error("can't unmarshall input yaml data into dynamically created config: "
          + e.getMessage() + (e.line() > 0 ? " (line " + e.line() + ")" : ""));
    } catch (ConfigException e) {
      return error("invalid configuration: " + e.getMessage()
          + (e.line() > 0 ? " (line " + e.line() + ")" : ""));
    }
    CompletableFuture<Long> txn = replace
        ? northbound.resync(SOURCE, values)
        : northbound.change(SOURCE, values);
    try {
      txn.get(TXN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TransactionException te && !te.isInitError()) {
        // a replace commits every source's values: failures of values only other sources give
        // are not this request's (derived values, which no source gives, are kept)
        Map<String, Object> desired = northbound.desired();
        List<KeyError> mine = te.keyErrors().stream()
            .filter(k -> values.containsKey(k.key()) || !desired.containsKey(k.key())).toList();
        if (mine.isEmpty()) {
          return done();
        }
        return error(new TransactionException(te.seqNum(), mine).getMessage());
      }
      return error(String.valueOf(e.getCause().getMessage()));
    } catch (TimeoutException e) {
      return error("the transaction did not finish within " + TXN_WAIT.toSeconds() + " s");
    }
    return done();
  }

  /** 200 with the empty JSON object: the transaction went through. */
  private static Response done() {
    return new Response(200, JSON_TYPE, "{}\n".getBytes(StandardCharsets.UTF_8));
  }

  /** 500 with a JSON string body, as vpp-agent's {@code /configuration} errors. */
  private static Response error(String message) {
    LOG.warn("REST PUT /configuration: {}", message);
    return Response.json(500, message + "\n");
  }

  static boolean hasQueryParameter(String rawQuery, String name) {
    if (rawQuery == null) {
      return false;
    }
    for (String part : rawQuery.split("&")) {
      int eq = part.indexOf('=');
      if ((eq < 0 ? part : part.substring(0, eq)).equals(name)) {
        return true;
      }
    }
    return false;
  }

  /** The version document: the keys of vpp-agent's {@code types.Version}, in its order. */
  static Map<String, Object> version() {
    Map<String, Object> v = new LinkedHashMap<>();
    Properties build = buildInfo();
    v.put("App", "kvscheduler-agent");
    v.put("Version", build.getProperty("version", ""));
    v.put("GitCommit", "");
    v.put("GitBranch", "");
    v.put("BuildUser", "");
    v.put("BuildHost", "");
    v.put("BuildTime", 0L);
    v.put("GoVersion", "");
    v.put("OS", System.getProperty("os.name", "").toLowerCase(Locale.ROOT));
    String arch = System.getProperty("os.arch", "");
    v.put("Arch", switch (arch) {
      case "x86_64" -> "amd64";
      case "aarch64" -> "arm64";
      default -> arch;
    });
    v.put("APIVersion", "");
    v.put("OSType", "");
    return v;
  }

  private static Properties buildInfo() {
    Properties p = new Properties();
    try (InputStream in = RestServer.class.getResourceAsStream(
        "/io/kvscheduler/agent/build.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      LOG.debug("cannot read build.properties", e);
    }
    if (p.getProperty("version", "").startsWith("${")) {
      p.remove("version");
    }
    return p;
  }
}
