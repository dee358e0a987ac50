package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The web page's routes over real HTTP: its files, its live events, and the token. */
class WebPageRoutesTest {
  static final String TOKEN = "page-token";
  final HttpClient http = HttpClient.newHttpClient();
  Agent agent;
  String url;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  void start(RestSecurity security) throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder()
                .restAddress("127.0.0.1:0")
                .printTxnSummary(false)
                .restSecurity(security)
                .build());
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    url = "http://127.0.0.1:" + port;
  }

  HttpResponse<String> get(String path, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void filesAreServedWithoutTokenDataOnlyWithIt() throws Exception {
    start(new RestSecurity(TOKEN, null, false, null, null));
    for (String path : List.of("/", "/ui/")) {
      HttpResponse<String> page = get(path, null);
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
      assertThat(page.body()).contains("<svg id=\"graph\"", "/webjars/d3/7.9.0/dist/d3.min.js");
    }
    assertThat(get("/ui/app.js", null).body()).contains("function render()");
    assertThat(get("/webjars/d3/7.9.0/dist/d3.min.js", null).body()).contains("d3");
    assertThat(get("/webjars/dagre/0.8.4/dist/dagre.min.js", null).body()).contains("dagre");
    // what the page reads needs the token
    assertThat(get("/scheduler/graph?format=json", null).statusCode()).isEqualTo(401);
    assertThat(get("/ui/events", null).statusCode()).isEqualTo(401);
    assertThat(get("/info/log", null).statusCode()).isEqualTo(401);
    assertThat(get("/info/settings", TOKEN).body())
        .contains("\"rest-token\": \"set (from" + " KVS_REST_TOKEN)\"")
        .doesNotContain(TOKEN);
  }

  @Test
  void pageAndAnswersForbidFramingSniffingAndOtherOrigins() throws Exception {
    start(RestSecurity.NONE);
    for (String path :
        List.of("/", "/ui/", "/ui/app.js", "/ui/app.css", "/webjars/d3/7.9.0/dist/d3.min.js")) {
      HttpResponse<String> r = get(path, null);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("Content-Security-Policy").orElse(""))
          .as(path)
          .contains("default-src 'self'", "frame-ancestors 'none'")
          .doesNotContain("unsafe-inline", "unsafe-eval");
      assertThat(r.headers().firstValue("X-Frame-Options")).as(path).hasValue("DENY");
      assertThat(r.headers().firstValue("X-Content-Type-Options")).as(path).hasValue("nosniff");
    }
    for (String path : List.of("/info/version", "/scheduler/status", "/no-such-path")) {
      assertThat(get(path, null).headers().firstValue("X-Content-Type-Options"))
          .as(path)
          .hasValue("nosniff");
    }
    // the page holds no inline script or style, which the policy would block
    String page = get("/", null).body();
    assertThat(page).doesNotContain("<style", " style=", "onclick=", "onload=");
    assertThat(page.split("<script")).allMatch(p -> p.startsWith("<!") || p.contains(" src="));
  }

  @Test
  void eventsFollowTransactions() throws Exception {
    start(RestSecurity.NONE);
    followsTransactions("text/event-stream");
  }

  @Test
  void eventsStreamWithoutAnAcceptHeaderOrToAnyType() throws Exception {
    start(RestSecurity.NONE);
    followsTransactions(null);
    followsTransactions("*/*");
  }

  @Test
  void eventsToAClientAcceptingOnlyOtherTypesAre406NamingTheHeader() throws Exception {
    start(RestSecurity.NONE);
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/ui/events"))
                .header("Accept", "application/json")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(406);
    assertThat(r.body()).contains("Accept: text/event-stream").contains("application/json");
  }

  /** A stream of {@code /ui/events} (with that Accept header, null: none) sees a PUT's change. */
  void followsTransactions(String accept) throws Exception {
    String name = "tap" + (accept == null ? "x" : Integer.toString(accept.length()));
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url + "/ui/events"));
    if (accept != null) {
      request.header("Accept", accept);
    }
    HttpResponse<InputStream> stream =
        http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    assertThat(stream.statusCode()).isEqualTo(200);
    assertThat(stream.headers().firstValue("Content-Type").orElse(""))
        .startsWith("text/event-stream");
    CompletableFuture<String> event =
        CompletableFuture.supplyAsync(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  if (line.startsWith("data:")) {
                    return line.substring(5).strip();
                  }
                }
                return null;
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(300); // the subscription is in place
    HttpResponse<String> put =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/configuration"))
                .header("Content-Type", "application/yaml")
                .PUT(
                    HttpRequest.BodyPublishers.ofString(
                        "mockConfig:\n  Interface_list:\n  - name: " + name + "\n    type: TAP\n"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(put.statusCode()).isEqualTo(200);
    assertThat(event.get(10, TimeUnit.SECONDS))
        .isEqualTo(
            "{\"changes\":[{\"key\":\"config/mock/v1/interfaces/"
                + name
                + "\",\"state\":\"CONFIGURED\"}]}");
    stream.body().close();
  }
}
