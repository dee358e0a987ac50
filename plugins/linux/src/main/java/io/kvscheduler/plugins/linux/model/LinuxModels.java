package io.kvscheduler.plugins.linux.model;

import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.List;

/** The Linux models as the agent registers them: keys and YAML fields as in vpp-agent. */
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

  /** {@code linux.l3.arp}: {@code config/linux/l3/v2/arp/<interface>/<ip>}. */
  public static final Model<ARPEntry> ARP =
      Model.builder("linux.l3", "v2", "arp", ARPEntry.class)
          .name(LinuxKeys::arpName, "{{.Interface}}/{{.IpAddress}}")
          .yamlField("arpEntries")
          .build();

  /** The three models. */
  public static List<Model<?>> all() {
    return List.of(INTERFACE, ROUTE, ARP);
  }

  /** Registers the three models. */
  public static void registerAll(ModelRegistry registry) {
    all().forEach(registry::register);
  }
}
