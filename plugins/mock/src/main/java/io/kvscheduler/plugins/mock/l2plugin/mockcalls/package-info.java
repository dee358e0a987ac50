/**
 * The L2 plugin's southbound calls (bridge domains, FIB table) and their in-memory implementations,
 * which print every operation.
 */
package io.kvscheduler.plugins.mock.l2plugin.mockcalls;
