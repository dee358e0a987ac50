/** The mock interface plugin: mock interfaces with an SB-handle metadata map. */
package io.kvscheduler.plugins.mock.ifplugin;
