package io.kvscheduler.plugins.mock.l2plugin;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.plugins.mock.l2plugin.descriptor.BdInterfaceDescriptor;
import io.kvscheduler.plugins.mock.l2plugin.descriptor.BridgeDomainDescriptor;
import io.kvscheduler.plugins.mock.l2plugin.descriptor.FibDescriptor;
import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockBdHandler;
import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockFibHandler;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.util.SbIndex;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.List;
import java.util.SortedMap;

/**
 * The mock L2 plugin: bridge domains with derived interface bindings, and FIB entries. Needs the
 * interface plugin registered first (its descriptor is a retrieve dependency).
 */
public final class L2Plugin {
  private final MockBdHandler bdSouthbound;
  private final MockFibHandler fibSouthbound;
  private final NamedMapping<SbIndex> bdIndex;

  private L2Plugin(MockBdHandler bds, MockFibHandler fibs, NamedMapping<SbIndex> bdIndex) {
    this.bdSouthbound = bds;
    this.fibSouthbound = fibs;
    this.bdIndex = bdIndex;
  }

  /** Registers the plugin's three descriptors on {@code scheduler} over fresh mock southbounds. */
  public static L2Plugin register(KVScheduler scheduler, SbPrinter printer) {
    return register(scheduler, printer, null);
  }

  /**
   * Registers the plugin's three descriptors over mock southbounds kept in {@code journal} (null:
   * in memory only).
   */
  public static L2Plugin register(
      KVScheduler scheduler, SbPrinter printer, SouthboundJournal journal) {
    MockBdHandler bds = new MockBdHandler(printer, journal);
    MockFibHandler fibs = new MockFibHandler(printer, journal);
    KVDescriptor<BridgeDomain, SbIndex> bridgeDomains = BridgeDomainDescriptor.create(bds);
    scheduler.registerDescriptors(bridgeDomains);
    NamedMapping<SbIndex> bdIndex = scheduler.metadataMap(bridgeDomains);
    scheduler.registerDescriptors(
        BdInterfaceDescriptor.create(bds, bdIndex), FibDescriptor.create(fibs));
    return new L2Plugin(bds, fibs, bdIndex);
  }

  /** Read-only metadata of configured bridge domains, labelled by name. */
  public NamedMapping<SbIndex> bridgeDomainIndex() {
    return bdIndex;
  }

  /** Bridge domains the southbound holds now, by handle. */
  public SortedMap<Integer, BridgeDomain> bridgeDomainState() {
    return bdSouthbound.dumpBridgeDomains();
  }

  /** FIB entries the southbound holds now, in insertion order. */
  public List<FibEntry> fibState() {
    return fibSouthbound.dumpL2Fibs();
  }

  /** The bridge-domain southbound. */
  public MockBdHandler bridgeDomainSouthbound() {
    return bdSouthbound;
  }

  /** The FIB southbound. */
  public MockFibHandler fibSouthbound() {
    return fibSouthbound;
  }
}
