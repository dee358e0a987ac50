/**
 * Reading the agent's settings: the flags of {@code kvs-agent run}, the YAML settings file, the
 * environment and vpp-agent's etcd configuration files, laid over each other into an {@link
 * io.kvscheduler.agent.AgentConfig}.
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.config;
