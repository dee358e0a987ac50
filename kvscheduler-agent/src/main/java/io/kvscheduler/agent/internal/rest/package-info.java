/**
 * The REST API: the HTTP host ({@link io.kvscheduler.agent.internal.rest.RestServer}: Jetty set-up,
 * TLS, limits, bearer token, host/origin/content-type guards, JSON errors, server-sent events) and
 * the route groups that register on it ({@code /scheduler}, {@code /info}, {@code
 * /northbound/problems}, {@code /readiness} and {@code /liveness}, {@code /log}; {@code
 * /configuration} is the REST northbound source, {@code /ui} the web page).
 *
 * <p>Internal to the agent (see {@link io.kvscheduler.agent}): public for the agent's other
 * packages, not an API.
 */
package io.kvscheduler.agent.internal.rest;
