package io.kvscheduler.plugins.mock.l2plugin.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.plugins.mock.ifplugin.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockFibApi;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.util.MacAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Teaches the scheduler to configure mock L2 FIB entries.
 *
 * <ul>
 *   <li>Keys {@code config/mock/v1/fib/<bd>/mac/<mac>}; no metadata.
 *   <li>Validate: MAC set and well-formed, FORWARD with an outgoing interface, bridge domain set.
 *   <li>Create and Delete only: any change re-creates the entry.
 *   <li>Equivalence: same action and bridge domain, same outgoing interface for FORWARD, MAC equal
 *       ignoring case.
 *   <li>Dependencies: a FORWARD entry waits for its interface to be in the bridge domain (label
 *       {@value #BRIDGED_INTERFACE_DEP}, a dependency on a derived value); a DROP entry waits for
 *       the bridge domain ({@value #BRIDGE_DOMAIN_DEP}).
 *   <li>Retrieve: every entry of the SB; interfaces and bridge domains are retrieved first.
 * </ul>
 */
public final class FibDescriptor {
  /** Descriptor name. */
  public static final String NAME = "mock-l2-fib";

  /** Label of a FORWARD entry's dependency on its interface's binding. */
  public static final String BRIDGED_INTERFACE_DEP = "bridged-interface";

  /** Label of a DROP entry's dependency on its bridge domain. */
  public static final String BRIDGE_DOMAIN_DEP = "bridge-domain";

  private FibDescriptor() {}

  /** The descriptor working over {@code sb}. */
  public static KVDescriptor<FibEntry, Void> create(MockFibApi sb) {
    return KVDescriptor.builder(NAME, FibEntry.class)
        .valueTypeName(L2Model.FIB_PROTO_NAME)
        .nbKeyPrefix(L2Model.FIB_KEY_PREFIX)
        .keySelector(L2Model::isFibKey)
        .keyLabel(L2Model::label)
        .equivalence(FibDescriptor::equivalent)
        .validate(FibDescriptor::validate)
        .create(
            (key, fib) -> {
              sb.createL2Fib(fib);
              return null;
            })
        .delete((key, fib, meta) -> sb.deleteL2Fib(fib))
        .retrieve(
            correlate -> {
              List<KVWithMetadata<FibEntry, Void>> out = new ArrayList<>();
              for (FibEntry fib : sb.dumpL2Fibs()) {
                out.add(KVWithMetadata.fromNb(L2Model.key(fib), fib));
              }
              return out;
            })
        .dependencies(FibDescriptor::dependencies)
        .retrieveDependencies(InterfaceDescriptor.NAME, BridgeDomainDescriptor.NAME)
        .build();
  }

  static boolean equivalent(String key, FibEntry oldFib, FibEntry newFib) {
    if (oldFib.action() != newFib.action()
        || !oldFib.bridgeDomain().equals(newFib.bridgeDomain())) {
      return false;
    }
    if (oldFib.action() == FibEntry.Action.FORWARD
        && !oldFib.outgoingInterface().equals(newFib.outgoingInterface())) {
      return false;
    }
    return oldFib
        .physAddress()
        .toLowerCase(Locale.ROOT)
        .equals(newFib.physAddress().toLowerCase(Locale.ROOT));
  }

  static void validate(String key, FibEntry fib) {
    if (fib.physAddress().isEmpty()) {
      throw new InvalidValueException(
          "mock L2 FIB defined without hardware address", "phys_address");
    }
    if (!MacAddress.isValid(fib.physAddress())) {
      throw new InvalidValueException(
          "address " + Excerpt.quote(fib.physAddress()) + ": invalid MAC address", "phys_address");
    }
    if (fib.action() == FibEntry.Action.FORWARD && fib.outgoingInterface().isEmpty()) {
      throw new InvalidValueException(
          "mock L2 FORWARD FIB defined without outgoing interface", "action", "outgoing_interface");
    }
    if (fib.bridgeDomain().isEmpty()) {
      throw new InvalidValueException("mock L2 FIB defined without bridge domain", "bridge_domain");
    }
  }

  static List<Dependency> dependencies(String key, FibEntry fib) {
    if (fib.action() == FibEntry.Action.FORWARD) {
      return List.of(
          Dependency.onKey(
              BRIDGED_INTERFACE_DEP,
              L2Model.bdInterfaceKey(fib.bridgeDomain(), fib.outgoingInterface())));
    }
    return List.of(
        Dependency.onKey(BRIDGE_DOMAIN_DEP, L2Model.bridgeDomainKey(fib.bridgeDomain())));
  }
}
