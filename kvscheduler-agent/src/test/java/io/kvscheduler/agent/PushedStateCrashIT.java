package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as a real process killed with SIGKILL at random points while 64 clients push: 32 over
 * REST ({@code PUT /configuration}), 32 over gRPC ({@code SetConfig}), each request three new
 * interfaces. After every restart: every request that was answered 200 / OK is there (desired and
 * in the southbound, kept in a state file as a data plane outlives the agent), every request is
 * there whole or not at all, and the restart's resync deletes nothing from the southbound.
 */
class PushedStateCrashIT {
  static final int KILLS = 5;
  static final int CLIENTS = 64;
  static final int PER_REQUEST = 3;
  static final Pattern NAME = Pattern.compile("name: (r\\d+-[rg]\\d+-\\d+)-(\\d)");

  @TempDir Path tmp;

  @Test
  @DisplayName(
      "SIGKILL at 5 random points under 64 pushing clients: every answered request is kept,"
          + " none half, and the restart's resync deletes nothing")
  void answeredPushesSurviveSigkill() throws Exception {
    long seed = Long.getLong("kvs.crash.seed", System.nanoTime());
    Random random = new Random(seed);
    Path sb = tmp.resolve("sb.state");
    String[] args = {"--state-dir", tmp.resolve("state").toString(), "--quiet"};
    Set<String> answered = ConcurrentHashMap.newKeySet(); // request ids
    int refused = 0;
    long started = System.nanoTime();
    PushingAgent agent = PushingAgent.start(sb, args);
    try {
      for (int round = 0; round < KILLS; round++) {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger notOk = new AtomicInteger();
        AtomicInteger answeredNow = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        PushingAgent a = agent;
        int r = round;
        for (int c = 0; c < CLIENTS; c++) {
          boolean rest = c % 2 == 0;
          String client = (rest ? "r" : "g") + c;
          clients.execute(
              () -> {
                for (int i = 0; !stop.get(); i++) {
                  String id = "r" + r + "-" + client + "-" + i;
                  String[] names = new String[PER_REQUEST];
                  for (int j = 0; j < PER_REQUEST; j++) {
                    names[j] = id + "-" + j;
                  }
                  try {
                    if (rest) {
                      int code = a.put(PushingAgent.yaml(names));
                      if (code != 200) {
                        notOk.incrementAndGet();
                        continue;
                      }
                    } else {
                      a.setConfig(names);
                    }
                    answered.add(id);
                    answeredNow.incrementAndGet();
                  } catch (Exception e) {
                    return; // the agent is gone: this request was not answered
                  }
                }
              });
        }
        // the kill comes at a random point once the clients are under way
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (answeredNow.get() < CLIENTS / 4 && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        assertThat(answeredNow.get()).as("round %d: requests answered", round).isPositive();
        Thread.sleep(random.nextInt(1000));
        agent.kill(); // SIGKILL
        stop.set(true);
        clients.shutdown();
        assertThat(clients.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        refused += notOk.get();
        int sbOpsAtKill = SouthboundJournal.read(sb).size();

        agent = PushingAgent.start(sb, args);
        // desired: every answered request, each request whole or not at all
        Set<String> desired = groups(agent.configuration(), "desired after kill " + round);
        assertThat(desired).as("round %d: answered requests desired", round).containsAll(answered);
        // the southbound: the restart's resync created what was missing, deleted nothing
        List<List<String>> restartOps = new ArrayList<>(SouthboundJournal.read(sb));
        restartOps = restartOps.subList(sbOpsAtKill, restartOps.size());
        assertThat(restartOps)
            .as("round %d: the restart's southbound operations", round)
            .noneMatch(op -> op.get(0).endsWith("-delete"));
        JsonNode history = agent.get("/scheduler/txn-history");
        assertThat(history.size())
            .as("round %d: transactions after the restart", round)
            .isPositive();
        JsonNode first = history.get(0);
        assertThat(first.path("Description").asText()).isEqualTo("resync from the state store");
        for (JsonNode op : first.path("Executed")) {
          assertThat(op.path("Operation").asText())
              .as("round %d: %s", round, op)
              .isNotEqualTo("DELETE");
        }
        Set<String> inSb = new HashSet<>();
        for (List<String> op : SouthboundJournal.read(sb)) {
          if (op.get(0).equals("iface-create")) {
            inSb.add(op.get(2));
          } else if (op.get(0).equals("iface-delete")) {
            throw new AssertionError("an interface was deleted from the southbound: " + op);
          }
        }
        for (String id : answered) {
          for (int j = 0; j < PER_REQUEST; j++) {
            assertThat(inSb).as("round %d: in the southbound", round).contains(id + "-" + j);
          }
        }
      }
    } finally {
      agent.close();
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    System.out.printf(
        "pushed state crash test (seed %d): %d kills, %d requests answered and kept,"
            + " %d refused (503), %.1f s%n",
        seed, KILLS, answered.size(), refused, seconds);
    assertThat(answered.size()).isGreaterThan(KILLS * 10);
  }

  /** The request ids of the interfaces in {@code yaml}, checked to be whole. */
  static Set<String> groups(String yaml, String what) {
    java.util.Map<String, Integer> count = new java.util.TreeMap<>();
    Matcher m = NAME.matcher(yaml);
    while (m.find()) {
      count.merge(m.group(1), 1, Integer::sum);
    }
    Set<String> half = new TreeSet<>();
    count.forEach(
        (id, n) -> {
          if (n != PER_REQUEST) {
            half.add(id + " (" + n + " of " + PER_REQUEST + ")");
          }
        });
    assertThat(half).as("%s: requests kept in part", what).isEmpty();
    return count.keySet();
  }
}
