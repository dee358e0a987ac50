package io.kvscheduler.agent.internal.web;

import io.kvscheduler.agent.internal.rest.Response;
import io.kvscheduler.agent.internal.rest.RestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The agent's web page: its files (at {@code /} and {@code /ui/}), the libraries it draws with (d3
 * and dagre, from their WebJars on the class path, so that the page works offline), and the live
 * events it follows ({@code /ui/events}, server-sent events of {@link StatusEvents}).
 *
 * <p>The files need no token (they hold no data); everything the page reads does.
 */
public final class WebPage {
  /** The page's files and libraries: URL path, class path resource, content type. */
  private static final Map<String, String[]> FILES =
      Map.of(
          "/", new String[] {"io/kvscheduler/agent/ui/index.html", "text/html; charset=UTF-8"},
          "/ui/", new String[] {"io/kvscheduler/agent/ui/index.html", "text/html; charset=UTF-8"},
          "/ui/app.js",
              new String[] {"io/kvscheduler/agent/ui/app.js", "text/javascript; charset=UTF-8"},
          "/ui/app.css",
              new String[] {"io/kvscheduler/agent/ui/app.css", "text/css; charset=UTF-8"},
          "/webjars/d3/7.9.0/dist/d3.min.js",
              new String[] {
                "META-INF/resources/webjars/d3/7.9.0/dist/d3.min.js",
                "text/javascript; charset=UTF-8"
              },
          "/webjars/dagre/0.8.4/dist/dagre.min.js",
              new String[] {
                "META-INF/resources/webjars/dagre/0.8.4/dist/dagre.min.js",
                "text/javascript; charset=UTF-8"
              });

  private WebPage() {}

  /** Adds the page's routes to {@code server}. */
  public static void register(RestServer server, StatusEvents events) {
    FILES.forEach(
        (path, file) -> {
          byte[] body = read(file[0]);
          server.publicRoute(path, r -> Response.bytes(200, file[1], body));
        });
    server.eventRoute("/ui/events", events::subscribe);
  }

  private static byte[] read(String resource) {
    try (InputStream in = WebPage.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            "the web page's file " + resource + " is not on the class path");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + resource, e);
    }
  }
}
