package io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx;

/**
 * Run-time data of a configured tunnel that the value alone cannot tell: the handle the southbound
 * assigned when it created the tunnel (needed by every later call), plus the VNI for the secondary
 * index. Immutable; Update returns a new one when something changes.
 *
 * @param handle SB handle of the tunnel
 * @param vni the tunnel's VNI
 */
public record TunnelMetadata(int handle, int vni) {}
