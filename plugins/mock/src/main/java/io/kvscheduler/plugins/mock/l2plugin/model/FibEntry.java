package io.kvscheduler.plugins.mock.l2plugin.model;

import io.kvscheduler.plugins.mock.util.ProtoText;

/**
 * A mock L2 FIB entry (model {@code mock.fib}, proto message {@code mock.l2.FIBEntry}).
 *
 * @param physAddress destination MAC address
 * @param bridgeDomain bridge domain of the entry
 * @param action FORWARD (to {@code outgoingInterface}) or DROP
 * @param outgoingInterface interface to forward to (FORWARD only)
 */
public record FibEntry(
    String physAddress, String bridgeDomain, Action action, String outgoingInterface) {

  /** What to do with matching frames; the first constant is the proto default. */
  public enum Action {
    FORWARD,
    DROP
  }

  public FibEntry {
    physAddress = physAddress == null ? "" : physAddress;
    bridgeDomain = bridgeDomain == null ? "" : bridgeDomain;
    action = action == null ? Action.FORWARD : action;
    outgoingInterface = outgoingInterface == null ? "" : outgoingInterface;
  }

  /** A FORWARD entry. */
  public static FibEntry forward(String mac, String bridgeDomain, String outgoingInterface) {
    return new FibEntry(mac, bridgeDomain, Action.FORWARD, outgoingInterface);
  }

  /** A DROP entry. */
  public static FibEntry drop(String mac, String bridgeDomain) {
    return new FibEntry(mac, bridgeDomain, Action.DROP, "");
  }

  @Override
  public String toString() {
    return new ProtoText()
        .str("phys_address", physAddress)
        .str("bridge_domain", bridgeDomain)
        .enumeration("action", action)
        .str("outgoing_interface", outgoingInterface)
        .toString();
  }
}
