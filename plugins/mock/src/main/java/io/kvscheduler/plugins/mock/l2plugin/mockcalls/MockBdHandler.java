package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The in-memory bridge-domain southbound: bridge domains by handle (from 0), each with its members
 * in the order they were added. Prints every operation; thread-safe.
 *
 * <p>Each call costs O(log d) for d bridge domains, whatever the number of members: the members of
 * a bridge domain are kept in a map by name (in the order they were added), so adding or removing
 * one neither scans nor copies the others. Only a dump builds the members' lists.
 */
public final class MockBdHandler implements MockBdApi {
  private final SbPrinter printer;
  private final TreeMap<Integer, Domain> bds = new TreeMap<>();
  private int nextHandle;

  private final SouthboundJournal journal;

  /** A bridge domain as the southbound keeps it: its members by name, BVI flag as the value. */
  private static final class Domain {
    final String name;
    final LinkedHashMap<String, Boolean> members = new LinkedHashMap<>();

    Domain(String name) {
      this.name = name;
    }

    BridgeDomain snapshot() {
      List<BridgeDomain.Interface> list = new ArrayList<>(members.size());
      members.forEach((iface, bvi) -> list.add(new BridgeDomain.Interface(iface, bvi)));
      return new BridgeDomain(name, list);
    }
  }

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
        bds.put(handle, new Domain(op.get(2)));
        nextHandle = Math.max(nextHandle, handle + 1);
      }
      case "bd-delete" -> bds.remove(Integer.parseInt(op.get(1)));
      case "bd-add" -> {
        Domain bd = bds.get(Integer.parseInt(op.get(1)));
        if (bd != null) {
          bd.members.putIfAbsent(op.get(2), Boolean.parseBoolean(op.get(3)));
        }
      }
      case "bd-remove" -> {
        Domain bd = bds.get(Integer.parseInt(op.get(1)));
        if (bd != null) {
          bd.members.remove(op.get(2));
        }
      }
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
    bds.put(handle, new Domain(name));
    journal("bd-create", handle, name);
    printer.print("Created bridge domain: " + name + " (handle " + handle + ")");
    return handle;
  }

  @Override
  public synchronized void deleteBridgeDomain(int handle) {
    Domain bd = get(handle);
    bds.remove(handle);
    journal("bd-delete", handle);
    printer.print("Deleted bridge domain: " + bd.name);
  }

  @Override
  public synchronized void addInterfaceToBridgeDomain(int handle, String iface, boolean bvi) {
    Domain bd = get(handle);
    if (bd.members.containsKey(iface)) {
      throw new MockSbException(
          "interface '" + iface + "' is already in the bridge domain '" + bd.name + "'");
    }
    bd.members.put(iface, bvi);
    journal("bd-add", handle, iface, bvi);
    printer.print(
        "Added interface '"
            + iface
            + "' into the bridge domain '"
            + bd.name
            + "'"
            + (bvi ? " as BVI" : ""));
  }

  @Override
  public synchronized void deleteInterfaceFromBridgeDomain(int handle, String iface) {
    Domain bd = get(handle);
    if (bd.members.remove(iface) == null) {
      throw new MockSbException(
          "interface '" + iface + "' is not in the bridge domain '" + bd.name + "'");
    }
    journal("bd-remove", handle, iface);
    printer.print("Removed interface '" + iface + "' from the bridge domain '" + bd.name + "'");
  }

  /** Every bridge domain with its members: O(d + members), a dump lists them all. */
  @Override
  public synchronized SortedMap<Integer, BridgeDomain> dumpBridgeDomains() {
    TreeMap<Integer, BridgeDomain> out = new TreeMap<>();
    bds.forEach((handle, bd) -> out.put(handle, bd.snapshot()));
    return Collections.unmodifiableSortedMap(out);
  }

  private Domain get(int handle) {
    Domain bd = bds.get(handle);
    if (bd == null) {
      throw new MockSbException("cannot find bridge domain with index: " + handle);
    }
    return bd;
  }
}
