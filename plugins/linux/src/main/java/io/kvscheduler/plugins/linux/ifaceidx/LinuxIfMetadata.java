package io.kvscheduler.plugins.linux.ifaceidx;

/**
 * What the plugin keeps about a configured interface.
 *
 * @param ifIndex the kernel's interface index (unique within its namespace)
 * @param namespace the namespace it is in, as the Linux calls take it: a name, the file of a
 *     process's or microservice's namespace ({@code /proc/<pid>/ns/net}, a namespace file), "" for
 *     the agent's own
 * @param hostIfName its name in the kernel
 */
public record LinuxIfMetadata(int ifIndex, String namespace, String hostIfName) {}
