package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Readiness;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * What a value shows readers, computed from the live graph (engine thread): the view to publish for
 * a node, and statuses with the details of a PENDING value's missing dependencies.
 */
public final class LiveStatus {
  private LiveStatus() {}

  /** What readers see of {@code n}: its newest revision when that shows it exactly. */
  static KeyRevision viewOf(Graph graph, Node n) {
    return KeyRevision.published(n, Readiness.details(graph, n));
  }

  static ValueStatus statusOf(Graph graph, Node n) {
    return new ValueStatus(
        n.key(),
        n.state(),
        OpRecord.msg(n.error()),
        n.lastOperation(),
        Readiness.details(graph, n));
  }

  /** Status of a base value from the live graph (engine thread). */
  public static BaseValueStatus baseStatus(Graph graph, String key) {
    Node n = graph.get(key);
    if (n == null || n.value() == null) {
      return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
    }
    List<ValueStatus> derived = new ArrayList<>();
    for (String dk : n.derivedKeys()) {
      Node dn = graph.get(dk);
      if (dn != null && dn.value() != null) {
        derived.add(statusOf(graph, dn));
      }
    }
    return new BaseValueStatus(statusOf(graph, n), derived);
  }
}
