/**
 * The tunnel model: the tunnel record (an NB value), the tunnel-address record (a value derived
 * from a tunnel) and their keys.
 */
package io.kvscheduler.plugins.mock.skeleton.withmeta.model;
