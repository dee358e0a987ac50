package io.kvscheduler.plugins.linux;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.grpc.proto.netalloc.IPAllocation;
import io.kvscheduler.plugins.linux.descriptor.ArpDescriptor;
import io.kvscheduler.plugins.linux.descriptor.InterfaceAddressDescriptor;
import io.kvscheduler.plugins.linux.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.linux.descriptor.InterfaceVrfDescriptor;
import io.kvscheduler.plugins.linux.descriptor.InterfaceWatcherDescriptor;
import io.kvscheduler.plugins.linux.descriptor.IpAllocationDescriptor;
import io.kvscheduler.plugins.linux.descriptor.LinkDescriptor;
import io.kvscheduler.plugins.linux.descriptor.NamespaceWatcherDescriptor;
import io.kvscheduler.plugins.linux.descriptor.PortDescriptor;
import io.kvscheduler.plugins.linux.descriptor.RouteDescriptor;
import io.kvscheduler.plugins.linux.descriptor.RuleChainDescriptor;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.IptablesCalls;
import io.kvscheduler.plugins.linux.linuxcalls.IptablesRestoreCalls;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.netalloc.AllocatedIp;
import io.kvscheduler.plugins.linux.netalloc.IpAllocations;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The Linux descriptors registered on a scheduler, in vpp-agent's order: interfaces, their
 * addresses and VRF bindings, the interface watcher, ARP entries, routes, iptables rule chains;
 * address allocations (netalloc), which addresses and route gateways may reference; and, from our
 * extension package, links (bridges, VXLAN, macvlan, VLAN, bonds, VRF devices) and ports; last, the
 * watcher of the namespaces values refer to by process, file or microservice label. Exposes the
 * interface metadata map read-only, and starts and stops the watchers.
 */
public final class LinuxPlugin implements AutoCloseable {
  /**
   * The descriptors whose operations on different values may run concurrently: they opt in with
   * {@link #MAX_CONCURRENCY} ({@code KVDescriptor.Builder.maxConcurrency}), which takes effect when
   * the scheduler runs calls in parallel ({@code KVSchedulerBuilder.parallelism}). Their calls into
   * one network namespace still go through that namespace's one {@code ip} session in turn; calls
   * into different namespaces overlap. Interfaces do not opt in: creating a veth pair or moving a
   * link between namespaces touches two places at once.
   */
  public static final List<String> PARALLEL_DESCRIPTORS =
      List.of(
          InterfaceAddressDescriptor.NAME,
          RouteDescriptor.NAME,
          ArpDescriptor.NAME,
          RuleChainDescriptor.NAME);

  /** How many calls of each of {@link #PARALLEL_DESCRIPTORS} may run at the same time. */
  public static final int MAX_CONCURRENCY = 16;

  private final KVScheduler kvs;
  private final LinuxIfIndex interfaces;
  private final InterfaceWatcherDescriptor watcher;
  private final NamespaceWatcherDescriptor namespaces;
  private final IptablesCalls iptables;

  private LinuxPlugin(
      KVScheduler kvs,
      LinuxIfIndex interfaces,
      InterfaceWatcherDescriptor watcher,
      NamespaceWatcherDescriptor namespaces,
      IptablesCalls iptables) {
    this.kvs = kvs;
    this.interfaces = interfaces;
    this.watcher = watcher;
    this.namespaces = namespaces;
    this.iptables = iptables;
  }

  /**
   * Registers the descriptors on {@code kvs} over {@code calls}; links the agent creates are marked
   * with aliases starting with {@code agentPrefix} ({@code /vnf-agent/<label>/}).
   */
  public static LinuxPlugin register(KVScheduler kvs, LinuxCalls calls, String agentPrefix) {
    return register(
        kvs,
        calls,
        calls instanceof IpRoute2Calls ip ? ip.iptables() : new IptablesRestoreCalls(CALL_LIMIT),
        agentPrefix);
  }

  /** Limit of one iptables command when the calls do not say it. */
  private static final Duration CALL_LIMIT = Duration.ofSeconds(30);

  /**
   * {@link #register(KVScheduler, LinuxCalls, String)} with the rule chains applied through {@code
   * iptables}.
   */
  public static LinuxPlugin register(
      KVScheduler kvs, LinuxCalls calls, IptablesCalls iptables, String agentPrefix) {
    // address allocations: no southbound, read by the addresses and routes that reference them
    KVDescriptor<IPAllocation, AllocatedIp> allocated = IpAllocationDescriptor.create();
    kvs.registerDescriptors(allocated);
    IpAllocations allocations = new IpAllocations(kvs.metadataMap(allocated));
    NamespaceWatcherDescriptor namespaces = new NamespaceWatcherDescriptor(calls);
    KVDescriptor<Interface, LinuxIfMetadata> interfaces =
        InterfaceDescriptor.create(calls, agentPrefix, namespaces, allocations);
    kvs.registerDescriptors(interfaces);
    // links of the extension package (bridges, VXLAN, macvlan, ...) and ports: found by logical
    // name beside the interfaces
    AtomicReference<LinuxIfIndex> found = new AtomicReference<>();
    KVDescriptor<io.kvscheduler.plugins.linux.model.links.Link, LinuxIfMetadata> links =
        LinkDescriptor.create(calls, agentPrefix, found::get, namespaces);
    kvs.registerDescriptors(links);
    LinuxIfIndex index = new LinuxIfIndex(kvs.metadataMap(interfaces), kvs.metadataMap(links));
    found.set(index);
    kvs.registerDescriptors(PortDescriptor.create(calls, found::get));
    InterfaceWatcherDescriptor watcher = new InterfaceWatcherDescriptor(calls);
    kvs.registerDescriptors(
        InterfaceAddressDescriptor.create(calls, index, allocations),
        InterfaceVrfDescriptor.create(calls, index),
        watcher.descriptor(),
        ArpDescriptor.create(calls, index),
        RouteDescriptor.create(calls, index, allocations));
    kvs.registerDescriptors(RuleChainDescriptor.create(calls, iptables, namespaces));
    namespaces.onGone(iptables::closeNamespace);
    // after the values referring to namespaces, whose Retrieve it follows
    kvs.registerDescriptors(namespaces.descriptor());
    return new LinuxPlugin(kvs, index, watcher, namespaces, iptables);
  }

  /**
   * Starts following the kernel's link and address events, and the namespaces values refer to by
   * process, file or microservice label.
   */
  public void startWatching() throws LinuxCallException {
    watcher.start(kvs);
    namespaces.start(kvs);
  }

  /**
   * Calls {@code listener} with the links of the agent's namespace whenever kernel link or address
   * events made the interface watcher read them again (see {@link
   * InterfaceWatcherDescriptor#onLinks}).
   */
  public AutoCloseable onLinks(Consumer<List<Link>> listener) {
    return watcher.onLinks(listener);
  }

  /** Read-only metadata of the configured interfaces (kernel index, namespace, host name). */
  public LinuxIfIndex interfaces() {
    return interfaces;
  }

  /** How many iptables-restore processes the rule chains started (for tests and benchmarks). */
  public long iptablesRestores() {
    return iptables.restores();
  }

  /** Stops following kernel events; ends the long-running iptables-restore processes. */
  @Override
  public void close() {
    watcher.close();
    namespaces.close();
    if (iptables instanceof IptablesRestoreCalls own) {
      own.close();
    }
  }
}
