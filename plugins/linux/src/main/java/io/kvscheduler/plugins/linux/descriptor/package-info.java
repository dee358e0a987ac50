/**
 * The Linux descriptors: interfaces, their addresses, the interface watcher, routes and ARP
 * entries. Each class holds one descriptor and a static {@code create(...)} factory.
 *
 * <p>Which may run operations concurrently (a comment in each {@code create(...)}): interface
 * addresses, routes and ARP entries — each operation touches one kernel object of one link, and the
 * dependencies already order them after their link. Interfaces are not: the two ends of a veth pair
 * share one kernel link, created by whichever end comes first. The watcher makes no operations.
 */
package io.kvscheduler.plugins.linux.descriptor;
