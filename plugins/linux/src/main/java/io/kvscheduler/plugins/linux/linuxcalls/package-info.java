/**
 * The calls that drive Linux networking: {@link io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls}
 * (links, addresses, routes, neighbours, namespaces, link events) and its iproute2 implementation
 * {@link io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls}. Kernel errors surface as {@link
 * io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException} carrying the kernel's message
 * verbatim.
 */
package io.kvscheduler.plugins.linux.linuxcalls;
