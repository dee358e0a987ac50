/**
 * The kvscheduler agent program: {@link io.kvscheduler.agent.Agent}, its settings ({@link
 * io.kvscheduler.agent.AgentConfig}, built by its builder or read from flags, a settings file and
 * the environment) and its command line ({@link io.kvscheduler.agent.AgentMain}).
 *
 * <p>This package is what a program that embeds or tests the agent uses. The agent's parts live in
 * the sub-packages of {@code io.kvscheduler.agent.internal}, one per job: {@code config} (reading
 * the settings), {@code northbound} (the configuration sources and the orchestrator that feeds the
 * scheduler), {@code rest} (the HTTP host and its route groups), {@code web} (the web page), {@code
 * etcd} (etcd clients and status publishing), {@code format} (the YAML/JSON configuration format),
 * {@code metrics} and {@code logging}. Their classes are public so that these packages, {@code
 * kvsctl} and the benchmarks can use each other; they are not an API and may change with any
 * release.
 */
package io.kvscheduler.agent;
