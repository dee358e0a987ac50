/**
 * JMH benchmarks of the engine's tuning devices, in the engine's own package because the devices
 * are package-private. Each benchmark sets a device against the plain collection it replaces
 * ({@code @Param impl}); a device that does not gain 10% here or in W1–W3 goes. Figures and the
 * command are in {@code BENCHMARKS.md} ("Tuning devices").
 */
package io.kvscheduler.internal.engine;
