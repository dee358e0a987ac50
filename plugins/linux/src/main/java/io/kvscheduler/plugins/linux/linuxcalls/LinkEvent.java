package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.List;

/**
 * One change of the links of a namespace, as the kernel announces it. Links are named by their
 * kernel index: a name seen in an event may be out of date by the time it is read, the index is
 * not.
 */
public sealed interface LinkEvent {
  /**
   * The link {@code index} appeared or changed (state, name, attributes); {@code names} are the
   * names it may have had when the event was sent, the likeliest first ({@code ip} prints a veth as
   * {@code NAME@PEER}, and a name may itself contain {@code @}).
   */
  record Changed(int index, List<String> names) implements LinkEvent {
    public Changed {
      names = List.copyOf(names);
    }
  }

  /** The link {@code index} is gone (deleted, or moved to another namespace). */
  record Removed(int index) implements LinkEvent {}

  /** The link {@code index} got {@code address} ({@code ip/prefix}). */
  record AddressAdded(int index, String address) implements LinkEvent {}

  /** The link {@code index} lost {@code address} ({@code ip/prefix}). */
  record AddressRemoved(int index, String address) implements LinkEvent {}

  /**
   * Events may have been lost ({@code reason} says why, e.g. the kernel dropped some, or the
   * monitoring ended): whoever follows the links must read them all again. When {@code ended}, no
   * event follows this one: the watch must be started again.
   */
  record Lost(String reason, boolean ended) implements LinkEvent {}
}
