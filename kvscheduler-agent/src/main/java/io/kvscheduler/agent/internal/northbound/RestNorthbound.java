package io.kvscheduler.agent.internal.northbound;

import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.internal.format.ConfigFormat.ConfigException;
import io.kvscheduler.agent.internal.rest.BadRequest;
import io.kvscheduler.agent.internal.rest.PlanJson;
import io.kvscheduler.agent.internal.rest.Request;
import io.kvscheduler.agent.internal.rest.Response;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.spi.ConfirmationConflictException;
import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.TransactionException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST northbound source: vpp-agent's {@code /configuration} endpoints, registered on the
 * agent's {@link RestServer}.
 *
 * <ul>
 *   <li>{@code GET /configuration}: the desired NB configuration of all sources in the YAML
 *       configuration format;
 *   <li>{@code PUT /configuration}: YAML (or JSON) in that format, applied as data source {@code
 *       rest} — a change, or with query parameter {@code replace} ({@code replace}, {@code
 *       replace=}, {@code =true} or {@code =1}; {@code =false} or {@code =0} is a change) a resync
 *       of that source; waits for the transaction; with {@code dry-run} (the same yes/no values)
 *       nothing is applied, journaled or recorded and 200 answers the plan of the transaction
 *       ({@link PlanJson}), 400 when combined with {@code confirm-within}; 200 {@code {}}; 400
 *       {@code {"Error": ...}} for a body that cannot be read or names unknown groups, models or
 *       fields (the message names the line and field and never repeats the body) and for a bad
 *       query parameter; 503 {@code {"Error": ...}} when the scheduler's transaction queue is full
 *       (nothing of the request is kept: it may be sent again, counted in {@code
 *       kvs_commits_refused_total}); 500 with a JSON string when the transaction fails;
 *   <li>{@code PUT /configuration?confirm-within=30s} (with {@link #confirmations}): applied at
 *       once and rolled back unless {@code POST /configuration/confirm} comes within that time (or
 *       the probes pass); 200 {@code {"pending": {...}}}; 400 naming {@code confirm-within} for a
 *       value that is not a duration, zero or over 1h, or given with {@code dry-run}; 409 naming
 *       the pending commit while one is pending (also for a plain PUT then: it would be rolled back
 *       with it);
 *   <li>{@code POST /configuration/confirm}, {@code POST /configuration/rollback}: confirm the
 *       pending commit, roll it back now; 409 when none is pending; {@code GET
 *       /configuration/pending}: {@code {"pending": {...}}} or {@code {"pending": null}}.
 * </ul>
 *
 * <p>The server's lifecycle goes with this source's: {@link #start} starts it and {@link #close}
 * stops it, so the API is up exactly while the agent takes configuration over REST, and it starts
 * first of the sources (a port in use stops the agent before any configuration is applied).
 */
public final class RestNorthbound implements NorthboundSource {
  private static final Logger LOG = LoggerFactory.getLogger(RestNorthbound.class);

  /** The data source label of configuration pushed with {@code PUT /configuration}. */
  public static final String SOURCE = "rest";

  private static final Duration TXN_WAIT = Duration.ofMinutes(2);

  private final RestServer server;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final PlanJson planJson;

  /** The query parameter of a PUT that only plans. */
  static final String DRY_RUN = "dry-run";

  /** The query parameter of a confirmed commit, which a dry run cannot have. */
  static final String CONFIRM_WITHIN = "confirm-within";

  /** Held while a PUT delivers to the northbound; {@link #close} waits for it. */
  private final Object delivering = new Object();

  private volatile boolean closed;

  /** Where the last refused PUT is listed until a PUT is accepted. */
  private volatile NorthboundProblems problems;

  /** Confirmed commits, or null when {@code confirm-within} is not offered. */
  private volatile ConfirmedCommits confirmations;

  /** Registers {@code GET} and {@code PUT /configuration} on {@code server}. */
  public RestNorthbound(RestServer server, ModelRegistry models, Northbound northbound) {
    this.server = Objects.requireNonNull(server, "server");
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    server.route("GET", "/configuration", Set.of(), r -> getConfiguration());
    server.mutatingRoute(
        "PUT",
        "/configuration",
        Set.of("replace", DRY_RUN, ConfirmedCommits.PARAMETER),
        this::putConfiguration);
    this.planJson = new PlanJson(models);
  }

  /**
   * Offers confirmed commits: {@code PUT /configuration?confirm-within=...}, {@code POST
   * /configuration/confirm}, {@code POST /configuration/rollback}, {@code GET
   * /configuration/pending}; call before start.
   */
  public RestNorthbound confirmations(ConfirmedCommits confirmations) {
    this.confirmations = Objects.requireNonNull(confirmations, "confirmations");
    server.route(
        "GET",
        "/configuration/pending",
        Set.of(),
        r -> Response.json(200, pendingAnswer(confirmations.pending().orElse(null))));
    server.mutatingRoute(
        "POST",
        "/configuration/confirm",
        Set.of(),
        r -> {
          try {
            ConfirmedCommits.Pending p = confirmations.confirm();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("confirmed", pendingJson(p));
            return Response.json(200, out);
          } catch (ConfirmationConflictException e) {
            return Response.error(409, e.getMessage());
          }
        });
    server.mutatingRoute(
        "POST",
        "/configuration/rollback",
        Set.of(),
        r -> {
          long seq;
          try {
            seq = confirmations.rollback().get(TXN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
          } catch (ConfirmationConflictException e) {
            return Response.error(409, e.getMessage());
          } catch (ExecutionException e) {
            return failed("the rollback failed: " + e.getCause().getMessage());
          } catch (TimeoutException e) {
            return failed("the rollback did not finish within " + TXN_WAIT.toSeconds() + " s");
          }
          Map<String, Object> out = new LinkedHashMap<>();
          out.put("rollback", seq);
          return Response.json(200, out);
        });
    return this;
  }

  /** {@code {"pending": ...}}: the pending commit, or null. */
  static Map<String, Object> pendingAnswer(ConfirmedCommits.Pending p) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("pending", p == null ? null : pendingJson(p));
    return out;
  }

  /** A pending commit as JSON. */
  static Map<String, Object> pendingJson(ConfirmedCommits.Pending p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", p.id());
    m.put("source", p.source());
    m.put("seqNum", p.seqNum());
    m.put("committed", p.committed().toString());
    m.put("confirmWithin", p.within().toMillis() + "ms");
    m.put("deadline", p.deadline().toString());
    m.put("description", p.describe());
    return m;
  }

  @Override
  public String name() {
    return "rest";
  }

  /**
   * Lists the last {@code PUT /configuration} refused as invalid in {@code problems} (source {@code
   * rest}) until a PUT is accepted; call before start.
   */
  public RestNorthbound problems(NorthboundProblems problems) {
    this.problems = Objects.requireNonNull(problems, "problems");
    return this;
  }

  /** Starts the server. */
  @Override
  public void start() throws Exception {
    server.start();
  }

  /** The server this source is served by. */
  public RestServer server() {
    return server;
  }

  /** The port the REST API listens on (after start). */
  public int port() {
    return server.port();
  }

  /**
   * Stops: no request is delivered any more (a PUT still being read or decoded gets 503); waits for
   * a delivery under way to be queued, then stops the server.
   */
  @Override
  public void close() {
    closed = true;
    synchronized (delivering) {
      // a PUT that was delivering has queued its transaction
    }
    server.close();
  }

  private Response getConfiguration() {
    String yaml = ConfigFormat.toYaml(ConfigFormat.encode(models, northbound.desired()));
    return Response.bytes(200, Response.YAML_TYPE, yaml.getBytes(StandardCharsets.UTF_8));
  }

  private Response putConfiguration(Request req) throws InterruptedException {
    boolean replace = booleanParameter(req.rawQuery(), "replace");
    boolean dryRun = booleanParameter(req.rawQuery(), DRY_RUN);
    if (dryRun && req.param(CONFIRM_WITHIN).isPresent()) {
      throw new BadRequest(
          "query parameter '"
              + DRY_RUN
              + "' cannot be combined with '"
              + CONFIRM_WITHIN
              + "': a dry run applies nothing, there is nothing to confirm");
    }
    Duration confirmWithin = confirmWithin(req.rawQuery());
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
          dryRun,
          "can't unmarshall input yaml data into dynamically created config:"
              + " the request body is not UTF-8 text");
    }
    String type = req.header("Content-Type");
    boolean json = type != null && type.toLowerCase(Locale.ROOT).contains("json");
    Map<String, Object> values;
    try {
      // JSON is YAML too, except for tabs, which JSON allows between tokens and YAML does not
      ConfigDocument doc = json ? ConfigDocument.parseJson(body) : ConfigDocument.parseYaml(body);
      // vpp-agent's format (mockConfig: ...) or the keyed one of the file source and etcd
      values = ConfigFormat.decodeAny(models, doc);
    } catch (ConfigDocument.SyntaxException e) {
      return badConfiguration(
          dryRun,
          "can't unmarshall input yaml data into dynamically created config: "
              + shortened(e.getMessage())
              + (e.line() > 0 ? " (line " + e.line() + ")" : ""));
    } catch (ConfigException e) {
      return badConfiguration(
          dryRun,
          "invalid configuration: "
              + shortened(e.getMessage())
              + (e.line() > 0 ? " (line " + e.line() + ")" : ""));
    }
    if (dryRun) {
      return plan(replace, values);
    }
    CompletableFuture<Long> txn;
    synchronized (delivering) {
      if (closed) {
        LOG.warn("REST PUT /configuration: not applied, the agent is stopping");
        return Response.json(503, "not applied: the agent is stopping\n");
      }
      txn =
          confirmWithin != null
              ? confirmations.commit(SOURCE, values, replace, confirmWithin)
              : replace ? northbound.resync(SOURCE, values) : northbound.change(SOURCE, values);
    }
    NorthboundProblems registry = problems;
    if (registry != null) {
      registry.replace(SOURCE, List.of()); // the request was valid
    }
    try {
      txn.get(TXN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ConfirmationConflictException c) {
        LOG.warn("REST PUT /configuration: {}", c.getMessage());
        return Response.error(409, c.getMessage());
      }
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
    if (confirmWithin != null) {
      return Response.json(200, pendingAnswer(confirmations.pending().orElse(null)));
    }
    return done();
  }

  /**
   * A dry run: 200 with the plan of the delivery ({@link PlanJson}); nothing is applied, journaled
   * or recorded, the source's values and the northbound problems stay as they are.
   */
  private Response plan(boolean replace, Map<String, Object> values) {
    if (closed) {
      return Response.json(503, "not planned: the agent is stopping\n");
    }
    Plan plan =
        replace ? northbound.planResync(SOURCE, values) : northbound.planChange(SOURCE, values);
    LOG.info(
        "REST PUT /configuration?{}: {} operation(s) planned, nothing applied",
        DRY_RUN,
        plan.size());
    return Response.json(200, planJson.plan(plan));
  }

  /**
   * The {@code confirm-within} of the query, or null when absent.
   *
   * @throws BadRequest naming the parameter: not a duration, zero, over 1h, given with {@code
   *     dry-run}, given twice with different values, or not offered
   */
  private Duration confirmWithin(String rawQuery) {
    String text = null;
    boolean dryRun = false;
    if (rawQuery != null && !rawQuery.isEmpty()) {
      for (String part : rawQuery.split("&")) {
        int eq = part.indexOf('=');
        String name = decode(eq < 0 ? part : part.substring(0, eq));
        String value = eq < 0 ? "" : decode(part.substring(eq + 1));
        if (name.equals("dry-run")) {
          dryRun = true;
        } else if (name.equals(ConfirmedCommits.PARAMETER)) {
          if (text != null && !text.equals(value)) {
            throw new BadRequest(
                "query parameter '"
                    + ConfirmedCommits.PARAMETER
                    + "' is given twice, with different values");
          }
          text = value;
        }
      }
    }
    if (text == null) {
      return null;
    }
    if (dryRun) {
      throw new BadRequest(
          "query parameter '"
              + ConfirmedCommits.PARAMETER
              + "' cannot be given with 'dry-run': a plan applies nothing to confirm");
    }
    if (confirmations == null) {
      throw new BadRequest(
          "query parameter '" + ConfirmedCommits.PARAMETER + "': confirmed commits are off");
    }
    try {
      return ConfirmedCommits.parseWithin(text);
    } catch (IllegalArgumentException e) {
      throw new BadRequest("bad query parameter: " + e.getMessage());
    }
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
    return Response.bytes(200, Response.JSON_TYPE, "{}\n".getBytes(StandardCharsets.UTF_8));
  }

  /**
   * 400 {@code {"Error": ...}}: the body cannot be applied as it is; listed as a northbound problem
   * unless it was a {@code dryRun}.
   */
  private Response badConfiguration(boolean dryRun, String message) {
    LOG.warn("REST PUT /configuration: {}", message);
    NorthboundProblems registry = problems;
    if (registry != null && !dryRun) {
      registry.replace(
          SOURCE,
          List.of(
              NorthboundProblems.Problem.of(
                  SOURCE,
                  null,
                  null,
                  0,
                  0,
                  "the last PUT /configuration was refused: "
                      + message
                      + " (nothing of it was applied; the next accepted PUT clears this)")));
    }
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
}
