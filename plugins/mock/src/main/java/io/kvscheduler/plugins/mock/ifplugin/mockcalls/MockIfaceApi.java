package io.kvscheduler.plugins.mock.ifplugin.mockcalls;

import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.util.SortedMap;

/**
 * The calls the interface descriptor makes into the mock southbound. Interfaces are addressed by
 * the integer handle the southbound assigns when it creates them. Every method throws {@link
 * io.kvscheduler.plugins.mock.util.MockSbException} when the handle is unknown.
 */
public interface MockIfaceApi {

  /** Creates a loopback interface; returns its handle. */
  int createLoopbackInterface(String name);

  /** Deletes a loopback interface. */
  void deleteLoopbackInterface(int handle);

  /** Creates a TAP interface; returns its handle. */
  int createTapInterface(String name);

  /** Deletes a TAP interface. */
  void deleteTapInterface(int handle);

  /** Sets the interface administratively up. */
  void interfaceAdminUp(int handle);

  /** Sets the interface administratively down. */
  void interfaceAdminDown(int handle);

  /** Sets the interface's MAC address. */
  void setInterfaceMac(int handle, String mac);

  /** Every interface of the southbound by handle, handles ascending. */
  SortedMap<Integer, Interface> dumpInterfaces();
}
