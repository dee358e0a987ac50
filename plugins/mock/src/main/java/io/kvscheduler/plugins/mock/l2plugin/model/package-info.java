/** The L2 plugin's models: bridge domains, their members, FIB entries, and the keys. */
package io.kvscheduler.plugins.mock.l2plugin.model;
