/**
 * Address allocation (netalloc): IP addresses allocated to interfaces in named networks, held by
 * the scheduler as values without a southbound, and the references {@code alloc:<network>[/<iface>]
 * [/GW]} interface addresses and route gateways use instead of an address.
 */
package io.kvscheduler.plugins.linux.netalloc;
