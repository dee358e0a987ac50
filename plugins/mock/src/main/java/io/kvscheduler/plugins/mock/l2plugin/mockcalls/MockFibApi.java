package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import java.util.List;

/** FIB calls into the mock southbound. */
public interface MockFibApi {

  /** Appends an entry to the FIB table. */
  void createL2Fib(FibEntry fib);

  /**
   * Removes the first entry equal to {@code fib}.
   *
   * @throws io.kvscheduler.plugins.mock.util.MockSbException when there is none
   */
  void deleteL2Fib(FibEntry fib);

  /** Every entry, in the order they were added. */
  List<FibEntry> dumpL2Fibs();
}
