/**
 * The configuration format read from files, REST bodies and {@code kvsctl}: YAML or JSON documents
 * parsed within limits ({@link io.kvscheduler.agent.internal.format.ConfigDocument}) and decoded
 * into model values ({@link io.kvscheduler.agent.internal.format.ConfigFormat}).
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.format;
