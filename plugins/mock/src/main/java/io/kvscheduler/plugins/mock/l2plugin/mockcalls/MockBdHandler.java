package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The in-memory bridge-domain southbound: bridge domains by handle (from 0), each with its members
 * in the order they were added. Prints every operation; thread-safe.
 */
public final class MockBdHandler implements MockBdApi {
  private final SbPrinter printer;
  private final TreeMap<Integer, BridgeDomain> bds = new TreeMap<>();
  private int nextHandle;

  private final SouthboundJournal journal;

  public MockBdHandler(SbPrinter printer) {
    this(printer, null);
  }

  /**
   * A southbound that outlives the process: replays the bridge-domain operations of {@code journal}
   * (null: none, nothing kept) and appends its own to it.
   */
  public MockBdHandler(SbPrinter printer, SouthboundJournal journal) {
    this.printer = printer;
    this.journal = journal;
    if (journal != null) {
      journal.replayed().forEach(this::replay);
    }
  }

  private void replay(List<String> op) {
    switch (op.get(0)) {
      case "bd-create" -> {
        int handle = Integer.parseInt(op.get(1));
        bds.put(handle, BridgeDomain.of(op.get(2)));
        nextHandle = Math.max(nextHandle, handle + 1);
      }
      case "bd-delete" -> bds.remove(Integer.parseInt(op.get(1)));
      case "bd-add" ->
          bds.computeIfPresent(
              Integer.parseInt(op.get(1)),
              (h, bd) -> {
                List<BridgeDomain.Interface> members = new ArrayList<>(bd.interfaces());
                members.add(new BridgeDomain.Interface(op.get(2), Boolean.parseBoolean(op.get(3))));
                return new BridgeDomain(bd.name(), members);
              });
      case "bd-remove" ->
          bds.computeIfPresent(
              Integer.parseInt(op.get(1)),
              (h, bd) ->
                  new BridgeDomain(
                      bd.name(),
                      bd.interfaces().stream().filter(m -> !m.name().equals(op.get(2))).toList()));
      default -> {} // another southbound's operation
    }
  }

  private void journal(Object... fields) {
    if (journal != null) {
      journal.append(fields);
    }
  }

  @Override
  public synchronized int createBridgeDomain(String name) {
    int handle = nextHandle++;
    bds.put(handle, BridgeDomain.of(name));
    journal("bd-create", handle, name);
    printer.print("Created bridge domain: " + name + " (handle " + handle + ")");
    return handle;
  }

  @Override
  public synchronized void deleteBridgeDomain(int handle) {
    BridgeDomain bd = get(handle);
    bds.remove(handle);
    journal("bd-delete", handle);
    printer.print("Deleted bridge domain: " + bd.name());
  }

  @Override
  public synchronized void addInterfaceToBridgeDomain(int handle, String iface, boolean bvi) {
    BridgeDomain bd = get(handle);
    for (BridgeDomain.Interface member : bd.interfaces()) {
      if (member.name().equals(iface)) {
        throw new MockSbException(
            "interface '" + iface + "' is already in the bridge domain '" + bd.name() + "'");
      }
    }
    List<BridgeDomain.Interface> members = new ArrayList<>(bd.interfaces());
    members.add(new BridgeDomain.Interface(iface, bvi));
    bds.put(handle, new BridgeDomain(bd.name(), members));
    journal("bd-add", handle, iface, bvi);
    printer.print(
        "Added interface '"
            + iface
            + "' into the bridge domain '"
            + bd.name()
            + "'"
            + (bvi ? " as BVI" : ""));
  }

  @Override
  public synchronized void deleteInterfaceFromBridgeDomain(int handle, String iface) {
    BridgeDomain bd = get(handle);
    List<BridgeDomain.Interface> members = new ArrayList<>(bd.interfaces());
    boolean removed = false;
    for (int i = 0; i < members.size(); i++) {
      if (members.get(i).name().equals(iface)) {
        members.remove(i);
        removed = true;
        break;
      }
    }
    if (!removed) {
      throw new MockSbException(
          "interface '" + iface + "' is not in the bridge domain '" + bd.name() + "'");
    }
    bds.put(handle, new BridgeDomain(bd.name(), members));
    journal("bd-remove", handle, iface);
    printer.print("Removed interface '" + iface + "' from the bridge domain '" + bd.name() + "'");
  }

  @Override
  public synchronized SortedMap<Integer, BridgeDomain> dumpBridgeDomains() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(bds));
  }

  private BridgeDomain get(int handle) {
    BridgeDomain bd = bds.get(handle);
    if (bd == null) {
      throw new MockSbException("cannot find bridge domain with index: " + handle);
    }
    return bd;
  }
}
