package io.kvscheduler.plugins.linux.ifaceidx;

/**
 * What the plugin keeps about a configured interface.
 *
 * @param ifIndex the kernel's interface index (unique within its namespace)
 * @param namespace the named namespace it is in, "" for the agent's own
 * @param hostIfName its name in the kernel
 */
public record LinuxIfMetadata(int ifIndex, String namespace, String hostIfName) {}
