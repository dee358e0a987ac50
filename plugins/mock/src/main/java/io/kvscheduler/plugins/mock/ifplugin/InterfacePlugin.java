package io.kvscheduler.plugins.mock.ifplugin;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.plugins.mock.ifplugin.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.mock.ifplugin.mockcalls.MockIfaceHandler;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.util.SbIndex;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;

/**
 * The mock interface plugin: registers the interface descriptor on a scheduler and exposes, read
 * only, the metadata of configured interfaces (the plugin's API for other plugins) and the state of
 * its southbound.
 */
public final class InterfacePlugin {
  private final MockIfaceHandler southbound;
  private final NamedMapping<SbIndex> index;

  private InterfacePlugin(MockIfaceHandler southbound, NamedMapping<SbIndex> index) {
    this.southbound = southbound;
    this.index = index;
  }

  /** Registers the plugin's descriptor on {@code scheduler}, over a fresh mock southbound. */
  public static InterfacePlugin register(KVScheduler scheduler, SbPrinter printer) {
    return register(scheduler, printer, null);
  }

  /**
   * Registers the plugin's descriptor over a mock southbound kept in {@code journal} (null: in
   * memory only).
   */
  public static InterfacePlugin register(
      KVScheduler scheduler, SbPrinter printer, SouthboundJournal journal) {
    MockIfaceHandler sb = new MockIfaceHandler(printer, journal);
    KVDescriptor<Interface, SbIndex> interfaces = InterfaceDescriptor.create(sb);
    scheduler.registerDescriptors(interfaces);
    return new InterfacePlugin(sb, scheduler.metadataMap(interfaces));
  }

  /** Read-only metadata of configured interfaces, labelled by interface name. */
  public NamedMapping<SbIndex> interfaceIndex() {
    return index;
  }

  /** SB handle of the configured interface {@code name}. */
  public Optional<Integer> handleOf(String name) {
    return index.lookup(name).map(SbIndex::index);
  }

  /** Name of the configured interface with SB handle {@code handle}. */
  public Optional<String> nameOf(int handle) {
    Set<String> names = index.lookupByIndex(InterfaceDescriptor.SB_INDEX, Integer.toString(handle));
    return names.stream().findFirst();
  }

  /** What the southbound holds now, by handle. */
  public SortedMap<Integer, Interface> southboundState() {
    return southbound.dumpInterfaces();
  }

  /** The mock southbound, e.g. to inject failures. */
  public MockIfaceHandler southbound() {
    return southbound;
  }
}
