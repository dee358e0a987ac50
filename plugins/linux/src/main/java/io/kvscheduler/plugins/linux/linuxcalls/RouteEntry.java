package io.kvscheduler.plugins.linux.linuxcalls;

/**
 * A route as the kernel reports it, or as one is requested.
 *
 * @param namespace the named namespace, "" for the agent's own
 * @param device the outgoing link's host name
 * @param destination network with prefix length ({@code 10.0.2.0/24}, {@code default} becomes
 *     {@code 0.0.0.0/0} or {@code ::/0})
 * @param gateway next hop, "" when directly connected
 * @param metric the metric (priority)
 * @param scope {@code global}, {@code site}, {@code link}, {@code host}; "" for the kernel's
 *     default
 * @param ours whether the route carries the plugin's routing protocol number ({@link
 *     LinuxCalls#ROUTE_PROTOCOL}): made by the plugin, not by someone else; ignored in requests
 * @param table the routing table, 0 for the main table (254)
 */
public record RouteEntry(
    String namespace,
    String device,
    String destination,
    String gateway,
    int metric,
    String scope,
    boolean ours,
    int table) {
  /** A route of the main table. */
  public RouteEntry(
      String namespace,
      String device,
      String destination,
      String gateway,
      int metric,
      String scope,
      boolean ours) {
    this(namespace, device, destination, gateway, metric, scope, ours, 0);
  }
}
