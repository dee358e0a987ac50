package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.ArrayList;
import java.util.List;

/** The in-memory FIB southbound: a list of entries in insertion order. Prints every operation. */
public final class MockFibHandler implements MockFibApi {
  private final SbPrinter printer;
  private final List<FibEntry> fibs = new ArrayList<>();

  public MockFibHandler(SbPrinter printer) {
    this.printer = printer;
  }

  @Override
  public synchronized void createL2Fib(FibEntry fib) {
    fibs.add(fib);
    printer.print("Created L2 FIB entry: " + fib);
  }

  @Override
  public synchronized void deleteL2Fib(FibEntry fib) {
    if (!fibs.remove(fib)) {
      throw new MockSbException("no such L2 FIB entry: " + fib);
    }
    printer.print("Deleted L2 FIB entry: " + fib);
  }

  @Override
  public synchronized List<FibEntry> dumpL2Fibs() {
    return List.copyOf(fibs);
  }
}
