package io.kvscheduler.agent.internal.rest;

import io.javalin.Javalin;
import io.javalin.compression.CompressionStrategy;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.kvscheduler.agent.RestSecurity;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.BlockingArrayQueue;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host of the agent's REST API on Javalin (Jetty), following vpp-agent's conventions: exact
 * paths, a wrong method gets 405, an unknown path 404; JSON indented as Go's {@code
 * MarshalIndent(v, "", " ")} with a trailing newline ({@link Response#JSON}). Route groups register
 * their endpoints with {@link #route} before {@link #start}: {@code /configuration} (the REST
 * northbound source), {@code /scheduler} ({@link SchedulerRoutes}), {@code /info} ({@link
 * InfoRoutes}), {@code /northbound/problems} ({@link NorthboundRoutes}), {@code /readiness} and
 * {@code /liveness} ({@link ProbeRoutes}), {@code /log} ({@link LogRoutes}) and the web page's
 * {@code /ui} ({@link #publicRoute} serves its files without the token, {@link #eventRoute} its
 * server-sent events, {@link EventStreams}).
 *
 * <p>Client mistakes get 400 {@code {"Error": "..."}}: a query parameter the endpoint does not
 * know, a bad value, a malformed URL ({@link JsonErrors} answers what Jetty refuses itself). Limits
 * are Jetty's own settings: up to {@link RestLimits#threads} requests are served at once (more wait
 * for a thread), a connection idle for {@link RestLimits#ioTimeout} is closed, and the time request
 * headers may take is bounded ({@link RestLimits#headerTimeout}, {@link
 * HeaderTimeoutConnectionFactory}); request bodies are read within their own limits by {@link
 * BodyReader}. {@link RestSecurity} adds a bearer token (401 without it), a read-only mode (403 for
 * every mutating request), TLS and the host names accepted without a token; {@link RequestGuard}
 * refuses what a browser sends on another site's behalf (421 for another {@code Host} without a
 * token, 403 for a change from another origin, 415 for a change whose body is not YAML or JSON) and
 * sets the security headers of every answer. {@code :port} listens on loopback (127.0.0.1); a
 * warning is logged when the API listens beyond loopback without a token, or with one over plain
 * HTTP.
 */
public final class RestServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RestServer.class);

  /** Request attribute set once a response is written (the error handlers then add nothing). */
  private static final String RESPONSE_SENT = "kvs.response-sent";

  /** Acceptor and selector threads Jetty takes from the pool besides the request threads. */
  private static final int IO_THREADS = 2;

  /** Handles one request whose query parameters were checked against the route's. */
  @FunctionalInterface
  public interface Handler {
    Response handle(Request request) throws Exception;
  }

  private record Route(
      String method,
      String path,
      Set<String> params,
      boolean mutating,
      boolean bodyless,
      Handler handler) {}

  /**
   * A source of server-sent events: every event's data (one line of JSON) goes to each subscribed
   * client until its handle is closed.
   */
  @FunctionalInterface
  public interface EventStream {
    AutoCloseable subscribe(Consumer<String> client);
  }

  private final String address;
  private final RestLimits limits;
  private final RestSecurity security;
  private final List<Route> routes = new ArrayList<>();

  /** Paths served without the bearer token: the web page's files, which hold no data. */
  private final Set<String> publicPaths = new HashSet<>();

  private final Map<String, EventStream> eventRoutes = new LinkedHashMap<>();
  private final EventStreams eventStreams;
  private final BodyReader bodies;
  private Javalin app;
  private byte[] token;

  /** Names of this server a {@code Host} header may give without a token (set at start). */
  private RequestGuard guard;

  /**
   * @param address {@code host:port}, {@code :port} (loopback, 127.0.0.1), {@code 0.0.0.0:port}
   *     (every interface) or {@code [v6]:port}; port 0 picks a free port
   */
  public RestServer(String address) {
    this(address, RestLimits.DEFAULT, RestSecurity.NONE);
  }

  /** A server with other limits and security settings. */
  public RestServer(String address, RestLimits limits, RestSecurity security) {
    this.address = Objects.requireNonNull(address, "address");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.security = Objects.requireNonNull(security, "security");
    this.bodies = new BodyReader(limits);
    this.eventStreams = new EventStreams(limits);
  }

  /**
   * Adds the handler of {@code method} on the exact path {@code path}, accepting the query
   * parameters {@code params} (any other is a 400). Call before {@link #start}.
   */
  public void route(String method, String path, Set<String> params, Handler handler) {
    add(method, path, params, false, false, handler);
  }

  /** Like {@link #route}, for a request that changes something (refused in read-only mode). */
  public void mutatingRoute(String method, String path, Set<String> params, Handler handler) {
    add(method, path, params, true, false, handler);
  }

  /**
   * Like {@link #mutatingRoute} for a PUT that reads no body: an empty body may say any content
   * type (vpp-agent's clients send {@code text/plain}); a PUT cannot come from another site's form,
   * and another site's script would need a CORS preflight this server never allows.
   */
  public void bodylessPut(String path, Set<String> params, Handler handler) {
    add("PUT", path, params, true, true, handler);
  }

  /**
   * Like {@link #mutatingRoute} for a POST that reads no body: an empty body may say any content
   * type (agentctl sends {@code text/plain}), a body still needs YAML or JSON. Another site's form
   * could send such a POST, but a browser names the form's origin in {@code Origin} (or {@code
   * null}) and {@code Sec-Fetch-Site} on every POST, and those are refused with 403 before this.
   */
  public void bodylessPost(String path, Set<String> params, Handler handler) {
    add("POST", path, params, true, true, handler);
  }

  /**
   * Like {@link #route} for a GET that needs no bearer token (a file of the web page, which holds
   * no data: the page asks for the token before it reads anything).
   */
  public synchronized void publicRoute(String path, Handler handler) {
    add("GET", path, Set.of(), false, false, handler);
    publicPaths.add(path);
  }

  /**
   * Serves {@code stream} as server-sent events at {@code GET path} (with the bearer token when one
   * is configured), within the limits of {@link EventStreams}.
   */
  public synchronized void eventRoute(String path, EventStream stream) {
    if (app != null) {
      throw new IllegalStateException("routes are added before the REST server starts");
    }
    eventRoutes.put(path, Objects.requireNonNull(stream, "stream"));
  }

  private synchronized void add(
      String method,
      String path,
      Set<String> params,
      boolean mutating,
      boolean bodyless,
      Handler handler) {
    if (app != null) {
      throw new IllegalStateException("routes are added before the REST server starts");
    }
    routes.add(
        new Route(
            method.toUpperCase(Locale.ROOT),
            path,
            Set.copyOf(params),
            mutating,
            bodyless,
            handler));
  }

  /**
   * Starts listening, with the routes added so far.
   *
   * @throws IOException when the address cannot be listened on or the token or TLS files cannot be
   *     read
   */
  public synchronized void start() throws IOException {
    InetSocketAddress bind = RestAddress.parse(address);
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
              eventStreams.register(config, eventRoutes);
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
      eventStreams.start();
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
      boolean emptyBody =
          ctx.req().getContentLengthLong() <= 0 && ctx.header("Transfer-Encoding") == null;
      if (refused == null && !(route.bodyless() && emptyBody)) {
        refused = RequestGuard.contentTypeRefusal(ctx, route.method().equals("PUT"));
      }
      if (refused != null) {
        LOG.warn("REST {} {}: refused: {}", ctx.method(), ctx.path(), refused.status());
        return refused;
      }
    }
    String malformed = Request.malformedEscape(ctx.queryString());
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
        Object tooLarge = bodies.read(ctx, held);
        if (tooLarge instanceof Response resp) {
          return resp;
        }
        body = (byte[]) tooLarge;
      }
      return route.handler().handle(new Request(ctx, body));
    } finally {
      bodies.release(held);
    }
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

  /** Writes {@code r} as the answer to the request; a client gone away is only logged. */
  static void send(Context ctx, Response r) {
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

  /** The port listened on (after start). */
  public int port() {
    return app.port();
  }

  /** Whether the server speaks TLS. */
  public boolean tls() {
    return security.tlsEnabled();
  }

  /** Stops: no request is accepted any more; the open event streams are closed. */
  @Override
  public void close() {
    Javalin a;
    synchronized (this) {
      a = app;
    }
    eventStreams.close();
    if (a != null) {
      a.stop();
    }
  }
}
