package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressKey;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.netalloc.AllocRef;
import io.kvscheduler.plugins.linux.netalloc.IpAllocations;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code linux-interface-address}: one derived value per address of an interface, keyed {@code
 * linux/interface/<name>/address/<source>/<address>}, added after the link exists and removed
 * before it goes. An address of source {@code existing} (an EXISTING interface that only waits for
 * its addresses) is never added: it waits for the watcher to report it on the host link. The values
 * are read back through the interface's Retrieve, so this descriptor has none.
 *
 * <p>An address written as a reference ({@code alloc:<network>} or {@code
 * alloc:<network>/<interface>}, source {@code alloc_ref}) depends on its allocation's key: it waits
 * PENDING until the allocation exists, and its Create and Delete read the allocated address then. A
 * changed allocation is re-created by the scheduler, which deletes the address (the old one) first
 * and creates it again (the new one) after.
 */
public final class InterfaceAddressDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-interface-address";

  private final LinuxCalls calls;
  private final LinuxIfIndex interfaces;
  private final IpAllocations allocations;

  private InterfaceAddressDescriptor(
      LinuxCalls calls, LinuxIfIndex interfaces, IpAllocations allocations) {
    this.calls = calls;
    this.interfaces = interfaces;
    this.allocations = allocations;
  }

  /** The descriptor over {@code calls}, finding links through {@code interfaces}. */
  public static KVDescriptor<Interface, Void> create(LinuxCalls calls, LinuxIfIndex interfaces) {
    return create(calls, interfaces, new IpAllocations(null));
  }

  /**
   * The descriptor over {@code calls}, finding links through {@code interfaces} and the addresses
   * {@code alloc:} references name through {@code allocations}.
   */
  public static KVDescriptor<Interface, Void> create(
      LinuxCalls calls, LinuxIfIndex interfaces, IpAllocations allocations) {
    InterfaceAddressDescriptor d = new InterfaceAddressDescriptor(calls, interfaces, allocations);
    return KVDescriptor.builder(NAME, Interface.class)
        .maxConcurrency(LinuxPlugin.MAX_CONCURRENCY)
        .keySelector(k -> LinuxKeys.parseAddressKey(k).isPresent())
        .equivalence((k, a, b) -> true) // the key says it all
        .validate(InterfaceAddressDescriptor::validate)
        .dependencies(InterfaceAddressDescriptor::dependencies)
        .create(d::create)
        .delete(d::delete)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: yes, each address is one kernel address of one link
        .build();
  }

  private static AddressKey parse(String key) {
    return LinuxKeys.parseAddressKey(key).orElseThrow();
  }

  static void validate(String key, Interface value) {
    AddressKey k = parse(key);
    Invalid bad = new Invalid();
    if (k.source() == AddressSource.ALLOC_REF) {
      try {
        if (AllocRef.parse(k.address(), k.iface()).orElseThrow().gw()) {
          bad.add(
              Invalid.quote(k.address())
                  + " names a gateway: an interface address references the interface's own"
                  + " address (alloc:<network> or alloc:<network>/"
                  + k.iface()
                  + ")",
              "ip_addresses");
        }
      } catch (IllegalArgumentException e) {
        bad.add(
            Invalid.quote(k.address()) + " is not an address reference: " + e.getMessage(),
            "ip_addresses");
      }
    } else if (IpNet.parse(k.address()).isEmpty()) {
      bad.add(
          Invalid.quote(k.address())
              + " is not an IP address with a prefix length (e.g."
              + " 10.0.0.1/24)",
          "ip_addresses");
    }
    bad.throwIfAny();
  }

  static List<Dependency> dependencies(String key, Interface value) {
    AddressKey k = parse(key);
    Optional<Dependency> allocated = allocation(k);
    if (allocated.isPresent()) {
      List<Dependency> out = new ArrayList<>(dependenciesOf(k, value));
      out.add(allocated.get());
      return out;
    }
    return dependenciesOf(k, value);
  }

  /** The dependency of an address reference on its allocation. */
  private static Optional<Dependency> allocation(AddressKey k) {
    if (k.source() != AddressSource.ALLOC_REF) {
      return Optional.empty();
    }
    try {
      return AllocRef.parse(k.address(), k.iface())
          .map(r -> Dependency.onKey("allocated " + k.address(), r.allocationKey()));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // invalid: Validate says why
    }
  }

  private static List<Dependency> dependenciesOf(AddressKey k, Interface value) {
    if (!value.getVrfMasterInterface().isEmpty() && k.source() != AddressSource.EXISTING) {
      // enslaving a link to a VRF moves its routes: the address comes after
      return List.of(
          Dependency.onKey(
              "interface-assigned-to-vrf",
              LinuxKeys.vrfKey(k.iface(), value.getVrfMasterInterface())));
    }
    if (k.source() == AddressSource.EXISTING) {
      return List.of(
          Dependency.onKey(
              "address-assigned-to-interface",
              LinuxKeys.hostAddressKey(value.getHostIfName(), k.address())));
    }
    return List.of();
  }

  private LinuxIfMetadata link(AddressKey k) throws LinuxCallException {
    return interfaces
        .lookup(k.iface())
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "address " + Invalid.quote(k.address()),
                    1,
                    "interface " + Invalid.quote(k.iface()) + " is not configured"));
  }

  /** The address of {@code k}: as written, or, for a reference, as allocated now. */
  private String address(AddressKey k) throws LinuxCallException {
    if (k.source() != AddressSource.ALLOC_REF) {
      return IpNet.parse(k.address()).orElseThrow().toString();
    }
    AllocRef ref = AllocRef.parse(k.address(), k.iface()).orElseThrow();
    return allocations
        .resolve(ref)
        .map(IpNet::toString)
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "address " + Invalid.quote(k.address()),
                    1,
                    "allocation " + Invalid.quote(ref.allocationKey()) + " is not configured"));
  }

  Void create(String key, Interface value) throws LinuxCallException {
    AddressKey k = parse(key);
    if (k.source() == AddressSource.EXISTING) {
      return null; // present already: the dependency says so
    }
    LinuxIfMetadata m = link(k);
    try {
      calls.addAddress(m.namespace(), m.hostIfName(), address(k));
    } catch (LinuxCallException e) {
      if (!e.exists()) {
        throw e;
      }
    }
    return null;
  }

  void delete(String key, Interface value, Void unused) throws LinuxCallException {
    AddressKey k = parse(key);
    if (k.source() == AddressSource.EXISTING) {
      return;
    }
    LinuxIfMetadata m = link(k);
    try {
      calls.deleteAddress(m.namespace(), m.hostIfName(), address(k));
    } catch (LinuxCallException e) {
      if (!e.notFound()
          && !(e.getMessage() != null && e.getMessage().contains("Address not found"))) {
        throw e;
      }
    }
  }
}
