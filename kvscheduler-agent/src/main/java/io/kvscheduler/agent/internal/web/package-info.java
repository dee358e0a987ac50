/**
 * The agent's web page: its files and the live status events it follows ({@code /ui/...}).
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.web;
