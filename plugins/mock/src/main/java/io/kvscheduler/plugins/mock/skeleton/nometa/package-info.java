/**
 * Skeleton of a plugin whose descriptor keeps no metadata: static routes through a mock interface.
 * Start with {@link io.kvscheduler.plugins.mock.skeleton.nometa.RoutePlugin}; the descriptor is
 * {@link io.kvscheduler.plugins.mock.skeleton.nometa.descriptor.RouteDescriptor}.
 */
package io.kvscheduler.plugins.mock.skeleton.nometa;
