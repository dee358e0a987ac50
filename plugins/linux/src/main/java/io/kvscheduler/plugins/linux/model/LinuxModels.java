package io.kvscheduler.plugins.linux.model;

import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.grpc.proto.netalloc.IPAllocation;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.Port;
import io.kvscheduler.plugins.linux.netalloc.NetallocKeys;
import java.util.List;

/**
 * The Linux models as the agent registers them: keys and YAML fields as in vpp-agent, and the links
 * and ports of our extension package.
 */
public final class LinuxModels {
  private LinuxModels() {}

  /** {@code linux.interfaces.interface}: {@code config/linux/interfaces/v2/interface/<name>}. */
  public static final Model<Interface> INTERFACE =
      Model.builder("linux.interfaces", "v2", "interface", Interface.class)
          .name(Interface::getName, "{{.Name}}")
          .yamlField("interfaces")
          .build();

  /**
   * {@code linux.l3.route}: {@code config/linux/l3/v2/route/<dst network>/<interface>}, followed by
   * {@code /table/<number>} for a route of another table than main (our extension).
   */
  public static final Model<Route> ROUTE =
      Model.builder("linux.l3", "v2", "route", Route.class)
          .name(
              LinuxKeys::routeName,
              "{{with ipnet .DstNetwork}}{{printf \"%s/%d\" .IP"
                  + " .MaskSize}}{{else}}{{.DstNetwork}}{{end}}/{{.OutgoingInterface}}"
                  + "{{if .Table}}/table/{{.Table}}{{end}}")
          .yamlField("routes")
          .build();

  /**
   * {@code linux.iptables.rulechain}: {@code config/linux/iptables/v2/rulechain/<name>}. YAML field
   * {@code RuleChain_list}: vpp-agent's Linux configuration has no field for rule chains.
   */
  public static final Model<RuleChain> RULE_CHAIN =
      Model.builder("linux.iptables", "v2", "rulechain", RuleChain.class)
          .name(RuleChain::getName, "{{.Name}}")
          .build();

  /** {@code linux.l3.arp}: {@code config/linux/l3/v2/arp/<interface>/<ip>}. */
  public static final Model<ARPEntry> ARP =
      Model.builder("linux.l3", "v2", "arp", ARPEntry.class)
          .name(LinuxKeys::arpName, "{{.Interface}}/{{.IpAddress}}")
          .yamlField("arpEntries")
          .build();

  /**
   * {@code linux.links.link}: {@code config/linux/links/v1/link/<name>}, a bridge, VXLAN, macvlan,
   * VLAN, bond or VRF link of our extension package {@code kvscheduler.linux.links}.
   */
  public static final Model<Link> LINK =
      Model.builder("linux.links", "v1", "link", Link.class)
          .name(Link::getName, "{{.Name}}")
          .yamlField("links")
          .build();

  /** {@code linux.links.port}: {@code config/linux/links/v1/port/<interface>} (extension). */
  public static final Model<Port> PORT =
      Model.builder("linux.links", "v1", "port", Port.class)
          .name(Port::getInterface, "{{.Interface}}")
          .yamlField("ports")
          .build();

  /**
   * {@code netalloc.ip}: {@code config/netalloc/v1/ip/network/<network>/interface/<interface>}, an
   * IP address allocated to an interface, which interface addresses and route gateways reference
   * ({@code alloc:<network>/<interface>}); YAML group {@code netallocConfig}, field {@code
   * ipAddresses}.
   */
  public static final Model<IPAllocation> IP_ALLOCATION =
      Model.builder("netalloc", "v1", "ip", IPAllocation.class)
          .name(
              a -> NetallocKeys.allocationName(a.getNetworkName(), a.getInterfaceName()),
              "network/{{.NetworkName}}/interface/{{.InterfaceName}}")
          .yamlField("ipAddresses")
          .build();

  /** The models. */
  public static List<Model<?>> all() {
    return List.of(INTERFACE, ROUTE, ARP, RULE_CHAIN, LINK, PORT, IP_ALLOCATION);
  }

  /** Registers the models. */
  public static void registerAll(ModelRegistry registry) {
    all().forEach(registry::register);
  }
}
