package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvscheduler.agent.internal.rest.Response;
import io.kvscheduler.agent.internal.rest.RestAddress;
import io.kvscheduler.agent.internal.rest.RestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The fleet view of {@code kvsctl fleet --serve}: a web page ({@code /}), the view as JSON ({@code
 * /fleet.json}, what {@code kvsctl fleet -o json} prints) and the same JSON as server-sent events
 * on every new view ({@code /events}, event {@code status}). It serves the view last read from etcd
 * ({@link #update}); it reads nothing itself, so any number of readers cost etcd nothing.
 *
 * <p>Served by the agent's {@link RestServer} (Javalin on Jetty): the same address forms ({@code
 * PORT} and {@code :PORT} on loopback, {@code HOST:PORT}), limits, security headers and checks of
 * the {@code Host} header. The view holds no secret but names hosts and processes: it listens on
 * loopback unless told otherwise.
 */
final class FleetServer implements AutoCloseable {
  private static final String RESOURCES = "io/kvscheduler/ctl/fleet/";

  /** URL path, resource, content type. */
  private static final Map<String, String[]> FILES =
      Map.of(
          "/", new String[] {"index.html", "text/html; charset=UTF-8"},
          "/fleet.js", new String[] {"fleet.js", "text/javascript; charset=UTF-8"},
          "/fleet.css", new String[] {"fleet.css", "text/css; charset=UTF-8"});

  private final RestServer server;
  private final List<Consumer<String>> clients = new CopyOnWriteArrayList<>();

  /** The JSON of the last view (one line), null before the first read. */
  private volatile String view;

  /** Why the last read of etcd failed, null when it did not. */
  private volatile String error;

  /**
   * @param address {@code PORT}, {@code :PORT} (loopback), {@code HOST:PORT}; port 0 picks one
   */
  FleetServer(String address) {
    String hostPort = address.contains(":") ? address : ":" + address;
    RestAddress.check(hostPort); // IllegalArgumentException naming what is wrong
    this.server = new RestServer(hostPort);
    FILES.forEach(
        (path, file) -> {
          byte[] body = read(RESOURCES + file[0]);
          server.publicRoute(path, r -> Response.bytes(200, file[1], body));
        });
    server.route("GET", "/fleet.json", Set.of(), r -> json());
    server.eventRoute("/events", this::subscribe);
  }

  /**
   * Starts listening.
   *
   * @throws IOException when the address cannot be listened on
   */
  void start() throws IOException {
    server.start();
  }

  /** The port listened on. */
  int port() {
    return server.port();
  }

  /** A new view read from etcd: served from now on and sent to every event client. */
  void update(ObjectNode fleet) {
    String line = fleet.toString();
    view = line;
    error = null;
    send(line);
  }

  /**
   * The last read of etcd failed: the last view stays served, with {@code etcd_error} saying why
   * (its {@code read_at} says how old it is).
   */
  void failed(String why) {
    error = why;
    String last = view;
    if (last != null) {
      send(withError(last, why));
    }
  }

  private void send(String line) {
    for (Consumer<String> c : clients) {
      try {
        c.accept(line);
      } catch (RuntimeException e) {
        clients.remove(c); // gone
      }
    }
  }

  private AutoCloseable subscribe(Consumer<String> client) {
    clients.add(client);
    String last = current();
    if (last != null) {
      try {
        client.accept(last);
      } catch (RuntimeException e) {
        clients.remove(client);
      }
    }
    return () -> clients.remove(client);
  }

  /** The view as served now (with the last error, if any), null before the first read. */
  private String current() {
    String last = view;
    String why = error;
    return last == null ? null : why == null ? last : withError(last, why);
  }

  private Response json() {
    String last = current();
    if (last == null) {
      String why = error;
      return Response.error(
          503,
          why == null
              ? "the fleet has not been read from etcd yet"
              : "etcd could not be read: " + why);
    }
    return Response.bytes(200, Response.JSON_TYPE, last.getBytes(StandardCharsets.UTF_8));
  }

  private static String withError(String viewJson, String why) {
    try {
      ObjectNode n = (ObjectNode) Json.MAPPER.readTree(viewJson);
      n.put("etcd_error", why);
      return n.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] read(String resource) {
    try (InputStream in = FleetServer.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the fleet page's file " + resource + " is missing");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + resource, e);
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
