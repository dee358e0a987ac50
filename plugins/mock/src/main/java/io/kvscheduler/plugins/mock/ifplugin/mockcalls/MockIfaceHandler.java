package io.kvscheduler.plugins.mock.ifplugin.mockcalls;

import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The in-memory interface southbound: a table of interfaces by handle, handles allocated from 0.
 * Prints every operation. Thread-safe (methods synchronized) so tests may read it while the
 * scheduler works.
 *
 * <p>Failure injection: {@link #failNextTapCreation(String)} makes the next TAP creation fail once,
 * as the reference example's {@code SimulateFailedTapCreation} does.
 */
public final class MockIfaceHandler implements MockIfaceApi {
  private final SbPrinter printer;
  private final TreeMap<Integer, Interface> interfaces = new TreeMap<>();
  private int nextHandle;
  private String tapCreationFailure;

  private final SouthboundJournal journal;

  public MockIfaceHandler(SbPrinter printer) {
    this(printer, null);
  }

  /**
   * A southbound that outlives the process: replays the interface operations of {@code journal}
   * (null: none, nothing kept) and appends its own to it.
   */
  public MockIfaceHandler(SbPrinter printer, SouthboundJournal journal) {
    this.printer = printer;
    this.journal = journal;
    if (journal != null) {
      journal.replayed().forEach(this::replay);
    }
  }

  private void replay(List<String> op) {
    switch (op.get(0)) {
      case "iface-create" -> {
        int handle = Integer.parseInt(op.get(1));
        interfaces.put(handle, Interface.of(op.get(2), Interface.Type.valueOf(op.get(3)), false));
        nextHandle = Math.max(nextHandle, handle + 1);
      }
      case "iface-delete" -> interfaces.remove(Integer.parseInt(op.get(1)));
      case "iface-up", "iface-down" ->
          interfaces.computeIfPresent(
              Integer.parseInt(op.get(1)), (h, i) -> i.withEnabled(op.get(0).equals("iface-up")));
      case "iface-mac" ->
          interfaces.computeIfPresent(
              Integer.parseInt(op.get(1)), (h, i) -> i.withPhysAddress(op.get(2)));
      default -> {} // another southbound's operation
    }
  }

  private void journal(Object... fields) {
    if (journal != null) {
      journal.append(fields);
    }
  }

  /** The next TAP creation fails with {@code message} (later ones succeed again). */
  public synchronized void failNextTapCreation(String message) {
    tapCreationFailure = message;
  }

  @Override
  public synchronized int createLoopbackInterface(String name) {
    return create(name, Interface.Type.LOOPBACK, "Loopback");
  }

  @Override
  public synchronized void deleteLoopbackInterface(int handle) {
    delete(handle, "Loopback");
  }

  @Override
  public synchronized int createTapInterface(String name) {
    if (tapCreationFailure != null) {
      String message = tapCreationFailure;
      tapCreationFailure = null;
      printer.print("Failed to create TAP interface " + name + ": " + message);
      throw new MockSbException(message);
    }
    return create(name, Interface.Type.TAP, "TAP");
  }

  @Override
  public synchronized void deleteTapInterface(int handle) {
    delete(handle, "TAP");
  }

  private int create(String name, Interface.Type type, String kind) {
    int handle = nextHandle++;
    interfaces.put(handle, Interface.of(name, type, false));
    journal("iface-create", handle, name, type);
    printer.print("Created " + kind + " interface: " + name + " (handle " + handle + ")");
    return handle;
  }

  private void delete(int handle, String kind) {
    Interface iface = get(handle);
    interfaces.remove(handle);
    journal("iface-delete", handle);
    printer.print("Deleted " + kind + " interface: " + iface.name());
  }

  @Override
  public synchronized void interfaceAdminUp(int handle) {
    Interface iface = get(handle);
    interfaces.put(handle, iface.withEnabled(true));
    journal("iface-up", handle);
    printer.print("Set interface '" + iface.name() + "' UP");
  }

  @Override
  public synchronized void interfaceAdminDown(int handle) {
    Interface iface = get(handle);
    interfaces.put(handle, iface.withEnabled(false));
    journal("iface-down", handle);
    printer.print("Set interface '" + iface.name() + "' DOWN");
  }

  @Override
  public synchronized void setInterfaceMac(int handle, String mac) {
    Interface iface = get(handle);
    interfaces.put(handle, iface.withPhysAddress(mac));
    journal("iface-mac", handle, mac);
    printer.print("Set interface '" + iface.name() + "' MAC address: " + mac);
  }

  @Override
  public synchronized SortedMap<Integer, Interface> dumpInterfaces() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(interfaces));
  }

  private Interface get(int handle) {
    Interface iface = interfaces.get(handle);
    if (iface == null) {
      throw new MockSbException("cannot find interface with index: " + handle);
    }
    return iface;
  }
}
