package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.internal.northbound.FileNorthbound;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Symbolic links in the config directory, and what parse errors show of a file: a file outside the
 * directory is never shown through a link, and errors quote only short pieces of content.
 */
class FileNorthboundLinksTest {
  /** A secret, as a token file holds it. */
  static final String SECRET = "s3cr3t-0123456789abcdef0123456789abcdef0123456789";

  /**
   * A line holding the secret, written as a password file's line: YAML reads it as a key without a
   * value, an error that quotes the key.
   */
  static final String SECRET_FILE = "TOKEN=" + SECRET + ":19000:0:99999:7:::\n";

  @TempDir Path dir;
  @TempDir Path outside;
  Agent agent;

  @AfterEach
  void close() {
    if (agent != null) {
      agent.close();
    }
  }

  Agent start(UnaryOperator<AgentConfig> settings) throws Exception {
    agent =
        Agent.start(
            settings.apply(
                AgentConfig.builder()
                    .configDir(dir)
                    .restAddress("127.0.0.1:0")
                    .printTxnSummary(false)
                    .build()));
    return agent;
  }

  FileNorthbound fileNb() {
    return agent.sources().stream()
        .filter(FileNorthbound.class::isInstance)
        .map(FileNorthbound.class::cast)
        .findFirst()
        .orElseThrow();
  }

  String infoLog() throws Exception {
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/info/log"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  @Test
  @DisplayName(
      "a link to a file outside the directory is refused, naming the link and the flag; the"
          + " file's content appears neither in the log nor in /info/log")
  void linkLeavingTheDirectoryIsRefused() throws Exception {
    Path secret = Files.writeString(outside.resolve("token"), SECRET_FILE);
    Path link = Files.createSymbolicLink(dir.resolve("token.yaml"), secret);
    Files.writeString(
        dir.resolve("a.yaml"), "config/mock/v1/interfaces/a1: {name: a1, type: TAP}\n");
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      start(c -> c);
      assertThat(fileNb().errors().get(link))
          .contains("leaves the directory")
          .contains("--follow-external-links");
      assertThat(log.messages())
          .anySatisfy(m -> assertThat(m).contains(link.toString()).contains("leaves the directory"))
          .noneSatisfy(m -> assertThat(m).contains("s3cr3t"));
      assertThat(infoLog()).doesNotContain("s3cr3t").contains("leaves the directory");
    }
    assertThat(agent.northbound().desired()).containsKey("config/mock/v1/interfaces/a1");
  }

  @Test
  @DisplayName(
      "with --follow-external-links the linked file is read; its parse error quotes at most"
          + " 40 characters of it")
  void followExternalLinksReadsTheTarget() throws Exception {
    Path secret = Files.writeString(outside.resolve("token"), SECRET_FILE);
    Path link = Files.createSymbolicLink(dir.resolve("token.yaml"), secret);
    assertThat(AgentConfig.load(List.of(), Map.of()).followExternalLinks()).isFalse();
    assertThat(AgentConfig.load(List.of("--follow-external-links"), Map.of()).followExternalLinks())
        .isTrue();
    Path settings =
        Files.writeString(outside.resolve("agent.yaml"), "follow-external-links: true\n");
    assertThat(
            AgentConfig.load(List.of("--config", settings.toString()), Map.of())
                .followExternalLinks())
        .isTrue();
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      start(c -> c.toBuilder().followExternalLinks(true).build());
      assertThat(fileNb().errors().get(link)).contains("no value").doesNotContain(SECRET);
      assertThat(log.messages()).noneSatisfy(m -> assertThat(m).contains(SECRET));
      assertThat(infoLog()).doesNotContain(SECRET);
    }
  }

  @Test
  @DisplayName(
      "a malformed file inside the directory: its error quotes a short piece of the bad value,"
          + " control characters escaped")
  void parseErrorsQuoteShortSnippets() throws Exception {
    String longValue = "TAP" + "x".repeat(100);
    Files.writeString(
        dir.resolve("bad.yaml"),
        "config/mock/v1/interfaces/a: {name: a, type: " + longValue + "}\n");
    Files.writeString(dir.resolve("tab.yaml"), "\"TOKEN=\\t" + SECRET + "\": 1\n");
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      start(c -> c);
      String bad = fileNb().errors().get(dir.resolve("bad.yaml"));
      assertThat(bad)
          .contains("config/mock/v1/interfaces/a")
          .contains(longValue.substring(0, 40) + "…")
          .doesNotContain(longValue.substring(0, 41));
      String tab = fileNb().errors().get(dir.resolve("tab.yaml"));
      assertThat(tab).contains("TOKEN=\\t").doesNotContain("\t").doesNotContain(SECRET);
      assertThat(log.messages())
          .noneSatisfy(m -> assertThat(m).contains(longValue.substring(0, 41)))
          .noneSatisfy(m -> assertThat(m).contains(SECRET));
    }
  }

  @Test
  @DisplayName("a dangling link and a loop of links are reported as problems, not skipped quietly")
  void danglingLinkAndLoopAreReported() throws Exception {
    Path dangling = Files.createSymbolicLink(dir.resolve("gone.yaml"), dir.resolve("nowhere.yaml"));
    Path loop1 = dir.resolve("loop1.yaml");
    Path loop2 = dir.resolve("loop2.yaml");
    Files.createSymbolicLink(loop1, loop2);
    Files.createSymbolicLink(loop2, loop1);
    Path inside =
        Files.writeString(
            dir.resolve("real.txt"), "config/mock/v1/interfaces/r1: {name: r1, type: TAP}\n");
    Files.createSymbolicLink(dir.resolve("link.yaml"), Path.of("real.txt"));
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      start(c -> c);
      assertThat(fileNb().errors()).containsOnlyKeys(dangling, loop1, loop2);
      assertThat(fileNb().errors().get(dangling)).contains("dangling").contains("nowhere.yaml");
      assertThat(fileNb().errors().get(loop1)).contains("loop");
      assertThat(log.messages())
          .anySatisfy(m -> assertThat(m).contains(dangling.toString()).contains("dangling"))
          .anySatisfy(m -> assertThat(m).contains(loop1.toString()).contains("loop"));
    }
    assertThat(inside).exists();
    // a link to a file inside the directory is read
    assertThat(agent.northbound().desired()).containsKey("config/mock/v1/interfaces/r1");
  }
}
