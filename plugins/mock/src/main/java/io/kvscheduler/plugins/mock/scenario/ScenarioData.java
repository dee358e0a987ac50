package io.kvscheduler.plugins.mock.scenario;

import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;

/**
 * The values the scenarios use, the same as the reference example's (including its quirk: {@code
 * loopback1} is of type TAP).
 */
public final class ScenarioData {
  private ScenarioData() {}

  public static final Interface LOOPBACK1 = Interface.of("loopback1", Interface.Type.TAP, true);
  public static final Interface TAP1 = Interface.of("tap1", Interface.Type.TAP, true);
  public static final Interface TAP2 =
      new Interface("tap2", Interface.Type.TAP, true, "11:22:33:44:55:66");
  public static final Interface TAP2_INVALID = TAP2.withPhysAddress("invalid-hw-address");

  public static final BridgeDomain BD1 =
      BridgeDomain.of(
          "bd1",
          BridgeDomain.member("tap1"),
          BridgeDomain.member("tap2"),
          BridgeDomain.bvi("loopback1"));
  public static final BridgeDomain BD1_WITHOUT_TAP1 =
      BridgeDomain.of("bd1", BridgeDomain.member("tap2"), BridgeDomain.bvi("loopback1"));
  public static final BridgeDomain BD2 = BridgeDomain.of("bd2", BridgeDomain.member("tap1"));
  public static final BridgeDomain BD2_WITH_TAP2 =
      BridgeDomain.of("bd2", BridgeDomain.member("tap1"), BridgeDomain.member("tap2"));

  public static final FibEntry FIB1 = FibEntry.forward("cc:cc:cc:dd:dd:dd", "bd1", "tap1");
  public static final FibEntry FIB2 = FibEntry.forward("aa:aa:aa:bb:bb:bb", "bd1", "tap2");
  public static final FibEntry FIB3 = FibEntry.forward("ee:ee:ee:ff:ff:ff", "bd2", "tap1");
}
