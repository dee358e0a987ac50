package io.kvscheduler.plugins.mock.quickstart;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import java.util.List;

/**
 * The README example, runnable: two descriptors (interfaces and routes that depend on their
 * interface) over a southbound that prints what it is asked to do. Shows a route waiting as
 * PENDING, created automatically when its interface appears, taken down when the interface goes.
 *
 * <p>Run with {@code bin/kvs-demo}.
 */
public final class QuickStart {
  /** An interface of the demo southbound. */
  public record Interface(String name, boolean enabled) {}

  /** A route through an interface. */
  public record Route(String destination, String outInterface) {}

  private QuickStart() {}

  public static void main(String[] args) {
    KVDescriptor<Interface, Void> interfaces =
        KVDescriptor.builder("interface", Interface.class)
            .nbKeyPrefix("config/interfaces/")
            .createWithoutMetadata(
                (key, itf) -> System.out.println("  SB: create interface " + itf))
            .updateWithoutMetadata(
                (key, before, after) ->
                    System.out.println("  SB: update interface " + before + " -> " + after))
            .delete((key, itf, meta) -> System.out.println("  SB: delete interface " + itf))
            .build();
    KVDescriptor<Route, Void> routes =
        KVDescriptor.builder("route", Route.class)
            .nbKeyPrefix("config/routes/")
            .createWithoutMetadata(
                (key, route) -> System.out.println("  SB: create route " + route))
            .delete((key, route, meta) -> System.out.println("  SB: delete route " + route))
            .dependencies(
                (key, route) ->
                    List.of(
                        Dependency.onKey(
                            "interface-exists", "config/interfaces/" + route.outInterface())))
            .build();

    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build()) {
      kvs.registerDescriptors(interfaces, routes);

      step("1. a route whose interface does not exist yet");
      kvs.startNBTransaction()
          .setValue("config/routes/10.0.0.0-24", new Route("10.0.0.0/24", "eth0"))
          .commit();
      show(kvs.valueStatus("config/routes/10.0.0.0-24"));

      step("2. the interface appears: the pending route is created right after it");
      kvs.startNBTransaction()
          .setValue("config/interfaces/eth0", new Interface("eth0", true))
          .commit(TxnOptions.builder().description("add eth0").build());
      show(kvs.valueStatus("config/routes/10.0.0.0-24"));

      step("3. the interface is removed: the route is deleted first and waits again");
      kvs.startNBTransaction().setValue("config/interfaces/eth0", null).commit();
      show(kvs.valueStatus("config/routes/10.0.0.0-24"));
      kvs.explain("config/routes/10.0.0.0-24").forEach(line -> System.out.println("  " + line));

      step("4. a value of the wrong type is rejected with a clear error");
      try {
        kvs.startNBTransaction().setValue("config/interfaces/eth1", "not an interface").commit();
      } catch (TransactionException e) {
        System.out.println("  " + e.getMessage());
      }

      step("transaction history");
      kvs.transactionHistory()
          .forEach(
              txn ->
                  System.out.println(
                      "  #" + txn.seqNum() + " " + txn.type() + " executed " + txn.executed()));
    }
  }

  private static void step(String text) {
    System.out.println();
    System.out.println(text);
  }

  private static void show(BaseValueStatus status) {
    System.out.println("  status: " + status.value());
  }
}
