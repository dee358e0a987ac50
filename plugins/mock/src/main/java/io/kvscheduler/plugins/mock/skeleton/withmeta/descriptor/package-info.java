/**
 * The tunnel descriptors: one for tunnels (NB values with metadata) and one for the addresses
 * derived from them.
 */
package io.kvscheduler.plugins.mock.skeleton.withmeta.descriptor;
