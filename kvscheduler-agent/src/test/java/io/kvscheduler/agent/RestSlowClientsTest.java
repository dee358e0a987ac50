package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.internal.rest.RestLimits;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.KVScheduler;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Clients that send slowly or send much, over raw sockets, against a server whose {@link
 * RestLimits} are scaled down: reads stay served, large bodies are refused before they are read,
 * slow headers and surplus event streams are cut off.
 */
class RestSlowClientsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final RestLimits SMALL = new RestLimits(4, 16, Duration.ofSeconds(60), 8L << 20);

  final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
  final ExecutorService readers = Executors.newCachedThreadPool();
  final List<Socket> sockets = new ArrayList<>();
  final List<Consumer<String>> subscribers = new CopyOnWriteArrayList<>();
  RestServer rest;

  @AfterEach
  void stop() throws Exception {
    trickle.shutdownNow();
    readers.shutdownNow();
    for (Socket s : sockets) {
      s.close();
    }
    if (rest != null) {
      rest.close();
    }
    kvs.close();
  }

  void start(RestLimits limits) throws Exception {
    rest = RestServerTest.restApi(new ModelRegistry(), new Orchestrator(kvs), limits).server();
    rest.eventRoute(
        "/events",
        client -> {
          subscribers.add(client);
          return () -> subscribers.remove(client);
        });
    rest.start();
  }

  /** Opens a connection and sends {@code text}. */
  Socket open(String text) throws IOException {
    Socket s = new Socket("127.0.0.1", rest.port());
    sockets.add(s);
    s.setSoTimeout(10_000);
    send(s, text);
    return s;
  }

  static void send(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** The head of a PUT of {@code length} bytes of YAML. */
  static String putHead(long length) {
    return "PUT /configuration HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
        + "Content-Length: "
        + length
        + "\r\n\r\n";
  }

  /** The status line and headers the server answered on {@code s}, lower case. */
  static String answerHead(Socket s) throws IOException {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
    StringBuilder b = new StringBuilder();
    for (String l = in.readLine(); l != null && !l.isEmpty(); l = in.readLine()) {
      b.append(l.toLowerCase()).append('\n');
    }
    return b.toString();
  }

  /**
   * The status line and headers the server answers on {@code s}, read from now on while the test
   * still sends: an answer to a body the server does not read arrives before the reset its closing
   * then causes.
   */
  CompletableFuture<String> answer(Socket s) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return answerHead(s);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        readers);
  }

  /** {@code GET /info/version} on a new connection, which must be answered within 2 s. */
  int promptGet() throws IOException {
    try (RawHttpClient c = new RawHttpClient(rest.port())) {
      long start = System.nanoTime();
      int status = c.send("GET", "/info/version", (String) null, new byte[0]).status();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
      return status;
    }
  }

  @Test
  @DisplayName(
      "uploads trickling a byte at a time hold at most the body readers' threads: the others"
          + " get 503 at once, and GETs are answered promptly meanwhile")
  void slowUploadsLeaveThreadsForReads() throws Exception {
    start(SMALL.withBodies(1 << 20, 1));
    List<Socket> uploads = new ArrayList<>();
    List<CompletableFuture<String>> answers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Socket s = open(putHead(1000));
      uploads.add(s);
      answers.add(answer(s));
    }
    trickle.scheduleAtFixedRate(
        () -> {
          for (Socket s : uploads) {
            try {
              send(s, "#");
            } catch (IOException e) {
              // refused and closed
            }
          }
        },
        0,
        200,
        TimeUnit.MILLISECONDS);
    Thread.sleep(500); // every upload is in its handler
    for (int i = 0; i < 5; i++) {
      assertThat(promptGet()).isEqualTo(200);
    }
    // one upload is being read (it still trickles); the others were refused at once
    assertThat(answers.stream().filter(CompletableFuture::isDone).toList())
        .hasSize(5)
        .allSatisfy(a -> assertThat(a.get()).startsWith("http/1.1 503").contains("retry-after:"));
  }

  @Test
  @DisplayName("a burst of quick uploads, more than the body readers, is served whole")
  void aBurstOfQuickUploadsIsServed() throws Exception {
    start(SMALL.withBodies(1 << 20, 1));
    List<CompletableFuture<Integer>> puts = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      byte[] body = ("# upload " + i + "\n" + "#".repeat(2000) + "\n").getBytes();
      puts.add(
          CompletableFuture.supplyAsync(
              () -> {
                try (RawHttpClient c = new RawHttpClient(rest.port())) {
                  return c.send("PUT", "/configuration", "application/yaml", body).status();
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              },
              readers));
    }
    for (CompletableFuture<Integer> p : puts) {
      assertThat(p.get(10, TimeUnit.SECONDS)).isEqualTo(200);
    }
  }

  @Test
  @DisplayName(
      "bodies declared larger than the bytes in flight allow get 503 with Retry-After before a"
          + " byte of them is read; one alone is read")
  void largeDeclaredBodiesAreRefusedUnread() throws Exception {
    start(SMALL.withBodies(1 << 20, 8));
    Socket first = open(putHead(4 << 20) + "# a body that stops here\n");
    Thread.sleep(300); // the first is being read
    for (int i = 0; i < 5; i++) {
      // the heads only: their 4 MiB are never sent, and the answers come all the same
      Socket s = open(putHead(4 << 20));
      assertThat(answerHead(s)).startsWith("http/1.1 503").contains("retry-after: ");
    }
    // a small body is refused too while the large one holds more than the limit
    String small =
        new String(open(putHead(100)).getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(small)
        .startsWith("HTTP/1.1 503")
        .contains("Retry-After: 1", "in flight", "1048576 bytes (the limit)", "send it again");
    try (RawHttpClient c = new RawHttpClient(rest.port())) {
      RawHttpClient.Answer empty = c.send("PUT", "/configuration", "application/yaml", new byte[0]);
      assertThat(empty.status()).isEqualTo(200); // no body, nothing held
    }
    first.close();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              try (RawHttpClient c = new RawHttpClient(rest.port())) {
                return c.send("PUT", "/configuration", "application/yaml", "{}\n".getBytes())
                        .status()
                    == 200;
              }
            });
  }

  @Test
  @DisplayName("a chunked body that grows beyond the bytes in flight allow is cut off with 503")
  void chunkedBodyBeyondTheBudgetIs503() throws Exception {
    start(SMALL.withBodies(1 << 20, 8));
    open(putHead(900 << 10) + "# held\n");
    Thread.sleep(300);
    Socket s =
        open(
            "PUT /configuration HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n");
    CompletableFuture<String> answer = answer(s);
    String chunk = "#".repeat(64 << 10);
    try {
      for (int i = 0; i < 4; i++) {
        send(s, Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
      }
    } catch (IOException e) {
      // the server answered and closed while the chunks were sent
    }
    assertThat(answer.get(10, TimeUnit.SECONDS))
        .startsWith("http/1.1 503")
        .contains("retry-after: ");
  }

  @Test
  @DisplayName("request headers that arrive too slowly, or never, have their connection closed")
  void slowHeadersAreCutOff() throws Exception {
    start(SMALL.withHeaderTimeout(Duration.ofMillis(500)));
    Socket slow = open("GET /info/version HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    trickle.scheduleAtFixedRate(
        () -> {
          try {
            send(slow, "X-Slow: a\r\n");
          } catch (IOException e) {
            // closed by the server
          }
        },
        100,
        100,
        TimeUnit.MILLISECONDS);
    Socket silent = open("");
    assertThat(RestServerTest.closedByServer(slow, Duration.ofSeconds(3))).isTrue();
    assertThat(RestServerTest.closedByServer(silent, Duration.ofSeconds(3))).isTrue();
    // a kept-alive connection idle between requests is not cut off by the header timeout
    try (RawHttpClient c = new RawHttpClient(rest.port())) {
      assertThat(c.send("GET", "/info/version", (String) null, new byte[0]).status())
          .isEqualTo(200);
      Socket kept = new Socket("127.0.0.1", rest.port());
      sockets.add(kept);
      String get = "GET /info/version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
      send(kept, get);
      assertThat(answerHead(kept)).startsWith("http/1.1 200");
      Thread.sleep(1500);
      assertThat(kept.isClosed()).isFalse();
      kept.getOutputStream().write(get.getBytes(StandardCharsets.US_ASCII));
      // the first answer's body, then the second answer
      kept.setSoTimeout(3000);
      String rest = new String(kept.getInputStream().readNBytes(200), StandardCharsets.US_ASCII);
      assertThat(rest).contains("HTTP/1.1 200");
    }
  }

  @Test
  @DisplayName("event streams beyond the limit get 503; once one closes, a new one is served")
  void eventStreamsAreCapped() throws Exception {
    start(SMALL.withEventClients(2));
    String get = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
    Socket one = open(get);
    open(get);
    await().atMost(Duration.ofSeconds(10)).until(() -> subscribers.size() == 2);
    Socket third = open(get);
    assertThat(answerHead(third)).startsWith("http/1.1 503");
    assertThat(subscribers).hasSize(2);
    assertThat(promptGet()).isEqualTo(200);
    one.close();
    // the server notices the closed stream when it next writes to it
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              subscribers.forEach(
                  c -> {
                    try {
                      c.accept("ping");
                    } catch (RuntimeException e) {
                      subscribers.remove(c);
                    }
                  });
              return answerHead(open(get)).startsWith("http/1.1 200");
            });
  }
}
