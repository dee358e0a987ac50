/**
 * The sources of northbound configuration (a directory of files, etcd, {@code PUT /configuration}
 * over REST, gRPC) and the {@link io.kvscheduler.agent.internal.northbound.Orchestrator} that
 * merges what they deliver and commits it to the scheduler.
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.northbound;
