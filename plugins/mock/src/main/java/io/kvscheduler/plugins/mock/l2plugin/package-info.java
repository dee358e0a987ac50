/** The mock L2 plugin: bridge domains, derived BD-interface bindings, FIB entries. */
package io.kvscheduler.plugins.mock.l2plugin;
