package io.kvscheduler.plugins.mock;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.mock.ifplugin.InterfacePlugin;
import io.kvscheduler.plugins.mock.l2plugin.L2Plugin;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;

/**
 * The hands-on example's two plugins, registered together on a scheduler:
 *
 * <pre>{@code
 * try (KVScheduler kvs = KVScheduler.builder().build()) {
 *   MockPlugins mock = MockPlugins.register(kvs, SbPrinter.stdout());
 *   kvs.startNBTransaction()
 *       .setValue(InterfaceModel.key("tap1"), Interface.of("tap1", Interface.Type.TAP, true))
 *       .commit();
 *   mock.interfaces().southboundState();   // {0=name:"tap1" type:TAP enabled:true}
 * }
 * }</pre>
 *
 * @param interfaces the interface plugin
 * @param l2 the L2 plugin
 */
public record MockPlugins(InterfacePlugin interfaces, L2Plugin l2) {

  /** Registers the interface plugin, then the L2 plugin, each over a fresh mock southbound. */
  public static MockPlugins register(KVScheduler scheduler, SbPrinter printer) {
    return register(scheduler, printer, null);
  }

  /**
   * Registers both plugins over mock southbounds kept in {@code journal}, which replays what they
   * held before (null: fresh southbounds in memory).
   */
  public static MockPlugins register(
      KVScheduler scheduler, SbPrinter printer, SouthboundJournal journal) {
    InterfacePlugin interfaces = InterfacePlugin.register(scheduler, printer, journal);
    L2Plugin l2 = L2Plugin.register(scheduler, printer, journal);
    return new MockPlugins(interfaces, l2);
  }

  /** Registers both plugins; southbound operations are logged through SLF4J. */
  public static MockPlugins register(KVScheduler scheduler) {
    return register(scheduler, SbPrinter.logging());
  }
}
