package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The in-memory FIB southbound: the entries in insertion order. Prints every operation. Creating or
 * deleting an entry costs O(1) whatever the number of entries (a set, not a list to search).
 */
public final class MockFibHandler implements MockFibApi {
  private final SbPrinter printer;

  /** Each entry with the number of times it was created and not deleted (normally one). */
  private final LinkedHashMap<FibEntry, Integer> fibs = new LinkedHashMap<>();

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
                  fibs.merge(entry(op), 1, Integer::sum);
                } else if (op.get(0).equals("fib-delete")) {
                  remove(entry(op));
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
    fibs.merge(fib, 1, Integer::sum);
    journal("fib-create", fib);
    printer.print("Created L2 FIB entry: " + fib);
  }

  @Override
  public synchronized void deleteL2Fib(FibEntry fib) {
    if (!remove(fib)) {
      throw new MockSbException("no such L2 FIB entry: " + fib);
    }
    journal("fib-delete", fib);
    printer.print("Deleted L2 FIB entry: " + fib);
  }

  private boolean remove(FibEntry fib) {
    Integer count = fibs.get(fib);
    if (count == null) {
      return false;
    }
    if (count > 1) {
      fibs.put(fib, count - 1);
    } else {
      fibs.remove(fib);
    }
    return true;
  }

  @Override
  public synchronized List<FibEntry> dumpL2Fibs() {
    List<FibEntry> out = new ArrayList<>(fibs.size());
    fibs.forEach((fib, count) -> out.addAll(Collections.nCopies(count, fib)));
    return List.copyOf(out);
  }
}
