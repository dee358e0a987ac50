package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.EtcdNorthbound;
import io.kvscheduler.agent.internal.NorthboundSource;
import java.util.ArrayList;
import java.util.List;

/** Creates the NB sources the configuration enables. */
final class AgentSources {
  private AgentSources() {}

  static List<NorthboundSource> create(Agent agent) {
    List<NorthboundSource> out = new ArrayList<>();
    // file northbound, etcd northbound and REST are added here as they are built

    // --- etcd northbound (and status publishing into etcd) ---
    if (!agent.config().etcdEndpoints().isEmpty()) {
      out.add(new EtcdNorthbound(agent.config().label(), agent.config().etcdEndpoints(),
          agent.models(), agent.northbound(), agent.scheduler(),
          agent.config().statusPublishing()));
    }
    // --- end of etcd northbound ---
    return out;
  }
}
