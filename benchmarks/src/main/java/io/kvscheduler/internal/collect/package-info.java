/**
 * JMH benchmarks of the engine's collections ({@code SlotIndex}, {@code SlotVector}), in the
 * collections' own package. Each benchmark sets a device against the plain collection it replaces
 * ({@code @Param impl}); figures and the command are in {@code BENCHMARKS.md} ("Tuning devices").
 */
package io.kvscheduler.internal.collect;
