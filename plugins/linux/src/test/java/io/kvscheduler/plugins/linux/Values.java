package io.kvscheduler.plugins.linux;

import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.interfaces.VethLink;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;

/** Builders of the Linux values the tests use. */
final class Values {
  private Values() {}

  static NetNamespace ns(String name) {
    return NetNamespace.newBuilder()
        .setType(NetNamespace.ReferenceType.NSID)
        .setReference(name)
        .build();
  }

  static Interface.Builder veth(String name, String peer, String namespace, String... ips) {
    Interface.Builder b =
        Interface.newBuilder()
            .setName(name)
            .setType(Interface.Type.VETH)
            .setEnabled(true)
            .setVeth(VethLink.newBuilder().setPeerIfName(peer));
    if (!namespace.isEmpty()) {
      b.setNamespace(ns(namespace));
    }
    for (String ip : ips) {
      b.addIpAddresses(ip);
    }
    return b;
  }

  static String key(Interface i) {
    return LinuxKeys.interfaceKey(i.getName());
  }

  static Route route(String iface, String dst, String gw) {
    return Route.newBuilder().setOutgoingInterface(iface).setDstNetwork(dst).setGwAddr(gw).build();
  }

  static String key(Route r) {
    return LinuxKeys.routeKey(r);
  }

  static ARPEntry arp(String iface, String ip, String mac) {
    return ARPEntry.newBuilder().setInterface(iface).setIpAddress(ip).setHwAddress(mac).build();
  }

  static String key(ARPEntry a) {
    return LinuxKeys.arpKey(a);
  }
}
