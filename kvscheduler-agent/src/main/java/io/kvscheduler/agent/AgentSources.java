package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.NorthboundSource;
import java.util.ArrayList;
import java.util.List;

/** Creates the NB sources the configuration enables. */
final class AgentSources {
  private AgentSources() {}

  static List<NorthboundSource> create(Agent agent) {
    List<NorthboundSource> out = new ArrayList<>();
    // file northbound, etcd northbound and REST are added here as they are built
    return out;
  }
}
