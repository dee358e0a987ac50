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
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
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
 *       rest} — a change, or with query parameter {@code replace} ({@code replace}, {@code
 *       replace=}, {@code =true} or {@code =1}; {@code =false} or {@code =0} is a change) a
 *       resync of that source; waits for the transaction; 200 {@code {}}, 400 for a bad {@code
 *       replace} value, or 500 with a JSON string naming the problem.
 * </ul>
 *
 * <p>A slow or stalled client cannot hold the API for long: requests are served by up to {@link
 * Limits#threads} threads (more wait in a bounded queue; beyond it a connection is closed at
 * once); a request whose line, headers and body have not all arrived within {@link
 * Limits#ioTimeout} of a thread taking it up, or whose response is not taken within that time,
 * has its connection closed; a body larger than {@link Limits#maxBodyBytes} gets 413 without
 * being read. Every body is read before its handler runs (the handler reads it from memory).
 *
 * <p>More endpoints can be added with {@link #route}.
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

  /**
   * How much the server serves at once and how long and how large a request may be.
   *
   * @param threads requests served at the same time (each waits for its transaction)
   * @param queue requests waiting for a thread; a connection beyond it is closed at once
   * @param ioTimeout time for a request's line, headers and body to arrive, counted from when a
   *     thread takes the request up (its first byte has come), and then, separately, for its
   *     response to be taken; when it passes, the connection is closed
   * @param maxBodyBytes largest request body; a larger one gets 413
   */
  public record Limits(int threads, int queue, Duration ioTimeout, long maxBodyBytes) {
    /**
     * 32 threads, 256 waiting, 60 s to send a request and 60 s to take its response, bodies up
     * to {@link ConfigDocument#MAX_CODE_POINTS} bytes (256 MiB).
     */
    public static final Limits DEFAULT =
        new Limits(32, 256, Duration.ofSeconds(60), ConfigDocument.MAX_CODE_POINTS);

    public Limits {
      if (threads < 1 || queue < 0 || ioTimeout.isNegative() || ioTimeout.isZero()
          || maxBodyBytes < 0) {
        throw new IllegalArgumentException("REST limits: threads " + threads + ", queue " + queue
            + ", I/O timeout " + ioTimeout + ", body limit " + maxBodyBytes
            + " (threads and the timeout must be positive, the queue and the body limit not"
            + " negative)");
      }
    }
  }

  private final String address;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final Limits limits;
  private final Map<String, Map<String, Handler>> routes = new ConcurrentHashMap<>();
  /** The deadline of the request the current thread is reading, if any. */
  private final ThreadLocal<Deadline> reading = new ThreadLocal<>();
  /** Held while a PUT delivers to the northbound; {@link #close} waits for it. */
  private final Object delivering = new Object();
  private volatile boolean closed;
  private HttpServer server;
  private ThreadPoolExecutor executor;
  private ScheduledExecutorService deadlines;

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
    this(address, models, northbound, Limits.DEFAULT);
  }

  /** A server with other {@link Limits} than the default ones. */
  public RestServer(String address, ModelRegistry models, Northbound northbound, Limits limits) {
    this.address = Objects.requireNonNull(address, "address");
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    this.limits = Objects.requireNonNull(limits, "limits");
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
    executor = new ThreadPoolExecutor(limits.threads(), limits.threads(), 60, TimeUnit.SECONDS,
        limits.queue() == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(limits.queue()),
        r -> {
          Thread t = new Thread(r, "kvs-rest-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    executor.allowCoreThreadTimeOut(true);
    ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "kvs-rest-deadlines");
      t.setDaemon(true);
      return t;
    });
    // every request schedules two deadlines and cancels them: a cancelled one leaves the queue
    // at once instead of staying there, with its thread, until it would have expired
    timers.setRemoveOnCancelPolicy(true);
    deadlines = timers;
    // the server reads a request's line and headers in the executor's thread, then calls the
    // handler there: the deadline starts with the task, and dispatch() ends it once the body is
    // read. A rejected task (threads and queue full) makes the server close the connection
    server.setExecutor(task -> executor.execute(() -> runExchange(task)));
    server.createContext("/", this::dispatch);
    server.start();
    LOG.info("REST API listening on {}:{}", server.getAddress().getHostString(), port());
  }

  /**
   * A time limit on the current thread's reading of a request or writing of a response: when it
   * passes before {@link #finish}, the thread is interrupted, which closes the connection (the
   * server reads and writes an interruptible channel) and ends the blocked read or write with an
   * exception.
   */
  private static final class Deadline {
    private final Thread thread = Thread.currentThread();
    private ScheduledFuture<?> timer;
    private boolean finished;
    private boolean expired;

    /** The deadline passed: interrupts the thread unless it finished. */
    synchronized void expire() {
      if (!finished) {
        expired = true;
        thread.interrupt();
      }
    }

    /**
     * Ends the deadline; no interrupt comes after this returns (one that came is the caller's
     * to clear).
     *
     * @return false when the deadline had passed (the connection is being closed)
     */
    synchronized boolean finish() {
      finished = true;
      if (timer != null) {
        timer.cancel(false);
      }
      return !expired;
    }
  }

  /** A deadline of {@link Limits#ioTimeout} for the current thread; null once closed. */
  private Deadline startDeadline() {
    Deadline d = new Deadline();
    synchronized (d) {
      try {
        d.timer = deadlines.schedule(d::expire, limits.ioTimeout().toMillis(),
            TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        return null; // closed
      }
    }
    return d;
  }

  /** Runs one exchange of the server (read the request, call {@link #dispatch}). */
  private void runExchange(Runnable exchange) {
    Deadline deadline = startDeadline();
    reading.set(deadline);
    try {
      exchange.run();
    } finally {
      reading.remove();
      if (deadline != null && !deadline.finish()) {
        LOG.warn("REST: a request did not arrive within {} ms; its connection was closed",
            limits.ioTimeout().toMillis());
      }
      Thread.interrupted(); // the interrupt of an expired deadline is not the next task's
    }
  }

  /** The port listened on (after start). */
  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Stops: no request is accepted or delivered any more (a PUT still being read or decoded gets
   * 503); waits for a delivery under way to be queued.
   */
  @Override
  public void close() {
    closed = true;
    synchronized (delivering) {
      // a PUT that was delivering has queued its transaction
    }
    if (server != null) {
      server.stop(0);
    }
    if (executor != null) {
      executor.shutdownNow();
    }
    if (deadlines != null) {
      deadlines.shutdownNow();
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
    Deadline writing = null;
    try {
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
          r = readBody(ex);
          if (r == null) {
            try {
              r = h.handle(ex);
            } catch (Exception | Error e) {
              LOG.error("REST {} {} failed", ex.getRequestMethod(), ex.getRequestURI(), e);
              r = Response.json(500, Map.of("Error", String.valueOf(e.getMessage())));
            }
          }
        }
      }
      // the request is read (or left unread, to be drained when the exchange closes): writing
      // the response and closing get a deadline of their own, so that a client that does not
      // take its response cannot hold the thread either
      Deadline read = reading.get();
      if (read != null && !read.finish()) {
        throw new IOException("REST: the request did not arrive within "
            + limits.ioTimeout().toMillis() + " ms");
      }
      writing = startDeadline();
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
    } finally {
      try {
        ex.close();
      } finally {
        if (writing != null && !writing.finish()) {
          LOG.warn("REST {} {}: the response was not taken within {} ms; the connection was"
              + " closed", ex.getRequestMethod(), ex.getRequestURI().getPath(),
              limits.ioTimeout().toMillis());
        }
      }
    }
  }

  /**
   * Reads the request body into memory (the handler then reads it from there) within the read
   * deadline, and ends the deadline.
   *
   * @return null when read, else the response: 413 when it is larger than the limit (checked
   *     before reading when the request says its length)
   * @throws IOException when the deadline passed or the client went away: the connection is
   *     closed, no response
   */
  private Response readBody(HttpExchange ex) throws IOException {
    long max = limits.maxBodyBytes();
    String declared = ex.getRequestHeaders().getFirst("Content-Length");
    byte[] body = null;
    if (declared == null || parseLength(declared) <= max) {
      try (InputStream in = ex.getRequestBody()) {
        body = in.readNBytes((int) Math.min(max + 1, Integer.MAX_VALUE - 8));
      } catch (IOException e) {
        Deadline d = reading.get();
        if (d != null && !d.finish()) {
          throw new IOException("REST: the request did not arrive within "
              + limits.ioTimeout().toMillis() + " ms", e);
        }
        throw e;
      }
    }
    if (body == null || body.length > max) {
      // not read: closing the exchange drains what the client still sends, within the deadline
      // that writing the response starts
      String size = body == null ? declared + " bytes" : "more than " + max + " bytes";
      LOG.warn("REST {} {}: request body too large ({}, limit {} bytes)", ex.getRequestMethod(),
          ex.getRequestURI().getPath(), size, max);
      ex.getResponseHeaders().set("Connection", "close");
      return Response.json(413, "request body too large (" + size + ", limit " + max
          + " bytes)\n");
    }
    Deadline d = reading.get();
    if (d != null && !d.finish()) {
      throw new IOException("REST: the request did not arrive within "
          + limits.ioTimeout().toMillis() + " ms");
    }
    ex.setStreams(new java.io.ByteArrayInputStream(body), null);
    return null;
  }

  private static long parseLength(String value) {
    try {
      return Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE; // the server rejects it before calling us
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
    boolean replace;
    try {
      replace = booleanParameter(ex.getRequestURI().getRawQuery(), "replace");
    } catch (IllegalArgumentException e) {
      LOG.warn("REST PUT /configuration: {}", e.getMessage());
      return Response.json(400, e.getMessage() + "\n");
    }
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
    CompletableFuture<Long> txn;
    synchronized (delivering) {
      if (closed) {
        LOG.warn("REST PUT /configuration: not applied, the agent is stopping");
        return Response.json(503, "not applied: the agent is stopping\n");
      }
      txn = replace ? northbound.resync(SOURCE, values) : northbound.change(SOURCE, values);
    }
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

  /**
   * A yes/no query parameter: absent is false; given without a value, empty, {@code true} or
   * {@code 1} is true; {@code false} or {@code 0} is false (case ignored). Given more than once,
   * every occurrence must say the same.
   *
   * @throws IllegalArgumentException naming the parameter, the value and the accepted values
   */
  static boolean booleanParameter(String rawQuery, String name) {
    Boolean result = null;
    if (rawQuery == null || rawQuery.isEmpty()) {
      return false;
    }
    for (String part : rawQuery.split("&")) {
      int eq = part.indexOf('=');
      if (!decode(eq < 0 ? part : part.substring(0, eq)).equals(name)) {
        continue;
      }
      String value = eq < 0 ? "" : decode(part.substring(eq + 1));
      boolean b = switch (value.toLowerCase(Locale.ROOT)) {
        case "", "true", "1" -> true;
        case "false", "0" -> false;
        default -> throw new IllegalArgumentException("bad value '" + value + "' of query"
            + " parameter '" + name + "': accepted are '" + name + "', '" + name + "=true' or '"
            + name + "=1' (yes) and '" + name + "=false' or '" + name + "=0' (no)");
      };
      if (result != null && result != b) {
        throw new IllegalArgumentException("query parameter '" + name + "' is given twice,"
            + " with different values");
      }
      result = b;
    }
    return result != null && result;
  }

  private static String decode(String s) {
    try {
      return java.net.URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s; // a malformed escape: taken as it is (and then not accepted)
    }
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
