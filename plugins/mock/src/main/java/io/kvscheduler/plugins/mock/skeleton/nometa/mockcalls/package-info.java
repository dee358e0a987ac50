/**
 * The route southbound: the calls the descriptor makes ({@link
 * io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.RouteApi}) and an in-memory implementation
 * that prints every operation. In a real plugin this package (named after the southbound, e.g.
 * {@code netlinkcalls}) wraps the real system; the descriptor only sees the interface, so tests can
 * keep using the in-memory one.
 */
package io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls;
