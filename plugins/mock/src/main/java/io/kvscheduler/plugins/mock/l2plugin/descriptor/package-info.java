/** The L2 plugin's descriptors: bridge domains, their derived bindings, FIB entries. */
package io.kvscheduler.plugins.mock.l2plugin.descriptor;
