/**
 * Confirmed commits: a delivery applied at once and rolled back unless confirmed in time, and the
 * probes that decide it without a person.
 */
package io.kvscheduler.agent.internal.confirm;
