package io.kvscheduler.plugins.mock.skeleton.withmeta.model;

import java.util.List;

/**
 * A point-to-point tunnel: the value of the skeleton with metadata.
 *
 * @param name logical name, also the last part of the key; the southbound does not know it
 * @param remoteAddress IPv4 address of the far end
 * @param vni virtual network identifier, 1 to 16777215
 * @param mtu MTU; 0 means the southbound's default ({@link #DEFAULT_MTU})
 * @param addresses IPv4 prefixes assigned to the tunnel; each becomes a derived value
 */
public record Tunnel(String name, String remoteAddress, int vni, int mtu, List<String> addresses) {

  /** The MTU the southbound applies when none is given (mtu 0). */
  public static final int DEFAULT_MTU = 1500;

  public Tunnel {
    name = name == null ? "" : name;
    remoteAddress = remoteAddress == null ? "" : remoteAddress;
    addresses = addresses == null ? List.of() : List.copyOf(addresses);
  }

  /** A tunnel with the default MTU. */
  public static Tunnel of(String name, String remoteAddress, int vni, String... addresses) {
    return new Tunnel(name, remoteAddress, vni, 0, List.of(addresses));
  }

  /** The MTU the southbound applies: {@link #DEFAULT_MTU} for 0. */
  public int effectiveMtu() {
    return mtu == 0 ? DEFAULT_MTU : mtu;
  }

  /** This tunnel with another VNI. */
  public Tunnel withVni(int v) {
    return new Tunnel(name, remoteAddress, v, mtu, addresses);
  }

  /** This tunnel with another MTU. */
  public Tunnel withMtu(int m) {
    return new Tunnel(name, remoteAddress, vni, m, addresses);
  }

  /** This tunnel with other addresses. */
  public Tunnel withAddresses(String... a) {
    return new Tunnel(name, remoteAddress, vni, mtu, List.of(a));
  }
}
