package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.descriptor.LinkDescriptor;
import io.kvscheduler.plugins.linux.descriptor.PortDescriptor;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.Port;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterProperty;

/**
 * Fuzzing of the JSON of links and ports, {@value #TRIES} inputs each: valid values mutated (fields
 * renamed, values swapped for other values and hostile text, characters inserted and removed) go
 * through the model registry as an etcd value goes, then through the descriptor's validation.
 * Properties: a rejection names the key; a decoded value is valid, or INVALID naming at least one
 * of its fields with a message that shows no raw control character; nothing else is thrown.
 */
class LinkJsonFuzzTest {
  static final int TRIES = 10_000;

  static final List<String> LINKS =
      List.of(
          "{\"name\": \"br1\", \"enabled\": true, \"ip_addresses\": [\"10.0.9.1/24\"],"
              + " \"bridge\": {\"stp\": true}}",
          "{\"name\": \"vx1\", \"namespace\": {\"type\": \"NSID\", \"reference\": \"ns1\"},"
              + " \"vxlan\": {\"vni\": 42, \"local\": \"192.168.50.1\", \"remote\":"
              + " \"192.168.50.2\", \"underlay\": \"u1\", \"dst_port\": 4789}}",
          "{\"name\": \"vx2\", \"vxlan\": {\"vni\": 7, \"group\": \"239.1.1.1\", \"underlay\":"
              + " \"eth0\"}}",
          "{\"name\": \"mv1\", \"mtu\": 1400, \"phys_address\": \"02:00:00:00:00:01\","
              + " \"macvlan\": {\"parent\": \"m1\", \"mode\": \"PRIVATE\"}}",
          "{\"name\": \"e1.5\", \"host_if_name\": \"e1v5\", \"vlan\": {\"parent\": \"e1\","
              + " \"id\": 5}}",
          "{\"name\": \"bond0\", \"bond\": {\"mode\": \"LACP\"}}",
          "{\"name\": \"vrf-blue\", \"vrf\": {\"routing_table\": 10}}");

  static final List<String> PORTS =
      List.of(
          "{\"interface\": \"p1\", \"master\": \"br1\"}",
          "{\"interface\": \"b1\", \"master\": \"bond0\"}");

  /** Words and values mutations put in. */
  static final List<String> PIECES =
      List.of(
          "\"name\"",
          "\"host_if_name\"",
          "\"vni\"",
          "\"remote\"",
          "\"group\"",
          "\"local\"",
          "\"underlay\"",
          "\"parent\"",
          "\"mode\"",
          "\"id\"",
          "\"routing_table\"",
          "\"master\"",
          "\"interface\"",
          "\"dst_port\"",
          "\"bridge\"",
          "\"vxlan\"",
          "\"macvlan\"",
          "\"vlan\"",
          "\"bond\"",
          "\"vrf\"",
          "\"mtu\"",
          "\"enabled\"",
          "\"ip_addresses\"",
          "\"namespace\"",
          "\"stp\"",
          "\"a\\tb\"",
          "\"x%d\"",
          "\"../x\"",
          "\"a#b\"",
          "\"\\u0000\"",
          "\"é\"",
          "\"239.0.0.1\"",
          "\"::1\"",
          "\"fe80::1/64\"",
          "\"10.0.0.1\"",
          "\"VEPA\"",
          "\"BOGUS\"",
          "-1",
          "0",
          "4095",
          "16777216",
          "4294967295",
          "99999999999",
          "1.5",
          "true",
          "null",
          "[]",
          "{}",
          ",",
          ":",
          "{",
          "}",
          "[",
          "]",
          "\"",
          "\\",
          " ");

  private final ModelRegistry models = new ModelRegistry();
  private final KVDescriptor.Validator<Link> links =
      LinkDescriptor.create(null, KernelFixture.AGENT_PREFIX, () -> null).validate().orElseThrow();
  private final KVDescriptor.Validator<Port> ports =
      PortDescriptor.create(null, () -> null).validate().orElseThrow();
  private String label = "";
  private long rejected;
  private long invalid;
  private long valid;

  LinkJsonFuzzTest() {
    LinuxModels.registerAll(models);
  }

  @AfterProperty
  void report() {
    System.out.printf(
        "fuzz %s: %d inputs, %d rejected by the model, %d INVALID, %d valid%n",
        label, rejected + invalid + valid, rejected, invalid, valid);
  }

  static String mutate(String seed, Random r, int n) {
    StringBuilder s = new StringBuilder(seed);
    for (int i = 0; i < n; i++) {
      int at = s.length() == 0 ? 0 : r.nextInt(s.length());
      switch (r.nextInt(4)) {
        case 0 -> s.insert(at, PIECES.get(r.nextInt(PIECES.size())));
        case 1 -> {
          if (s.length() > 0) {
            s.deleteCharAt(at);
          }
        }
        case 2 -> {
          // a quoted value replaced by another piece
          int q = s.indexOf(": \"", at);
          int end = q < 0 ? -1 : s.indexOf("\"", q + 3);
          if (end > 0) {
            s.replace(q + 2, end + 1, PIECES.get(r.nextInt(PIECES.size())));
          }
        }
        default -> s.insert(at, (char) r.nextInt(0x3000));
      }
    }
    return s.toString();
  }

  static Arbitrary<String> mutationsOf(List<String> seeds) {
    return Combinators.combine(
            Arbitraries.of(seeds), Arbitraries.longs(), Arbitraries.integers().between(0, 5))
        .as((s, r, n) -> mutate(s, new Random(r), n));
  }

  @Provide
  Arbitrary<String> linkJson() {
    return mutationsOf(LINKS);
  }

  @Provide
  Arbitrary<String> portJson() {
    return mutationsOf(PORTS);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void linkValues(@ForAll("linkJson") String json) {
    check(LinuxModels.LINK, json, "br1", v -> links.validate(models.keyOf(v), (Link) v));
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void portValues(@ForAll("portJson") String json) {
    check(LinuxModels.PORT, json, "p1", v -> ports.validate(models.keyOf(v), (Port) v));
  }

  interface Validation {
    void run(Object value) throws Exception;
  }

  private void check(Model<?> model, String json, String name, Validation validate) {
    label = model.name();
    Object v;
    try {
      v =
          models.decodeTree(
              model, new com.fasterxml.jackson.databind.ObjectMapper().readTree(json));
    } catch (ModelException e) {
      rejected++;
      assertThat(e.getMessage()).startsWith(model.keyPrefix());
      return;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      rejected++; // not JSON at all
      return;
    }
    try {
      validate.run(v);
      valid++;
    } catch (InvalidValueException e) {
      invalid++;
      assertThat(e.invalidFields()).as("fields named for %s", json).isNotEmpty();
      HostileValuesTest.assertNothingRaw(e.getMessage());
    } catch (Exception e) {
      throw new AssertionError("validation of " + json + " threw " + e, e);
    }
  }
}
