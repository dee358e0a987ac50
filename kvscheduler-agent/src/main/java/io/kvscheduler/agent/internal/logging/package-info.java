/**
 * Logging support: the recent log kept for bug reports and the escaping of control characters in
 * log lines.
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.logging;
