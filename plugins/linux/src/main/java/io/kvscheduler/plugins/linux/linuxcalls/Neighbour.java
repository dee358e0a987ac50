package io.kvscheduler.plugins.linux.linuxcalls;

/**
 * A permanent neighbour (ARP/NDP) entry.
 *
 * @param namespace the named namespace, "" for the agent's own
 * @param device the link's host name
 * @param ip the neighbour's IP address
 * @param mac its hardware address, lower case
 */
public record Neighbour(String namespace, String device, String ip, String mac) {}
