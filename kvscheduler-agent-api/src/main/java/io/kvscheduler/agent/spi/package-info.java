/**
 * What plugins of the kvscheduler agent program against: {@link
 * io.kvscheduler.agent.spi.AgentPlugin} (discovered with ServiceLoader), the {@link
 * io.kvscheduler.agent.spi.ModelRegistry} with its vpp-agent compatible JSON codec, and the {@link
 * io.kvscheduler.agent.spi.Northbound} where configuration sources deliver desired values.
 */
package io.kvscheduler.agent.spi;
