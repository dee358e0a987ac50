/** The kvscheduler agent program: {@link io.kvscheduler.agent.Agent} and its command line. */
package io.kvscheduler.agent;
