/**
 * Skeleton of a plugin whose descriptor keeps metadata: tunnels, each known to the southbound by an
 * integer handle. Shows a metadata record and a metadata map with secondary indexes exposed
 * read-only ({@code tunnelidx}), correlation in Retrieve, and derived values (one per tunnel
 * address) handled by a second descriptor. Start with {@link
 * io.kvscheduler.plugins.mock.skeleton.withmeta.TunnelPlugin}.
 */
package io.kvscheduler.plugins.mock.skeleton.withmeta;
