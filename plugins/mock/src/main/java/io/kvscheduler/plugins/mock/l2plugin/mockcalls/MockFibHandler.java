package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.ArrayList;
import java.util.List;

/** The in-memory FIB southbound: a list of entries in insertion order. Prints every operation. */
public final class MockFibHandler implements MockFibApi {
  private final SbPrinter printer;
  private final List<FibEntry> fibs = new ArrayList<>();

  private final SouthboundJournal journal;

  public MockFibHandler(SbPrinter printer) {
    this(printer, null);
  }

  /**
   * A southbound that outlives the process: replays the FIB operations of {@code journal} (null:
   * none, nothing kept) and appends its own to it.
   */
  public MockFibHandler(SbPrinter printer, SouthboundJournal journal) {
    this.printer = printer;
    this.journal = journal;
    if (journal != null) {
      journal
          .replayed()
          .forEach(
              op -> {
                if (op.get(0).equals("fib-create")) {
                  fibs.add(entry(op));
                } else if (op.get(0).equals("fib-delete")) {
                  fibs.remove(entry(op));
                }
              });
    }
  }

  private static FibEntry entry(List<String> op) {
    return new FibEntry(op.get(1), op.get(2), FibEntry.Action.valueOf(op.get(3)), op.get(4));
  }

  private void journal(String op, FibEntry fib) {
    if (journal != null) {
      journal.append(
          op, fib.physAddress(), fib.bridgeDomain(), fib.action(), fib.outgoingInterface());
    }
  }

  @Override
  public synchronized void createL2Fib(FibEntry fib) {
    fibs.add(fib);
    journal("fib-create", fib);
    printer.print("Created L2 FIB entry: " + fib);
  }

  @Override
  public synchronized void deleteL2Fib(FibEntry fib) {
    if (!fibs.remove(fib)) {
      throw new MockSbException("no such L2 FIB entry: " + fib);
    }
    journal("fib-delete", fib);
    printer.print("Deleted L2 FIB entry: " + fib);
  }

  @Override
  public synchronized List<FibEntry> dumpL2Fibs() {
    return List.copyOf(fibs);
  }
}
