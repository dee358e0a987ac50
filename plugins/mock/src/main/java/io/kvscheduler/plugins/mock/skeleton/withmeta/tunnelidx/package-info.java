/**
 * The tunnel metadata and its map: the metadata record the descriptor returns from Create and
 * Update, the secondary indexes declared on the descriptor, and {@link
 * io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelIndex}, the typed read-only view
 * other plugins get. vpp-agent keeps such custom maps in a {@code <model>idx} package; so do we.
 */
package io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx;
