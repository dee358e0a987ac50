package io.kvscheduler.agent.internal.rest;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import io.javalin.Javalin;
import io.javalin.compression.CompressionStrategy;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.http.sse.SseClient;
import io.javalin.http.sse.SseHandler;
import io.kvscheduler.agent.RestSecurity;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.internal.format.ConfigFormat.ConfigException;
import io.kvscheduler.agent.internal.northbound.NorthboundSource;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.TransactionException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.BlockingArrayQueue;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's REST API on Javalin (Jetty), following vpp-agent's conventions ({@code
 * spec/interop.md} §2.1): exact paths, a wrong method gets 405, an unknown path 404; JSON indented
 * as Go's {@code MarshalIndent(v, "", " ")} with a trailing newline.
 *
 * <ul>
 *   <li>{@code GET /info/version}: the agent's version (the keys of vpp-agent's, values honest:
 *       empty when unknown);
 *   <li>{@code GET /configuration}: the desired NB configuration of all sources in the YAML
 *       configuration format;
 *   <li>{@code PUT /configuration}: YAML (or JSON) in that format, applied as data source {@code
 *       rest} — a change, or with query parameter {@code replace} ({@code replace}, {@code
 *       replace=}, {@code =true} or {@code =1}; {@code =false} or {@code =0} is a change) a resync
 *       of that source; waits for the transaction; 200 {@code {}}; 400 {@code {"Error": ...}} for a
 *       body that cannot be read or names unknown groups, models or fields (the message names the
 *       line and field and never repeats the body) and for a bad query parameter; 503 {@code
 *       {"Error": ...}} when the scheduler's transaction queue is full (nothing of the request is
 *       kept: it may be sent again, counted in {@code kvs_commits_refused_total}); 500 with a JSON
 *       string when the transaction fails.
 * </ul>
 *
 * <p>Client mistakes get 400 {@code {"Error": "..."}}: a query parameter the endpoint does not
 * know, a bad value, a malformed URL. Limits are Jetty's own settings: up to {@link Limits#threads}
 * requests are served at once (more wait for a thread), a connection idle for {@link
 * Limits#ioTimeout} is closed, a body arriving slower than {@link #MIN_DATA_RATE} bytes per second
 * (after {@link #RATE_GRACE}, from when its handler starts reading it) gets 408 and its connection
 * is closed, and a body larger than {@link Limits#maxBodyBytes} gets 413 without being read.
 * Request bodies held at once are bounded ({@link Limits#bodyBytesInFlight}, {@link
 * Limits#bodyReaders}: 503 with {@code Retry-After} beyond, before the body is read), and so are
 * the time request headers may take ({@link Limits#headerTimeout}, {@link
 * HeaderTimeoutConnectionFactory}) and the open event streams ({@link Limits#eventClients}). {@link
 * RestSecurity} adds a bearer token (401 without it), a read-only mode (403 for every mutating
 * request), TLS and the host names accepted without a token; {@link RequestGuard} refuses what a
 * browser sends on another site's behalf (421 for another {@code Host} without a token, 403 for a
 * change from another origin, 415 for a change whose body is not YAML or JSON) and sets the
 * security headers of every answer. {@code :port} listens on loopback (127.0.0.1); a warning is
 * logged when the API listens beyond loopback without a token, or with one over plain HTTP.
 *
 * <p>More endpoints are added with {@link #route} before {@link #start}; {@link #publicRoute}
 * serves a file of the web page without the token, and {@link #eventRoute} a stream of server-sent
 * events (an open stream gets a comment every {@link #EVENT_HEARTBEAT}, so that the idle timeout
 * does not close it; each stream is written from a thread of its own, and a client that lets more
 * than {@link #EVENT_BACKLOG} events pile up is disconnected).
 *
 * <p>Longer than our usual limit: the server's set-up (limits, TLS, token, JSON errors) and the
 * {@code /configuration} endpoints it has always served, whose error handling is most of it.
 */
public final class RestServer implements NorthboundSource {
  /** The data source label of configuration pushed with {@code PUT /configuration}. */
  public static final String SOURCE = "rest";

  /** Slowest accepted upload of a request body, in bytes per second (a slow-client limit). */
  public static final long MIN_DATA_RATE = 1024;

  /** Longest wait of a request for a slot of {@link Limits#bodyReaders} before its 503. */
  static final Duration READER_WAIT = Duration.ofMillis(100);

  /** Time a body may take before {@link #MIN_DATA_RATE} applies. */
  static final Duration RATE_GRACE = Duration.ofSeconds(5);

  private static final Logger LOG = LoggerFactory.getLogger(RestServer.class);
  static final String JSON_TYPE = "application/json; charset=UTF-8";

  /** Request attribute set once a response is written (the error handlers then add nothing). */
  private static final String RESPONSE_SENT = "kvs.response-sent";

  static final String YAML_TYPE = "application/yaml; charset=UTF-8";
  static final String TEXT_TYPE = "text/plain; charset=UTF-8";
  private static final Duration TXN_WAIT = Duration.ofMinutes(2);

  /** Acceptor and selector threads Jetty takes from the pool besides the request threads. */
  private static final int IO_THREADS = 2;

  /** Go-style indented JSON: {@code "key": value}, two-space indent, {@code {}} when empty. */
  public static final ObjectWriter JSON =
      new ObjectMapper()
          .writer(
              new DefaultPrettyPrinter(
                      Separators.createDefaultInstance()
                          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                          .withObjectEmptySeparator("")
                          .withArrayEmptySeparator(""))
                  .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                  .withArrayIndenter(new DefaultIndenter("  ", "\n")));

  /**
   * How much the server serves at once and how long and how large a request may be.
   *
   * @param threads requests served at the same time (each waits for its transaction)
   * @param queue connections waiting to be accepted (the listen backlog); requests that arrive
   *     while every thread is busy wait in Jetty's queue until one is free
   * @param ioTimeout how long a connection may stay idle: a request whose bytes stop arriving, or
   *     whose response is not taken, for this long has its connection closed
   * @param maxBodyBytes largest request body; a larger one gets 413
   * @param bodyBytesInFlight request body bytes held at once by all requests together: a body that
   *     would go beyond it gets 503 with {@code Retry-After} (a body alone is always admitted, up
   *     to {@link #maxBodyBytes})
   * @param bodyReaders requests receiving their bodies at the same time (a body that has arrived
   *     whole needs no slot): one more waits up to {@link RestServer#READER_WAIT} for a slot, then
   *     gets 503 with {@code Retry-After}, so that slow uploads hold at most this many threads and
   *     reads always find one
   * @param eventClients server-sent event streams open at once; one more gets 503
   * @param headerTimeout longest time from a connection's first byte of a request to the end of its
   *     headers (and from the connection's opening to its first byte): a slower connection is
   *     closed
   */
  public record Limits(
      int threads,
      int queue,
      Duration ioTimeout,
      long maxBodyBytes,
      long bodyBytesInFlight,
      int bodyReaders,
      int eventClients,
      Duration headerTimeout) {
    /**
     * 32 threads, a backlog of 256, 60 s idle at most, bodies up to {@link
     * ConfigDocument#MAX_CODE_POINTS} bytes (256 MiB), 64 MiB of bodies in flight, 8 requests
     * reading bodies, 64 event streams, 10 s for request headers.
     */
    public static final Limits DEFAULT =
        new Limits(32, 256, Duration.ofSeconds(60), ConfigDocument.MAX_CODE_POINTS);

    public Limits {
      if (threads < 1
          || queue < 0
          || ioTimeout.isNegative()
          || ioTimeout.isZero()
          || maxBodyBytes < 0
          || bodyBytesInFlight < 0
          || bodyReaders < 1
          || eventClients < 0
          || headerTimeout.isNegative()
          || headerTimeout.isZero()) {
        throw new IllegalArgumentException(
            "REST limits: threads "
                + threads
                + ", queue "
                + queue
                + ", I/O timeout "
                + ioTimeout
                + ", body limit "
                + maxBodyBytes
                + ", body bytes in flight "
                + bodyBytesInFlight
                + ", body readers "
                + bodyReaders
                + ", event clients "
                + eventClients
                + ", header timeout "
                + headerTimeout
                + " (threads, body readers and the timeouts must be positive, the rest not"
                + " negative)");
      }
    }

    /**
     * Limits with these four and the defaults of the others: 64 MiB of bodies in flight, a quarter
     * of the threads (at least one) reading bodies, 64 event streams, 10 s for request headers.
     */
    public Limits(int threads, int queue, Duration ioTimeout, long maxBodyBytes) {
      this(
          threads,
          queue,
          ioTimeout,
          maxBodyBytes,
          64L << 20,
          Math.max(1, threads / 4),
          64,
          Duration.ofSeconds(10));
    }

    /** These limits with other bounds on the request bodies read at once. */
    public Limits withBodies(long bytesInFlight, int readers) {
      return new Limits(
          threads,
          queue,
          ioTimeout,
          maxBodyBytes,
          bytesInFlight,
          readers,
          eventClients,
          headerTimeout);
    }

    /** These limits with another bound on the open event streams. */
    public Limits withEventClients(int clients) {
      return new Limits(
          threads,
          queue,
          ioTimeout,
          maxBodyBytes,
          bodyBytesInFlight,
          bodyReaders,
          clients,
          headerTimeout);
    }

    /** These limits with another time for request headers. */
    public Limits withHeaderTimeout(Duration timeout) {
      return new Limits(
          threads,
          queue,
          ioTimeout,
          maxBodyBytes,
          bodyBytesInFlight,
          bodyReaders,
          eventClients,
          timeout);
    }
  }

  /** Handles one request whose query parameters were checked against the route's. */
  @FunctionalInterface
  public interface Handler {
    Response handle(Request request) throws Exception;
  }

  /**
   * One request as handlers see it: its checked query parameters, its body (read within the limit)
   * and its headers.
   */
  public static final class Request {
    private final Context ctx;
    private final byte[] body;

    Request(Context ctx, byte[] body) {
      this.ctx = ctx;
      this.body = body;
    }

    /** The query parameter's values, in the order given; empty when absent. */
    public List<String> params(String name) {
      return ctx.queryParams(name);
    }

    /** The query parameter's single value; empty when absent; 400 when given twice. */
    public Optional<String> param(String name) {
      List<String> v = ctx.queryParams(name);
      if (v.size() > 1) {
        throw new BadRequest(
            "query parameter '" + name + "' is given " + v.size() + " times (at most once)");
      }
      return v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
    }

    /** Whether the query names {@code name} (even without a value). */
    public boolean has(String name) {
      return ctx.queryParamMap().containsKey(name);
    }

    public String rawQuery() {
      return ctx.queryString();
    }

    public String header(String name) {
      return ctx.header(name);
    }

    public byte[] body() {
      return body;
    }

    public String path() {
      return ctx.path();
    }
  }

  /** A client mistake: 400 {@code {"Error": message}}. */
  public static final class BadRequest extends RuntimeException {
    private final int status;

    public BadRequest(String message) {
      this(400, message);
    }

    public BadRequest(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /** Writes a response body to the client's stream. */
  @FunctionalInterface
  public interface Body {
    void writeTo(OutputStream out) throws IOException;
  }

  /** Writes a JSON body token by token with a generator of {@link #JSON}'s layout. */
  @FunctionalInterface
  public interface JsonBody {
    void writeTo(JsonGenerator g) throws IOException;
  }

  /** A response: status, content type and a body written as it is sent. */
  public record Response(int status, String contentType, Body body) {
    /** Go-style indented JSON of {@code value}, with a trailing newline, written as it goes. */
    public static Response json(int status, Object value) {
      return jsonStream(status, g -> JSON.writeValue(g, value));
    }

    /**
     * Go-style indented JSON that {@code body} writes straight to the client's stream with a
     * generator (no object tree in between), with a trailing newline.
     */
    public static Response jsonStream(int status, JsonBody body) {
      return new Response(
          status,
          JSON_TYPE,
          out -> {
            try (JsonGenerator g = JSON.createGenerator(out)) {
              g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
              body.writeTo(g);
            }
            out.write('\n');
          });
    }

    /**
     * A JSON array of {@code items}, each turned into JSON by {@code toJson} only as it is written:
     * a large answer streams instead of being built in memory first.
     */
    public static <T> Response jsonArray(
        int status, Iterable<T> items, Function<? super T, ?> toJson) {
      // Jackson writes an Iterable element by element: each is converted only when written
      Iterable<Object> lazy =
          () ->
              new Iterator<>() {
                private final Iterator<T> it = items.iterator();

                @Override
                public boolean hasNext() {
                  return it.hasNext();
                }

                @Override
                public Object next() {
                  return toJson.apply(it.next());
                }
              };
      return json(status, lazy);
    }

    /** {@code {"Error": message}} with {@code status}. */
    public static Response error(int status, String message) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("Error", message);
      return json(status, m);
    }

    public static Response text(int status, String text) {
      return bytes(status, TEXT_TYPE, text.getBytes(StandardCharsets.UTF_8));
    }

    public static Response bytes(int status, String type, byte[] body) {
      return new Response(status, type, out -> out.write(body));
    }
  }

  private record Route(
      String method, String path, Set<String> params, boolean mutating, Handler handler) {}

  /**
   * A source of server-sent events: every event's data (one line of JSON) goes to each subscribed
   * client until its handle is closed.
   */
  @FunctionalInterface
  public interface EventStream {
    AutoCloseable subscribe(Consumer<String> client);
  }

  /** How often an open event stream gets a comment, so that its idle connection stays open. */
  static final Duration EVENT_HEARTBEAT = Duration.ofSeconds(15);

  /** Events waiting for one event client; a client that lets more pile up is disconnected. */
  static final int EVENT_BACKLOG = 64;

  private final String address;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final Limits limits;
  private final RestSecurity security;
  private final List<Route> routes = new ArrayList<>();

  /** Paths served without the bearer token: the web page's files, which hold no data. */
  private final Set<String> publicPaths = new HashSet<>();

  private final Map<String, EventStream> eventRoutes = new LinkedHashMap<>();
  private final Set<EventSender> eventClients = ConcurrentHashMap.newKeySet();
  private ScheduledExecutorService heartbeat;

  /** Held while a PUT delivers to the northbound; {@link #close} waits for it. */
  private final Object delivering = new Object();

  private volatile boolean closed;
  private Javalin app;
  private byte[] token;

  /** Names of this server a {@code Host} header may give without a token (set at start). */
  private RequestGuard guard;

  /** Bytes of request bodies being read or held by their handlers. */
  private final AtomicLong bodyBytes = new AtomicLong();

  private final Semaphore bodyReaders;
  private final Semaphore eventSlots;

  /**
   * @param address {@code host:port}, {@code :port} (loopback, 127.0.0.1), {@code 0.0.0.0:port}
   *     (every interface) or {@code [v6]:port}; port 0 picks a free port
   */
  public RestServer(String address, ModelRegistry models, Northbound northbound) {
    this(address, models, northbound, Limits.DEFAULT);
  }

  /** A server with other {@link Limits} than the default ones. */
  public RestServer(String address, ModelRegistry models, Northbound northbound, Limits limits) {
    this(address, models, northbound, limits, RestSecurity.NONE);
  }

  /** A server with other limits and security settings. */
  public RestServer(
      String address,
      ModelRegistry models,
      Northbound northbound,
      Limits limits,
      RestSecurity security) {
    this.address = Objects.requireNonNull(address, "address");
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.security = Objects.requireNonNull(security, "security");
    this.bodyReaders = new Semaphore(limits.bodyReaders());
    this.eventSlots = new Semaphore(limits.eventClients());
    route("GET", "/info/version", Set.of(), r -> Response.json(200, version()));
    route("GET", "/configuration", Set.of(), r -> getConfiguration());
    mutatingRoute("PUT", "/configuration", Set.of("replace"), this::putConfiguration);
  }

  @Override
  public String name() {
    return "rest";
  }

  /**
   * Adds the handler of {@code method} on the exact path {@code path}, accepting the query
   * parameters {@code params} (any other is a 400). Call before {@link #start}.
   */
  public void route(String method, String path, Set<String> params, Handler handler) {
    add(method, path, params, false, handler);
  }

  /** Like {@link #route}, for a request that changes something (refused in read-only mode). */
  public void mutatingRoute(String method, String path, Set<String> params, Handler handler) {
    add(method, path, params, true, handler);
  }

  /**
   * Like {@link #route} for a GET that needs no bearer token (a file of the web page, which holds
   * no data: the page asks for the token before it reads anything).
   */
  public synchronized void publicRoute(String path, Handler handler) {
    add("GET", path, Set.of(), false, handler);
    publicPaths.add(path);
  }

  /**
   * Serves {@code stream} as server-sent events at {@code GET path} (with the bearer token when one
   * is configured); an open stream gets a comment every {@link #EVENT_HEARTBEAT}.
   */
  public synchronized void eventRoute(String path, EventStream stream) {
    if (app != null) {
      throw new IllegalStateException("routes are added before the REST server starts");
    }
    eventRoutes.put(path, Objects.requireNonNull(stream, "stream"));
  }

  /**
   * Serves an event stream within {@link Limits#eventClients}: one more gets 503 with {@code
   * Retry-After}.
   */
  private void serveEventsWithinLimit(Context ctx, SseHandler sse) throws Exception {
    if (!eventSlots.tryAcquire()) {
      LOG.warn(
          "REST GET {}: refused, {} event streams are open (the limit)",
          ctx.path(),
          limits.eventClients());
      ctx.header("Retry-After", "5");
      send(
          ctx,
          Response.error(
              503,
              "too many event streams open ("
                  + limits.eventClients()
                  + ", the limit); try again later"));
      return;
    }
    boolean served = false;
    try {
      sse.handle(ctx);
      served = true;
    } finally {
      if (!served) {
        eventSlots.release();
      }
    }
  }

  private void serveEvents(SseClient client, EventStream stream) {
    client.keepAlive();
    // sent from a thread of the client's own: one that does not read holds up no other
    EventSender sender = new EventSender(client, EVENT_BACKLOG);
    eventClients.add(sender);
    AutoCloseable subscription =
        stream.subscribe(
            data -> {
              if (!sender.event("status", data)) {
                throw new IllegalStateException("event client gone");
              }
            });
    AtomicBoolean released = new AtomicBoolean();
    // the one close callback of the client (another would replace it)
    client.onClose(
        () -> {
          if (released.compareAndSet(false, true)) {
            eventSlots.release();
          }
          eventClients.remove(sender);
          sender.close();
          try {
            subscription.close();
          } catch (Exception e) {
            LOG.debug("closing an event subscription failed", e);
          }
        });
  }

  private synchronized void add(
      String method, String path, Set<String> params, boolean mutating, Handler handler) {
    if (app != null) {
      throw new IllegalStateException("routes are added before the REST server starts");
    }
    routes.add(
        new Route(method.toUpperCase(Locale.ROOT), path, Set.copyOf(params), mutating, handler));
  }

  @Override
  public synchronized void start() throws IOException {
    InetSocketAddress bind = parseAddress(address);
    token = security.loadToken();
    guard = new RequestGuard(bind, security.allowedHosts());
    SslContextFactory.Server tls =
        security.tlsEnabled() ? PemTls.serverContext(security.tlsCert(), security.tlsKey()) : null;
    QueuedThreadPool pool =
        new QueuedThreadPool(
            limits.threads() + IO_THREADS,
            Math.min(2, limits.threads() + IO_THREADS),
            (int) Duration.ofMinutes(1).toMillis(),
            new BlockingArrayQueue<>(64, 64));
    pool.setName("kvs-rest");
    pool.setDaemon(true);
    pool.setReservedThreads(0);
    Javalin created =
        Javalin.create(
            config -> {
              config.startup.showJavalinBanner = false;
              config.startup.showOldJavalinVersionWarning = false;
              config.http.prefer405over404 = true;
              config.http.maxRequestSize = limits.maxBodyBytes();
              config.http.compressionStrategy = CompressionStrategy.NONE;
              config.jetty.threadPool = pool;
              config.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrors()));
              config.jetty.addConnector((server, http) -> connector(server, http, bind, tls));
              config.routes.before(this::guard);
              config.routes.before(this::authenticate);
              eventRoutes.forEach(
                  (path, stream) -> {
                    SseHandler sse = new SseHandler(client -> serveEvents(client, stream));
                    config.routes.get(path, ctx -> serveEventsWithinLimit(ctx, sse));
                  });
              for (Route r : routes) {
                io.javalin.http.Handler h = ctx -> serve(r, ctx);
                switch (r.method()) {
                  case "GET" -> config.routes.get(r.path(), h);
                  case "PUT" -> config.routes.put(r.path(), h);
                  case "POST" -> config.routes.post(r.path(), h);
                  default -> throw new IllegalArgumentException("method " + r.method());
                }
              }
              // Javalin's own text for an unknown path or a wrong method is replaced by a JSON
              // error; a 404 a route answered itself (an unknown key, descriptor, transaction)
              // keeps its body, with nothing appended
              config.routes.error(
                  404,
                  ctx -> {
                    if (ctx.attribute(RESPONSE_SENT) == null) {
                      replaceResult(ctx, Response.error(404, "no such endpoint: " + ctx.path()));
                    }
                  });
              config.routes.error(
                  405,
                  ctx -> {
                    if (ctx.attribute(RESPONSE_SENT) == null) {
                      replaceResult(
                          ctx,
                          Response.error(
                              405, "method " + ctx.method() + " is not allowed on " + ctx.path()));
                    }
                  });
              config.routes.exception(
                  Exception.class,
                  (e, ctx) -> {
                    LOG.error("REST {} {} failed", ctx.method(), ctx.path(), e);
                    send(ctx, Response.error(500, String.valueOf(e.getMessage())));
                  });
            });
    try {
      created.start();
    } catch (RuntimeException e) {
      created.stop();
      throw new IOException(
          "REST API: cannot listen on "
              + address
              + ": "
              + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()),
          e);
    }
    app = created;
    if (!eventRoutes.isEmpty()) {
      heartbeat =
          Executors.newSingleThreadScheduledExecutor(
              rn -> {
                Thread t = new Thread(rn, "kvs-rest-events");
                t.setDaemon(true);
                return t;
              });
      heartbeat.scheduleAtFixedRate(
          () -> eventClients.removeIf(c -> !c.comment("keep-alive")),
          EVENT_HEARTBEAT.toMillis(),
          EVENT_HEARTBEAT.toMillis(),
          TimeUnit.MILLISECONDS);
    }
    LOG.info(
        "REST API listening on {}://{}:{}{}",
        tls != null ? "https" : "http",
        bind.getHostString(),
        port(),
        token != null ? " (bearer token required)" : "");
    warnIfExposed(bind, tls != null);
  }

  /**
   * Warns when the API is reachable from other hosts without a token, or with a token sent in clear
   * text.
   */
  private void warnIfExposed(InetSocketAddress bind, boolean tls) {
    if (bind.getAddress() == null || bind.getAddress().isLoopbackAddress()) {
      return;
    }
    String where = bind.getHostString() + ":" + port();
    if (token == null) {
      LOG.warn(
          "REST API listens on {} without a bearer token: whoever reaches this address can change"
              + " the configuration; set --rest-token-file (or KVS_REST_TOKEN), or listen on"
              + " 127.0.0.1",
          where);
    } else if (!tls) {
      LOG.warn(
          "REST API listens on {} over plain HTTP with a bearer token: the token travels in"
              + " clear text; set --rest-tls-cert and --rest-tls-key, or listen on 127.0.0.1",
          where);
    }
  }

  private ServerConnector connector(
      Server server, HttpConfiguration http, InetSocketAddress bind, SslContextFactory.Server tls) {
    http.setIdleTimeout(limits.ioTimeout().toMillis());
    http.setSendServerVersion(false);
    ServerConnector c;
    if (tls != null) {
      HttpConfiguration https = new HttpConfiguration(http);
      https.addCustomizer(new SecureRequestCustomizer(false));
      c =
          new ServerConnector(
              server,
              1,
              1,
              new SslConnectionFactory(tls, "http/1.1"),
              new HeaderTimeoutConnectionFactory(https, limits.headerTimeout()));
    } else {
      c =
          new ServerConnector(
              server, 1, 1, new HeaderTimeoutConnectionFactory(http, limits.headerTimeout()));
    }
    c.setHost(
        bind.getAddress() == null || bind.getAddress().isAnyLocalAddress()
            ? null
            : bind.getAddress().getHostAddress());
    c.setPort(bind.getPort());
    c.setIdleTimeout(limits.ioTimeout().toMillis());
    c.setAcceptQueueSize(limits.queue());
    return c;
  }

  /**
   * Adds the headers every answer carries and, without a token, refuses a request for a host this
   * server is not (421): a page of another site whose name was made to resolve to this address.
   */
  private void guard(Context ctx) {
    RequestGuard.secureHeaders(ctx);
    if (token != null) {
      return; // the token proves the request is meant for this agent
    }
    String refused = guard.hostRefusal(ctx.header("Host"));
    if (refused != null) {
      LOG.warn("REST {} {}: {}", ctx.method(), ctx.path(), refused);
      send(ctx, Response.error(421, refused));
      ctx.skipRemainingHandlers();
    }
  }

  /** 401 unless the request carries the configured bearer token (compared in constant time). */
  private void authenticate(Context ctx) {
    if (token == null || publicPaths.contains(ctx.path())) {
      return;
    }
    String h = ctx.header("Authorization");
    byte[] given =
        h != null && h.regionMatches(true, 0, "Bearer ", 0, 7)
            ? h.substring(7).strip().getBytes(StandardCharsets.UTF_8)
            : new byte[0];
    if (!MessageDigest.isEqual(given, token)) {
      ctx.header("WWW-Authenticate", "Bearer");
      send(
          ctx,
          Response.error(
              401,
              h == null
                  ? "authentication required: send the header" + " 'Authorization: Bearer <token>'"
                  : "wrong bearer token"));
      ctx.skipRemainingHandlers();
    }
  }

  private void serve(Route route, Context ctx) {
    Response r;
    try {
      r = handle(route, ctx);
    } catch (BadRequest e) {
      LOG.debug("REST {} {}: {}", ctx.method(), ctx.path(), e.getMessage());
      r = Response.error(e.status(), e.getMessage());
    } catch (IOException e) {
      // the request did not arrive in time or the client went away: its connection is closed
      LOG.warn(
          "REST {} {}: the request was not received ({}); its connection is closed",
          ctx.method(),
          ctx.path(),
          e.toString());
      return;
    } catch (Exception | Error e) {
      HttpException refused = httpException(e);
      if (refused != null) {
        // Jetty refused the request while it was read (a bad message): its status, not a 500
        LOG.warn(
            "REST {} {}: the request was refused while read ({} {})",
            ctx.method(),
            ctx.path(),
            refused.getCode(),
            refused.getReason());
        r =
            Response.error(
                refused.getCode(), "the request could not be read: " + refused.getReason());
      } else {
        LOG.error("REST {} {} failed", ctx.method(), ctx.path(), e);
        r = Response.error(500, String.valueOf(e.getMessage()));
      }
    }
    send(ctx, r);
  }

  /** The HTTP error Jetty raised for the request, found in the causes of {@code e}, or null. */
  private static HttpException httpException(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof HttpException h && h.getCode() >= 400) {
        return h;
      }
    }
    return null;
  }

  private Response handle(Route route, Context ctx) throws Exception {
    if (route.mutating() && security.readOnly()) {
      return Response.error(
          403, ctx.method() + " " + ctx.path() + " is refused: the REST API" + " is read-only");
    }
    if (route.mutating()) {
      Response refused = guard.crossSiteRefusal(ctx);
      if (refused == null) {
        refused = RequestGuard.contentTypeRefusal(ctx, route.method().equals("PUT"));
      }
      if (refused != null) {
        LOG.warn("REST {} {}: refused: {}", ctx.method(), ctx.path(), refused.status());
        return refused;
      }
    }
    String malformed = malformedEscape(ctx.queryString());
    if (malformed != null) {
      return Response.error(400, "malformed query string: " + malformed);
    }
    Map<String, List<String>> query;
    try {
      query = ctx.queryParamMap();
    } catch (RuntimeException e) {
      return Response.error(400, "malformed query string: " + e.getMessage());
    }
    for (String p : query.keySet()) {
      if (!route.params().contains(p)) {
        return Response.error(
            400,
            "unknown query parameter '"
                + p
                + "' of "
                + route.path()
                + (route.params().isEmpty()
                    ? " (it takes none)"
                    : " (accepted: " + String.join(", ", new TreeSet<>(route.params())) + ")"));
      }
    }
    byte[] body = new byte[0];
    long[] held = {0};
    try {
      if (!route.method().equals("GET")) {
        Object tooLarge = readBody(ctx, held);
        if (tooLarge instanceof Response resp) {
          return resp;
        }
        body = (byte[]) tooLarge;
      }
      return route.handler().handle(new Request(ctx, body));
    } finally {
      bodyBytes.addAndGet(-held[0]);
    }
  }

  /**
   * Counts {@code n} more bytes of a body of which {@code held[0]} are counted already, within
   * {@link Limits#bodyBytesInFlight} (a body alone is always admitted); false when they would go
   * beyond it.
   */
  private boolean reserve(long n, long[] held) {
    while (true) {
      long all = bodyBytes.get();
      if (all - held[0] > 0 && all + n > limits.bodyBytesInFlight()) {
        return false;
      }
      if (bodyBytes.compareAndSet(all, all + n)) {
        held[0] += n;
        return true;
      }
    }
  }

  /** 503 with {@code Retry-After}: the body is not read and its connection is closed. */
  private static Response busy(Context ctx, String message) {
    LOG.warn("REST {} {}: {}", ctx.method(), ctx.path(), message);
    ctx.header("Retry-After", "1");
    ctx.header("Connection", "close");
    return Response.error(503, message + "; send it again later");
  }

  /** Thrown while a chunked body is read when it grows beyond the bytes in flight allowed. */
  private static final class OverBudget extends RuntimeException {
    OverBudget() {
      super(null, null, false, false);
    }
  }

  /** What is wrong with the percent-escapes of {@code rawQuery}, or null when nothing. */
  static String malformedEscape(String rawQuery) {
    if (rawQuery == null) {
      return null;
    }
    for (int i = 0; i < rawQuery.length(); i++) {
      if (rawQuery.charAt(i) == '%') {
        if (i + 2 >= rawQuery.length()
            || Character.digit(rawQuery.charAt(i + 1), 16) < 0
            || Character.digit(rawQuery.charAt(i + 2), 16) < 0) {
          String at = rawQuery.substring(i, Math.min(rawQuery.length(), i + 3));
          return "bad percent-escape '" + at + "' at character " + (i + 1);
        }
      }
    }
    return null;
  }

  /** Sets {@code r} as the result Javalin writes, instead of what it had set. */
  private static void replaceResult(Context ctx, Response r) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    try {
      r.body().writeTo(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // not thrown by a byte array
    }
    ctx.status(r.status());
    ctx.contentType(r.contentType());
    ctx.result(body.toByteArray());
  }

  private static void send(Context ctx, Response r) {
    ctx.attribute(RESPONSE_SENT, Boolean.TRUE);
    ctx.status(r.status());
    if (r.contentType() != null) {
      ctx.contentType(r.contentType()); // Jetty spells it application/json;charset=utf-8
    }
    if (ctx.method() == HandlerType.HEAD) {
      return;
    }
    try {
      OutputStream out = ctx.outputStream();
      r.body().writeTo(out);
      out.flush();
    } catch (IOException e) {
      LOG.debug("REST {} {}: the client went away: {}", ctx.method(), ctx.path(), e.getMessage());
    }
  }

  /**
   * Reads the request body within {@link Limits#maxBodyBytes}: the bytes, or a 413 response
   * (checked before reading when the request says its length).
   */
  private Object readBody(Context ctx, long[] held) throws IOException {
    long max = limits.maxBodyBytes();
    long declared = ctx.req().getContentLengthLong();
    String size;
    if (declared > max) {
      size = declared + " bytes";
    } else if (declared == 0) {
      return new byte[0];
    } else {
      if (declared > 0 && !reserve(declared, held)) {
        return busy(ctx, inFlightMessage(declared + " bytes"));
      }
      InputStream in = ctx.req().getInputStream();
      // a body that has arrived whole is read at once, without a reader's slot
      boolean slot = declared <= 0 || in.available() < declared;
      if (slot && !awaitReader()) {
        in.close();
        return busy(
            ctx,
            "request body not read: "
                + limits.bodyReaders()
                + " requests are receiving their bodies already (the limit)");
      }
      byte[] body;
      try (in) {
        body =
            readAtMinimumRate(
                in,
                (int) Math.min(max + 1, Integer.MAX_VALUE - 8),
                declared,
                declared >= 0
                    ? n -> {}
                    : n -> {
                      if (!reserve(n, held)) {
                        throw new OverBudget();
                      }
                    });
      } catch (OverBudget e) {
        return busy(ctx, inFlightMessage("more than " + held[0] + " bytes"));
      } finally {
        if (slot) {
          bodyReaders.release();
        }
      }
      if (body == null) {
        LOG.warn(
            "REST {} {}: request body arrives slower than {} bytes per second; its"
                + " connection is closed",
            ctx.method(),
            ctx.path(),
            MIN_DATA_RATE);
        ctx.header("Connection", "close");
        return Response.error(
            408, "request body arrives slower than " + MIN_DATA_RATE + " bytes per second");
      }
      if (body.length <= max) {
        return body;
      }
      size = "more than " + max + " bytes";
    }
    LOG.warn(
        "REST {} {}: request body too large ({}, limit {} bytes)",
        ctx.method(),
        ctx.path(),
        size,
        max);
    ctx.header("Connection", "close");
    return Response.json(413, "request body too large (" + size + ", limit " + max + " bytes)\n");
  }

  /**
   * Takes a slot of {@link Limits#bodyReaders}, waiting up to {@link #READER_WAIT} for one (a burst
   * of quick uploads passes; slow ones that hold every slot get their 503 soon).
   */
  private boolean awaitReader() {
    try {
      return bodyReaders.tryAcquire(READER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private String inFlightMessage(String size) {
    return "request body of "
        + size
        + " not read: other request bodies are in flight and with it they would exceed "
        + limits.bodyBytesInFlight()
        + " bytes (the limit)";
  }

  /**
   * Reads up to {@code limit} bytes, or null when they arrive slower than {@link #MIN_DATA_RATE}
   * after a {@link #RATE_GRACE}. The rate is measured from the first read here, not from the
   * request's first byte (as Jetty's own minimum rate is): a small body that arrived long ago,
   * while its request waited for a thread, is read at once and is not slow.
   */
  private static byte[] readAtMinimumRate(
      InputStream in, int limit, long declared, LongConsumer beforeKeeping) throws IOException {
    long start = System.nanoTime();
    ByteArrayOutputStream out =
        new ByteArrayOutputStream((int) Math.max(32, Math.min(declared, Math.min(limit, 1 << 20))));
    byte[] chunk = new byte[64 * 1024];
    long total = 0;
    while (total < limit) {
      int n = in.read(chunk, 0, (int) Math.min(chunk.length, limit - total));
      if (n < 0) {
        break;
      }
      beforeKeeping.accept(n);
      out.write(chunk, 0, n);
      total += n;
      long allowedNanos = RATE_GRACE.toNanos() + total * 1_000_000_000L / MIN_DATA_RATE;
      if (total < limit && System.nanoTime() - start > allowedNanos) {
        return null;
      }
    }
    return out.toByteArray();
  }

  /** Errors Jetty answers itself (a malformed request line or URL, ...) as JSON. */
  private static final class JsonErrors extends ErrorHandler {
    @Override
    public boolean handle(
        org.eclipse.jetty.server.Request request,
        org.eclipse.jetty.server.Response response,
        Callback callback) {
      int status = response.getStatus() >= 400 ? response.getStatus() : 500;
      Object message = request.getAttribute(ERROR_MESSAGE);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON_TYPE);
      response.getHeaders().put("X-Content-Type-Options", "nosniff");
      response.write(
          true, errorBody(status, message == null ? null : message.toString()), callback);
      return true;
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
      fields.put(HttpHeader.CONTENT_TYPE, JSON_TYPE);
      fields.put("X-Content-Type-Options", "nosniff");
      return errorBody(status, reason);
    }

    private static ByteBuffer errorBody(int status, String reason) {
      String text = reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason;
      if (status == 400) {
        text = "malformed request: " + text;
      }
      try {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("Error", text);
        return ByteBuffer.wrap(
            (JSON.writeValueAsString(m) + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** The port listened on (after start). */
  public int port() {
    return app.port();
  }

  /** Whether the server speaks TLS. */
  public boolean tls() {
    return security.tlsEnabled();
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
    Javalin a;
    synchronized (this) {
      a = app;
      if (heartbeat != null) {
        heartbeat.shutdownNow();
      }
    }
    eventClients.forEach(EventSender::close);
    if (a != null) {
      a.stop();
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
      host = "127.0.0.1"; // as gRPC's :PORT; every interface is 0.0.0.0:PORT
    }
    return resolve
        ? new InetSocketAddress(host, port)
        : InetSocketAddress.createUnresolved(host, port);
  }

  private Response getConfiguration() {
    String yaml = ConfigFormat.toYaml(ConfigFormat.encode(models, northbound.desired()));
    return Response.bytes(200, YAML_TYPE, yaml.getBytes(StandardCharsets.UTF_8));
  }

  private Response putConfiguration(Request req) throws InterruptedException {
    boolean replace = booleanParameter(req.rawQuery(), "replace");
    String body;
    try {
      body =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(req.body()))
              .toString();
    } catch (CharacterCodingException e) {
      return badConfiguration(
          "can't unmarshall input yaml data into dynamically created config:"
              + " the request body is not UTF-8 text");
    }
    String type = req.header("Content-Type");
    boolean json = type != null && type.toLowerCase(Locale.ROOT).contains("json");
    Map<String, Object> values;
    try {
      // JSON is YAML too, except for tabs, which JSON allows between tokens and YAML does not
      ConfigDocument doc = json ? ConfigDocument.parseJson(body) : ConfigDocument.parseYaml(body);
      values = ConfigFormat.decodeYamlConfig(models, doc);
    } catch (ConfigDocument.SyntaxException e) {
      return badConfiguration(
          "can't unmarshall input yaml data into dynamically created config: "
              + shortened(e.getMessage())
              + (e.line() > 0 ? " (line " + e.line() + ")" : ""));
    } catch (ConfigException e) {
      return badConfiguration(
          "invalid configuration: "
              + shortened(e.getMessage())
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
      if (isQueueFull(e.getCause())) {
        LOG.warn("REST PUT /configuration: not applied, the transaction queue is full");
        return Response.error(
            503,
            "not applied: the transaction queue is full; nothing of this"
                + " request was kept, send it again later");
      }
      if (e.getCause() instanceof TransactionException te) {
        // a replace commits every source's values: failures of values only other sources give
        // are not this request's (derived values, which no source gives, are kept)
        Map<String, Object> desired = northbound.desired();
        List<KeyError> mine =
            te.keyErrors().stream()
                .filter(k -> values.containsKey(k.key()) || !desired.containsKey(k.key()))
                .toList();
        if (mine.isEmpty()) {
          return done();
        }
        return failed(new TransactionException(te.seqNum(), mine).getMessage());
      }
      return failed(String.valueOf(e.getCause().getMessage()));
    } catch (TimeoutException e) {
      return failed("the transaction did not finish within " + TXN_WAIT.toSeconds() + " s");
    }
    return done();
  }

  /** Whether {@code e} is the refusal of a commit by a full transaction queue. */
  private static boolean isQueueFull(Throwable e) {
    return e instanceof QueueFullException;
  }

  /** Longest error message quoted from a parser: it never repeats megabytes of the body. */
  static final int MAX_MESSAGE = 600;

  /** {@code message}, cut at {@link #MAX_MESSAGE} characters. */
  static String shortened(String message) {
    String m = String.valueOf(message);
    return m.length() <= MAX_MESSAGE
        ? m
        : m.substring(0, MAX_MESSAGE) + "… (" + (m.length() - MAX_MESSAGE) + " more characters)";
  }

  /** 200 with the empty JSON object: the transaction went through. */
  private static Response done() {
    return Response.bytes(200, JSON_TYPE, "{}\n".getBytes(StandardCharsets.UTF_8));
  }

  /** 400 {@code {"Error": ...}}: the body cannot be applied as it is. */
  private static Response badConfiguration(String message) {
    LOG.warn("REST PUT /configuration: {}", message);
    return Response.error(400, message);
  }

  /** 500 with a JSON string body, as vpp-agent's {@code /configuration} errors. */
  private static Response failed(String message) {
    LOG.warn("REST PUT /configuration: {}", message);
    return Response.json(500, message + "\n");
  }

  /**
   * A yes/no query parameter: absent is false; given without a value, empty, {@code true} or {@code
   * 1} is true; {@code false} or {@code 0} is false (case ignored). Given more than once, every
   * occurrence must say the same.
   *
   * @throws BadRequest naming the parameter, the value and the accepted values
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
      boolean b =
          switch (value.toLowerCase(Locale.ROOT)) {
            case "", "true", "1" -> true;
            case "false", "0" -> false;
            default ->
                throw new BadRequest(
                    "bad value '"
                        + value
                        + "' of query"
                        + " parameter '"
                        + name
                        + "': accepted are '"
                        + name
                        + "', '"
                        + name
                        + "=true' or '"
                        + name
                        + "=1' (yes) and '"
                        + name
                        + "=false' or '"
                        + name
                        + "=0' (no)");
          };
      if (result != null && result != b) {
        throw new BadRequest(
            "query parameter '" + name + "' is given twice," + " with different values");
      }
      result = b;
    }
    return result != null && result;
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
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
    v.put(
        "Arch",
        switch (arch) {
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
    try (InputStream in =
        RestServer.class.getResourceAsStream("/io/kvscheduler/agent/build.properties")) {
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
