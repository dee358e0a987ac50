package io.kvscheduler.plugins.linux;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.descriptor.LinkDescriptor;
import io.kvscheduler.plugins.linux.descriptor.PortDescriptor;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.Port;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

/**
 * Fuzzing of the JSON of links and ports, {@value #TRIES} inputs each: valid values mutated (fields
 * renamed, values swapped for other values and hostile text, characters inserted and removed) go
 * through the model registry as an etcd value goes, then through the descriptor's validation.
 * Properties: a rejection names the key; a decoded value is valid, or INVALID naming at least one
 * of its fields with a message that shows no raw control character; nothing else is thrown.
 */
class LinkJsonFuzzTest extends ModelJsonFuzz {
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

  /** Fields and values of links and ports, for mutations to put in. */
  static final List<String> WORDS =
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
          "99999999999");

  /** Words and values mutations put in: {@link #WORDS} and JSON tokens. */
  static final List<String> PIECES = Stream.concat(WORDS.stream(), JSON_TOKENS.stream()).toList();

  private final KVDescriptor.Validator<Link> links =
      LinkDescriptor.create(null, KernelFixture.AGENT_PREFIX, () -> null).validate().orElseThrow();
  private final KVDescriptor.Validator<Port> ports =
      PortDescriptor.create(null, () -> null).validate().orElseThrow();

  @Provide
  Arbitrary<String> linkJson() {
    return mutationsOf(LINKS, PIECES);
  }

  @Provide
  Arbitrary<String> portJson() {
    return mutationsOf(PORTS, PIECES);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void linkValues(@ForAll("linkJson") String json) {
    check(LinuxModels.LINK, json, links);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void portValues(@ForAll("portJson") String json) {
    check(LinuxModels.PORT, json, ports);
  }
}
