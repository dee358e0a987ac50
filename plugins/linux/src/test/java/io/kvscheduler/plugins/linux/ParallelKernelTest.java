package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Linux plugin with parallel southbound calls on the real kernel: addresses, routes and ARP
 * entries opt in ({@link LinuxPlugin#PARALLEL_DESCRIPTORS}), so with {@code parallelism} 8 the
 * calls for different namespaces overlap. Built and torn down, the kernel holds exactly what it
 * holds with one call at a time, and the scheduler records the same operations in the same order.
 */
class ParallelKernelTest {
  private static final int PAIRS = 6;

  /** PAIRS veth pairs, each between its own two namespaces, with a route and an ARP entry. */
  private static Map<String, Object> values() {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < PAIRS; i++) {
      String a = "a" + i;
      String b = "b" + i;
      String mac = String.format("02:00:00:00:0%d:02", i);
      Interface ea = Values.veth(a, b, "nsa" + i, "10.1." + i + ".1/24").build();
      Interface eb =
          Values.veth(b, a, "nsb" + i, "10.1." + i + ".2/24").setPhysAddress(mac).build();
      Route route = Values.route(a, "10.2." + i + ".0/24", "10.1." + i + ".2");
      ARPEntry arp = Values.arp(a, "10.1." + i + ".2", mac);
      m.put(Values.key(route), route);
      m.put(Values.key(arp), arp);
      m.put(Values.key(ea), ea);
      m.put(Values.key(eb), eb);
    }
    return m;
  }

  /** What one scheduler did and what its kernel held after building and after tearing down. */
  private record Outcome(
      List<List<RecordedTxnOp>> records, List<String> built, List<String> left) {}

  private static Outcome run(int parallelism) {
    try (KernelFixture k = KernelFixture.start(parallelism)) {
      List<List<RecordedTxnOp>> records = new ArrayList<>();
      Map<String, Object> all = values();
      records.add(k.kvs.recordedTransaction(k.change(all)).orElseThrow().executed());
      for (String key : all.keySet()) {
        assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
      }
      List<String> built = kernel(k);
      Map<String, Object> none = new LinkedHashMap<>();
      all.keySet().forEach(key -> none.put(key, null));
      records.add(k.kvs.recordedTransaction(k.change(none)).orElseThrow().executed());
      return new Outcome(records, built, kernel(k));
    }
  }

  /** Every pair's addresses, routes and permanent neighbours, as the kernel reports them. */
  private static List<String> kernel(KernelFixture k) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < PAIRS; i++) {
      String nsa = "nsa" + i;
      if (!k.sh("ip", "netns", "list").contains(nsa)) {
        out.add(nsa + " gone");
        continue;
      }
      if (!k.linkNames(nsa).contains("a" + i)) {
        out.add(nsa + " a" + i + " gone");
        continue;
      }
      out.add(nsa + " a" + i + " " + k.addresses(nsa, "a" + i));
      for (JsonNode r : k.ipJson(nsa, "route", "show", "10.2." + i + ".0/24")) {
        out.add(nsa + " route " + r.path("dst").asText() + " via " + r.path("gateway").asText());
      }
      for (JsonNode n : k.ipJson(nsa, "neigh", "show", "nud", "permanent")) {
        out.add(nsa + " neigh " + n.path("dst").asText() + " " + n.path("lladdr").asText());
      }
    }
    return out;
  }

  @Test
  void theKernelAndTheRecordsAreThoseOfOneCallAtATime() {
    Outcome sequential = run(1);
    Outcome parallel = run(8);

    assertThat(sequential.built()).contains("nsa0 route 10.2.0.0/24 via 10.1.0.2");
    assertThat(sequential.left()).contains("nsa0 a0 gone");
    assertThat(parallel.built()).isEqualTo(sequential.built());
    assertThat(parallel.left()).isEqualTo(sequential.left());
    assertThat(parallel.records()).isEqualTo(sequential.records());
  }
}
