package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.rest.RestLimits;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.api.KVScheduler;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Server-sent events to a client that does not read: the events of the other clients, and the
 * thread that makes the events, are not held up (writing to that client blocks once its
 * connection's buffers are full, up to the idle timeout of a minute), and the client is
 * disconnected once too many events wait for it.
 */
class RestEventClientsTest {
  /** The subscribed clients; events are handed to them one after the other on one thread. */
  final List<Consumer<String>> subscribers = new CopyOnWriteArrayList<>();

  final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  final ExecutorService threads = Executors.newCachedThreadPool();
  final List<Socket> sockets = new ArrayList<>();
  RestServer rest;

  @AfterEach
  void stop() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    if (rest != null) {
      rest.close();
    }
    threads.shutdownNow();
    kvs.close();
  }

  /** Hands {@code data} to every subscriber, as the status events do. */
  void publish(String data) {
    for (Consumer<String> c : subscribers) {
      try {
        c.accept(data);
      } catch (RuntimeException e) {
        subscribers.remove(c);
      }
    }
  }

  /** Opens {@code GET /events}; the socket's receive buffer is small. */
  Socket open() throws Exception {
    Socket s = new Socket();
    sockets.add(s);
    s.setReceiveBufferSize(4096);
    s.connect(new InetSocketAddress("127.0.0.1", rest.port()), 5000);
    OutputStream out = s.getOutputStream();
    out.write(
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    return s;
  }

  @Test
  void aClientThatDoesNotReadHoldsUpNeitherTheOtherClientsNorTheEvents() throws Exception {
    rest =
        new RestServer(
            "127.0.0.1:0",
            new RestLimits(4, 8, Duration.ofSeconds(60), 1024 * 1024),
            RestSecurity.NONE);
    rest.eventRoute(
        "/events",
        client -> {
          subscribers.add(client);
          return () -> subscribers.remove(client);
        });
    rest.start();

    open(); // never read
    Socket reader = open();
    List<String> received = new CopyOnWriteArrayList<>();
    threads.execute(
        () -> {
          try (BufferedReader in =
              new BufferedReader(
                  new InputStreamReader(reader.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
              if (line.startsWith("data:") && line.length() < 100) {
                received.add(line.substring(5).strip());
              }
            }
          } catch (Exception e) {
            // closed at the end
          }
        });
    await().atMost(Duration.ofSeconds(20)).until(() -> subscribers.size() == 2);

    // far more than the stuck client's connection buffers hold, at a pace a reading client
    // keeps up with (the status events come at most every 100 ms)
    String big = "x".repeat(64 * 1024);
    CompletableFuture<Void> published =
        CompletableFuture.runAsync(
            () -> {
              for (int i = 0; i < 200; i++) {
                publish(big);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
              }
              publish("after");
            },
            threads);
    // a write to the stuck client waits for the idle timeout of 60 s: the events are not held
    published.get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> received.contains("after"));
    // the stuck client let too many events pile up: disconnected, its subscription closed
    await().atMost(Duration.ofSeconds(10)).until(() -> subscribers.size() == 1);
    publish("still");
    await().atMost(Duration.ofSeconds(10)).until(() -> received.contains("still"));
    assertThat(received).containsSubsequence("after", "still");
  }
}
