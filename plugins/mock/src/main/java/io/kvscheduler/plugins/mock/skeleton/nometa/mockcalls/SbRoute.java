package io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls;

/**
 * A route as the southbound stores it: the interface is addressed by its SB handle (not its name)
 * and the metric is always explicit.
 *
 * @param destination destination prefix
 * @param interfaceHandle SB handle of the outgoing interface
 * @param nextHop next hop address, {@code ""} for none
 * @param metric the applied metric
 */
public record SbRoute(String destination, int interfaceHandle, String nextHop, int metric) {}
