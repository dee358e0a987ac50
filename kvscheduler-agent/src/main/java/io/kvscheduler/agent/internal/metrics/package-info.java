/**
 * The agent's Prometheus metrics ({@code GET /metrics}): scheduler, southbound call times,
 * northbound sources and gRPC requests.
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.metrics;
