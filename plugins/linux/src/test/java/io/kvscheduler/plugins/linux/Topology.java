package io.kvscheduler.plugins.linux;

import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The example topology: namespaces ns1 and ns2 joined by the veth pair veth1 (10.0.1.1/24) and
 * veth2 (10.0.1.2/24), the loopback of ns2 holding 10.0.2.1/32, a route in ns1 to 10.0.2.0/24 via
 * 10.0.1.2, and a permanent ARP entry in ns1 for 10.0.1.2.
 */
final class Topology {
  private Topology() {}

  static final String MAC1 = "02:00:00:00:01:01";
  static final String MAC2 = "02:00:00:00:01:02";

  static final Interface VETH1 =
      Values.veth("veth1", "veth2", "ns1", "10.0.1.1/24").setPhysAddress(MAC1).build();
  static final Interface VETH2 =
      Values.veth("veth2", "veth1", "ns2", "10.0.1.2/24").setPhysAddress(MAC2).build();
  static final Interface LO2 =
      Interface.newBuilder()
          .setName("lo2")
          .setType(Interface.Type.LOOPBACK)
          .setNamespace(Values.ns("ns2"))
          .setEnabled(true)
          .addIpAddresses("10.0.2.1/32")
          .build();
  static final Route ROUTE = Values.route("veth1", "10.0.2.0/24", "10.0.1.2");
  static final ARPEntry ARP = Values.arp("veth1", "10.0.1.2", MAC2);

  static Map<String, Object> values() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(ROUTE), ROUTE); // in any order: dependencies decide
    m.put(Values.key(ARP), ARP);
    m.put(Values.key(VETH1), VETH1);
    m.put(Values.key(VETH2), VETH2);
    m.put(Values.key(LO2), LO2);
    return m;
  }
}
