package io.kvscheduler.plugins.mock.l2plugin.mockcalls;

import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import java.util.SortedMap;

/**
 * Bridge-domain calls into the mock southbound. Bridge domains are addressed by the handle the
 * southbound assigns; unknown handles and duplicate or missing members fail with {@link
 * io.kvscheduler.plugins.mock.util.MockSbException}.
 */
public interface MockBdApi {

  /** Creates an empty bridge domain; returns its handle. */
  int createBridgeDomain(String name);

  /** Deletes a bridge domain. */
  void deleteBridgeDomain(int handle);

  /** Appends interface {@code iface} to the bridge domain's members. */
  void addInterfaceToBridgeDomain(int handle, String iface, boolean bvi);

  /** Removes interface {@code iface} from the bridge domain's members. */
  void deleteInterfaceFromBridgeDomain(int handle, String iface);

  /** Every bridge domain by handle, handles ascending; members in the order they were added. */
  SortedMap<Integer, BridgeDomain> dumpBridgeDomains();
}
