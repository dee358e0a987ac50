package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.metrics.GrpcRequestCounter;
import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.agent.internal.northbound.FileNorthbound;
import io.kvscheduler.agent.internal.northbound.GrpcNorthbound;
import io.kvscheduler.agent.internal.northbound.GrpcRejections;
import io.kvscheduler.agent.internal.northbound.NorthboundSource;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.rest.InfoRoutes;
import io.kvscheduler.agent.internal.rest.LabelRoutes;
import io.kvscheduler.agent.internal.rest.LogRoutes;
import io.kvscheduler.agent.internal.rest.NorthboundRoutes;
import io.kvscheduler.agent.internal.rest.ProbeRoutes;
import io.kvscheduler.agent.internal.rest.RestLimits;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.internal.rest.SchedulerRoutes;
import io.kvscheduler.agent.internal.web.WebPage;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Creates the NB sources the configuration enables. */
final class AgentSources {
  private AgentSources() {}

  static List<NorthboundSource> create(Agent agent) {
    List<NorthboundSource> out = new ArrayList<>();
    // the sources start in this order. REST comes first: it is the one most likely to fail at
    // start (a port in use), and it then stops the agent before any source applied configuration.
    // The order also decides, after a restart, which source's value of a key given by several
    // sources applies: the first resyncs are the first deliveries (Orchestrator), etcd's last

    // --- REST API (--rest): GET /info/version, GET/PUT /configuration, /scheduler/*, /metrics,
    // /info/settings, /info/log, /northbound/problems, /readiness, /liveness, /log/*, the web
    // page at / and its events ---
    if (agent.config().restAddress() != null) {
      RestServer server =
          new RestServer(
              agent.config().restAddress(), RestLimits.DEFAULT, agent.config().restSecurity());
      RestNorthbound rest =
          new RestNorthbound(server, agent.models(), agent.northbound())
              .problems(agent.problems())
              .confirmations(agent.confirmations()); // ?confirm-within, /configuration/confirm
      SchedulerRoutes.register(
          server, agent.scheduler(), agent.models(), agent.metrics(), agent.problems()::note);
      InfoRoutes.register(server, agent.config(), agent.logTail());
      NorthboundRoutes.register(server, agent.problems()); // GET /northbound/problems
      ProbeRoutes.register(server, agent::health); // GET /readiness, /liveness
      LogRoutes.register(server); // GET /log/list, PUT /log/{logger}/{level}
      LabelRoutes.register(
          server, agent.config().label(), agent.labelClaim(), agent.config().fleetUrl());
      WebPage.register(server, agent.statusEvents());
      out.add(rest); // starts and stops the server
    }
    // --- end of REST API ---

    // --- gRPC (--grpc, --grpc-config, GRPC_CONFIG) ---
    if (agent.config().grpc() != null) {
      // Notify streams what the plugins publish (e.g. the Linux interface state changes);
      // reflection and the model list know the plugins' proto files
      // every request is counted by method and status code (kvs_grpc_requests_total)
      GrpcNorthbound grpc =
          new GrpcNorthbound(
                  agent.config().grpc(),
                  agent.scheduler(),
                  agent.models(),
                  agent.northbound(),
                  List.of(
                      new GrpcRequestCounter(agent.metrics()::grpcRequest),
                      new GrpcRejections(agent.problems())), // listed as northbound problems
                  agent.config().restSecurity().readOnly(), // --read-only covers gRPC too
                  agent.plugins().stream().flatMap(p -> p.protoFiles().stream()).toList(),
                  agent.plugins().stream().flatMap(p -> p.configDomain().stream()).toList())
              .follow(agent.notifications());
      agent.metrics().grpcStreams(() -> grpc.api().openStreams()); // kvs_grpc_streams
      grpc.api().confirmations(agent.confirmations()); // metadata confirm-within
      out.add(grpc);
    }
    // --- end of gRPC ---

    // --- file northbound (--config-dir) ---
    if (agent.config().configDir() != null) {
      Duration settle = agent.config().fileSettleTime();
      FileNorthbound files =
          new FileNorthbound(
                  agent.config().configDir(),
                  agent.models(),
                  agent.northbound(),
                  Duration.ofMillis(100),
                  Duration.ofSeconds(1),
                  settle != null ? settle : FileNorthbound.DEFAULT_SETTLE,
                  Clock.systemUTC())
              .followExternalLinks(agent.config().followExternalLinks())
              .problems(agent.problems())
              .events(agent.metrics());
      if (agent.documentsAhead() != null) {
        files.parsedAhead(agent.documentsAhead());
      }
      out.add(files);
    }
    // --- end of file northbound ---

    // --- etcd northbound (and status publishing into etcd) ---
    if (!agent.config().etcdEndpoints().isEmpty()) {
      out.add(
          new EtcdNorthbound(
                  agent.config().label(),
                  agent.config().etcdEndpoints(),
                  agent.config().etcd(),
                  agent.models(),
                  agent.northbound(),
                  agent.scheduler(),
                  agent.config().statusPublishing())
              .pluginNames(agent.pluginNames())
              .problems(agent.problems())
              .claim(agent.labelClaim()) // nothing read or written without the label
              .events(agent.metrics()));
    }
    // --- end of etcd northbound ---
    return out;
  }
}
