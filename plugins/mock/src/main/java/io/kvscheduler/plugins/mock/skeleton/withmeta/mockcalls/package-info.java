/**
 * The tunnel southbound: the calls both tunnel descriptors make ({@link
 * io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.TunnelApi}) and an in-memory
 * implementation that prints every operation. Replace the implementation with your real southbound
 * behind the same interface.
 */
package io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls;
