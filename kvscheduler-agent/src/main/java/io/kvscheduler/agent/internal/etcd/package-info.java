/**
 * Talking to etcd: the clients built from the etcd settings, the explanation of their failures and
 * the publishing of value and agent statuses into etcd.
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.etcd;
