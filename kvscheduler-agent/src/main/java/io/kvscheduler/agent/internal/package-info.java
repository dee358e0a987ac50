/** Internals of the agent: orchestrator, plugin ordering, NB sources. */
package io.kvscheduler.agent.internal;
