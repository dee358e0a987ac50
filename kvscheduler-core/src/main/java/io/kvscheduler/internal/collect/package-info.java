/**
 * Collections the engine builds on that know nothing of the engine: the published snapshot's key
 * index and views by slot, a sorted map over a sorted list, and the range size of bulk loops. May
 * use only the JDK and pcollections; {@code PackageDirectionsTest} checks it.
 */
package io.kvscheduler.internal.collect;
