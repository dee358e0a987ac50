package io.kvscheduler.agent.internal.rest;

import java.net.InetSocketAddress;

/** The address the REST API listens on: {@code host:port}, {@code :port} or {@code [v6]:port}. */
public final class RestAddress {
  private RestAddress() {}

  /**
   * Checks that {@code address} is {@code host:port}, {@code :port} or {@code [v6]:port}, without
   * resolving the host.
   *
   * @throws IllegalArgumentException naming the address when it is none of these
   */
  public static void check(String address) {
    parse(address, false);
  }

  /** Parses {@code host:port}, {@code :port} or {@code [v6]:port}, resolving the host. */
  static InetSocketAddress parse(String address) {
    return parse(address, true);
  }

  private static InetSocketAddress parse(String address, boolean resolve) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("REST address '" + address + "' is not host:port");
    }
    String host = address.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("REST address '" + address + "': bad port", e);
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("REST address '" + address + "': bad port");
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (host.isEmpty()) {
      host = "127.0.0.1"; // as gRPC's :PORT; every interface is 0.0.0.0:PORT
    }
    return resolve
        ? new InetSocketAddress(host, port)
        : InetSocketAddress.createUnresolved(host, port);
  }
}
