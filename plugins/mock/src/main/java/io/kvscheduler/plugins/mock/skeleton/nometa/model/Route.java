package io.kvscheduler.plugins.mock.skeleton.nometa.model;

/**
 * A static IPv4 route: the value of the skeleton without metadata. Values are immutable; the
 * scheduler keeps them in its graph and hands them to the descriptor's callbacks.
 *
 * @param destination destination prefix, e.g. {@code 10.1.0.0/16}; also the last part of the key
 * @param outInterface name of the mock interface the route goes through
 * @param nextHop IPv4 address of the next hop, {@code ""} for a directly connected route
 * @param metric route metric; 0 means "the southbound's default" ({@link #DEFAULT_METRIC})
 */
public record Route(String destination, String outInterface, String nextHop, int metric) {

  /** The metric the southbound uses when none is given (metric 0). */
  public static final int DEFAULT_METRIC = 100;

  public Route {
    destination = destination == null ? "" : destination;
    outInterface = outInterface == null ? "" : outInterface;
    nextHop = nextHop == null ? "" : nextHop;
  }

  /** A route with the default metric. */
  public static Route of(String destination, String outInterface, String nextHop) {
    return new Route(destination, outInterface, nextHop, 0);
  }

  /** The metric the southbound applies: {@link #DEFAULT_METRIC} for 0. */
  public int effectiveMetric() {
    return metric == 0 ? DEFAULT_METRIC : metric;
  }

  /** This route with another metric. */
  public Route withMetric(int m) {
    return new Route(destination, outInterface, nextHop, m);
  }

  /** This route with another next hop. */
  public Route withNextHop(String hop) {
    return new Route(destination, outInterface, hop, metric);
  }
}
