package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.VrfKey;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.util.List;

/**
 * {@code linux-interface-vrf}: the derived value {@code linux/interface/<name>/vrf/<vrf>} of an
 * interface with {@code vrf_master_interface}, as vpp-agent has it: waits for the VRF_DEVICE
 * interface {@code <vrf>} ({@code vrf-device-exists}), then makes the interface's link a member
 * ({@code ip link set dev LINK master VRF}); deleting it sets {@code nomaster}. The interface's
 * addresses wait for it, as the kernel moves a link's routes into the VRF's table when it joins.
 */
public final class InterfaceVrfDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-interface-vrf";

  private final LinuxCalls calls;
  private final LinuxIfIndex interfaces;

  private InterfaceVrfDescriptor(LinuxCalls calls, LinuxIfIndex interfaces) {
    this.calls = calls;
    this.interfaces = interfaces;
  }

  /** The descriptor over {@code calls}, finding links through {@code interfaces}. */
  public static KVDescriptor<Interface, Void> create(LinuxCalls calls, LinuxIfIndex interfaces) {
    InterfaceVrfDescriptor d = new InterfaceVrfDescriptor(calls, interfaces);
    return KVDescriptor.builder(NAME, Interface.class)
        .keySelector(k -> LinuxKeys.parseVrfKey(k).isPresent())
        .equivalence((k, a, b) -> true) // the key says it all
        .dependencies(
            (k, v) ->
                List.of(
                    Dependency.onKey(
                        "vrf-device-exists",
                        LinuxKeys.interfaceKey(LinuxKeys.parseVrfKey(k).orElseThrow().vrf()))))
        .create(d::create)
        .delete(d::delete)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: no (not opted in)
        .build();
  }

  private LinuxIfMetadata lookup(String name) throws LinuxCallException {
    return interfaces
        .lookup(name)
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "VRF member " + Invalid.quote(name),
                    1,
                    "interface " + Invalid.quote(name) + " is not configured"));
  }

  Void create(String key, Interface value) throws LinuxCallException {
    VrfKey k = LinuxKeys.parseVrfKey(key).orElseThrow();
    LinuxIfMetadata member = lookup(k.iface());
    LinuxIfMetadata vrf = lookup(k.vrf());
    if (!member.namespace().equals(vrf.namespace())) {
      throw new LinuxCallException(
          "VRF member " + Invalid.quote(k.iface()),
          1,
          "the interface is in namespace '"
              + member.namespace()
              + "', its VRF device in '"
              + vrf.namespace()
              + "': they must share one");
    }
    calls.linkRequests(
        member.namespace(),
        List.of(List.of("link", "set", "dev", member.hostIfName(), "master", vrf.hostIfName())));
    return null;
  }

  void delete(String key, Interface value, Void unused) throws LinuxCallException {
    VrfKey k = LinuxKeys.parseVrfKey(key).orElseThrow();
    LinuxIfMetadata member = interfaces.lookup(k.iface()).orElse(null);
    if (member == null) {
      return;
    }
    try {
      calls.linkRequests(
          member.namespace(),
          List.of(List.of("link", "set", "dev", member.hostIfName(), "nomaster")));
    } catch (LinuxCallException e) {
      if (!e.notFound()) {
        throw e;
      }
    }
  }
}
