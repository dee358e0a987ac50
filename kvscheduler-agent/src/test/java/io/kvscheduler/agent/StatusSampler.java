package io.kvscheduler.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reads an agent's status keys from etcd every 100 ms while a fault goes on and notes every sample
 * in which they are not consistent: the agent status missing or not {@code OK}, a value status
 * missing, not {@code CONFIGURED}, or of a value the agent does not have.
 */
final class StatusSampler implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Client client;
  private final String prefix;
  private final Set<String> names;
  private final Thread thread;
  private final AtomicInteger samples = new AtomicInteger();
  private final AtomicInteger unreadable = new AtomicInteger();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private volatile boolean stop;

  /**
   * Samples the keys of agent prefix {@code prefix}, whose values are the interfaces {@code names}.
   */
  StatusSampler(List<String> endpoints, String prefix, Set<String> names) {
    this.client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
    this.prefix = prefix;
    this.names = new TreeSet<>(names);
    this.thread = new Thread(this::run, "status-sampler");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    while (!stop) {
      try {
        GetResponse r =
            client
                .getKVClient()
                .get(bytes(prefix + "c"), GetOption.builder().isPrefix(true).build())
                .get(2, TimeUnit.SECONDS);
        check(r.getKvs());
        samples.incrementAndGet();
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        unreadable.incrementAndGet(); // etcd itself is in trouble: nothing to judge
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void check(List<KeyValue> kvs) throws Exception {
    Set<String> statuses = new TreeSet<>();
    boolean agentOk = false;
    for (KeyValue kv : kvs) {
      String key = kv.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
      JsonNode v = JSON.readTree(kv.getValue().toString(StandardCharsets.UTF_8));
      if (key.equals("check/status/v1/agent")) {
        agentOk = v.path("state").asText().equals("OK");
      } else if (key.startsWith("config-status/mock/v1/interfaces/")) {
        String name = key.substring("config-status/mock/v1/interfaces/".length());
        statuses.add(name);
        if (!v.path("state").asText().equals("CONFIGURED")) {
          violations.add(key + " is " + v.path("state").asText());
        }
      }
    }
    if (!agentOk) {
      violations.add("agent status missing or not OK");
    }
    if (!statuses.equals(names)) {
      violations.add("value statuses " + statuses + ", expected " + names);
    }
  }

  /** Samples read and judged. */
  int samples() {
    return samples.get();
  }

  /** Samples etcd did not answer (during the fault). */
  int unreadable() {
    return unreadable.get();
  }

  /** What was wrong, one entry per bad sample and cause. */
  List<String> violations() {
    return List.copyOf(violations);
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join(5000);
    client.close();
  }
}
