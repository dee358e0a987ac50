package io.kvscheduler.plugins.mock.skeleton.withmeta.model;

/**
 * One address of a tunnel, derived from the {@link Tunnel} value: created after its tunnel, deleted
 * before it, added and removed on its own when the tunnel's address list changes.
 *
 * @param tunnel name of the tunnel
 * @param address IPv4 prefix
 */
public record TunnelAddress(String tunnel, String address) {}
