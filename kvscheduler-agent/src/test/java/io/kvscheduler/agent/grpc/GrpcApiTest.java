package io.kvscheduler.agent.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.grpc.GrpcApi;
import io.kvscheduler.grpc.proto.configurator.Config;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.DeleteRequest;
import io.kvscheduler.grpc.proto.configurator.DumpRequest;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.grpc.proto.configurator.Notification;
import io.kvscheduler.grpc.proto.configurator.NotifyRequest;
import io.kvscheduler.grpc.proto.configurator.NotifyResponse;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import io.kvscheduler.grpc.proto.configurator.UpdateResponse;
import io.kvscheduler.grpc.proto.generic.Data;
import io.kvscheduler.grpc.proto.generic.DumpStateRequest;
import io.kvscheduler.grpc.proto.generic.GetConfigRequest;
import io.kvscheduler.grpc.proto.generic.GetConfigResponse;
import io.kvscheduler.grpc.proto.generic.Item;
import io.kvscheduler.grpc.proto.generic.KnownModelsRequest;
import io.kvscheduler.grpc.proto.generic.KnownModelsResponse;
import io.kvscheduler.grpc.proto.generic.ManagerServiceGrpc;
import io.kvscheduler.grpc.proto.generic.MetaServiceGrpc;
import io.kvscheduler.grpc.proto.generic.ModelDetail;
import io.kvscheduler.grpc.proto.generic.ProtoFileDescriptorRequest;
import io.kvscheduler.grpc.proto.generic.ProtoFileDescriptorResponse;
import io.kvscheduler.grpc.proto.generic.SetConfigRequest;
import io.kvscheduler.grpc.proto.generic.SetConfigResponse;
import io.kvscheduler.grpc.proto.generic.SubscribeRequest;
import io.kvscheduler.grpc.proto.generic.SubscribeResponse;
import io.kvscheduler.grpc.proto.generic.Subscription;
import io.kvscheduler.grpc.proto.generic.UpdateItem;
import io.kvscheduler.grpc.proto.generic.UpdateResult;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceNotification;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceState;
import io.kvscheduler.grpc.proto.vpp.ConfigData.Builder;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.proto.ConfigData;
import io.kvscheduler.plugins.mock.proto.interfaces.Interface;
import io.kvscheduler.plugins.mock.proto.l2.BridgeDomain;
import io.kvscheduler.plugins.mock.proto.l2.FIBEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Every rpc of the gRPC northbound, through grpc-java's in-process transport. */
class GrpcApiTest {
  static final String TAP_KEY = "config/mock/v1/interfaces/";
  static final String FIB_KEY = "config/mock/v1/fib/bd1/mac/aa:bb:cc:dd:ee:ff";

  final MockAgentPlugin mock = new MockAgentPlugin();
  final Agent agent;
  GrpcApi api;
  Server server;
  ManagedChannel channel;

  GrpcApiTest() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder().restAddress(null).printTxnSummary(false).build(), List.of(mock));
    serve(null, GrpcApi.Limits.DEFAULT);
  }

  private void serve(String token, GrpcApi.Limits limits) throws Exception {
    if (server != null) {
      channel.shutdownNow();
      server.shutdownNow();
      api.close();
    }
    api =
        new GrpcApi(
            agent.scheduler(),
            agent.models(),
            agent.northbound(),
            mock.protoFiles(),
            mock.configDomain().stream().toList(),
            token,
            limits,
            false);
    String name = InProcessServerBuilder.generateName();
    server = api.addTo(InProcessServerBuilder.forName(name)).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void close() {
    channel.shutdownNow();
    server.shutdownNow();
    api.close();
    agent.close();
  }

  ConfiguratorServiceGrpc.ConfiguratorServiceBlockingStub configurator() {
    return ConfiguratorServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  ManagerServiceGrpc.ManagerServiceBlockingStub manager() {
    return ManagerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  static Interface tap(String name) {
    return Interface.newBuilder()
        .setName(name)
        .setType(Interface.Type.TAP)
        .setEnabled(true)
        .build();
  }

  static Config mockConfig(ConfigData.Builder data) {
    return MockDomain.config(data);
  }

  static FIBEntry dropFib() {
    return FIBEntry.newBuilder()
        .setPhysAddress("aa:bb:cc:dd:ee:ff")
        .setBridgeDomain("bd1")
        .setAction(FIBEntry.Action.DROP)
        .build();
  }

  ValueState state(String key) {
    return agent.scheduler().valueStatus(key).state();
  }

  static Status.Code code(Throwable t) {
    return Status.fromThrowable(t).getCode();
  }

  @Test
  @DisplayName(
      "Update applies the values in one transaction of source grpc, with the seqnum header")
  void updateAppliesValuesAndSendsSeqnum() {
    AtomicReference<Metadata> headers = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    configurator()
        .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(
                    mockConfig(
                        ConfigData.newBuilder()
                            .addInterfaces(tap("tap1"))
                            .addInterfaces(tap("tap2"))))
                .build());
    String seq = headers.get().get(Metadata.Key.of("seqnum", Metadata.ASCII_STRING_MARSHALLER));
    assertThat(seq).isNotNull();
    RecordedTxn txn = agent.scheduler().recordedTransaction(Long.parseLong(seq)).orElseThrow();
    assertThat(txn.description()).isEqualTo("change from grpc");
    assertThat(txn.values())
        .extracting(RecordedTxn.RecordedValue::key)
        .containsExactlyInAnyOrder(TAP_KEY + "tap1", TAP_KEY + "tap2");
    assertThat(state(TAP_KEY + "tap1")).isEqualTo(ValueState.CONFIGURED);
    assertThat(mock.plugins().interfaces().southboundState().values())
        .extracting(i -> i.name())
        .containsExactlyInAnyOrder("tap1", "tap2");
  }

  @Test
  @DisplayName("D40 Get lists the desired values of every source, placed by message type")
  void getListsDesiredValuesOfAllSources() throws Exception {
    agent
        .northbound()
        .change(
            "file",
            Map.of(
                TAP_KEY + "fromfile",
                new io.kvscheduler.plugins.mock.ifplugin.model.Interface(
                    "fromfile",
                    io.kvscheduler.plugins.mock.ifplugin.model.Interface.Type.LOOPBACK,
                    false,
                    "")))
        .get(10, TimeUnit.SECONDS);
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(
                    mockConfig(
                        ConfigData.newBuilder()
                            .addInterfaces(tap("tap1"))
                            .addBridgeDomains(
                                BridgeDomain.newBuilder()
                                    .setName("bd1")
                                    .addInterfaces(
                                        BridgeDomain.Interface.newBuilder().setName("tap1")))))
                .build());
    Config got = configurator().get(GetRequest.getDefaultInstance()).getConfig();
    assertThat(MockDomain.of(got).getInterfacesList())
        .containsExactly(
            Interface.newBuilder().setName("fromfile").setType(Interface.Type.LOOPBACK).build(),
            tap("tap1"));
    assertThat(MockDomain.of(got).getBridgeDomains(0).getInterfaces(0).getName()).isEqualTo("tap1");
    assertThat(got.hasVppConfig()).isFalse();
  }

  @Test
  @DisplayName(
      "Delete removes the values (seqnum header); full_resync replaces only what gRPC gave")
  void deleteAndFullResync() throws Exception {
    agent
        .northbound()
        .change(
            "file",
            Map.of(
                TAP_KEY + "fromfile",
                new io.kvscheduler.plugins.mock.ifplugin.model.Interface(
                    "fromfile",
                    io.kvscheduler.plugins.mock.ifplugin.model.Interface.Type.LOOPBACK,
                    true,
                    "")))
        .get(10, TimeUnit.SECONDS);
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(
                    mockConfig(
                        ConfigData.newBuilder().addInterfaces(tap("a")).addInterfaces(tap("b"))))
                .build());
    AtomicReference<Metadata> headers = new AtomicReference<>();
    configurator()
        .withInterceptors(
            MetadataUtils.newCaptureMetadataInterceptor(headers, new AtomicReference<>()))
        .delete(
            DeleteRequest.newBuilder()
                .setDelete(
                    mockConfig(
                        ConfigData.newBuilder().addInterfaces(Interface.newBuilder().setName("a"))))
                .build());
    assertThat(state(TAP_KEY + "a")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(state(TAP_KEY + "b")).isEqualTo(ValueState.CONFIGURED);
    String seq = headers.get().get(Metadata.Key.of("seqnum", Metadata.ASCII_STRING_MARSHALLER));
    RecordedTxn deletion = agent.scheduler().recordedTransaction(Long.parseLong(seq)).orElseThrow();
    assertThat(deletion.executed())
        .extracting(RecordedTxnOp::operation, RecordedTxnOp::key)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(TxnOperation.DELETE, TAP_KEY + "a"));

    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setFullResync(true)
                .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("c"))))
                .build());
    assertThat(agent.northbound().desired().keySet())
        .containsExactly(TAP_KEY + "c", TAP_KEY + "fromfile");
    assertThat(mock.plugins().interfaces().southboundState().values())
        .extracting(i -> i.name())
        .containsExactlyInAnyOrder("c", "fromfile");
  }

  @Test
  @DisplayName(
      "D26 a key given by a file and over gRPC: the value delivered last applies; a gRPC Delete"
          + " hands the key back to the file's value")
  void keyGivenByFileAndGrpc() throws Exception {
    io.kvscheduler.plugins.mock.ifplugin.model.Interface fromFile =
        new io.kvscheduler.plugins.mock.ifplugin.model.Interface(
            "shared", io.kvscheduler.plugins.mock.ifplugin.model.Interface.Type.LOOPBACK, true, "");
    agent
        .northbound()
        .change("file", Map.of(TAP_KEY + "shared", fromFile))
        .get(10, TimeUnit.SECONDS);
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("shared"))))
                .build());
    assertThat(mock.plugins().interfaces().southboundState().values())
        .singleElement()
        .satisfies(
            i ->
                assertThat(i.type())
                    .isEqualTo(io.kvscheduler.plugins.mock.ifplugin.model.Interface.Type.TAP));
    assertThat(configurator().get(GetRequest.getDefaultInstance()).getConfig())
        .isEqualTo(mockConfig(ConfigData.newBuilder().addInterfaces(tap("shared"))));

    configurator()
        .delete(
            DeleteRequest.newBuilder()
                .setDelete(
                    mockConfig(
                        ConfigData.newBuilder()
                            .addInterfaces(Interface.newBuilder().setName("shared"))))
                .build());
    assertThat(agent.northbound().desired()).containsEntry(TAP_KEY + "shared", fromFile);
    assertThat(state(TAP_KEY + "shared")).isEqualTo(ValueState.CONFIGURED);
    assertThat(mock.plugins().interfaces().southboundState().values())
        .singleElement()
        .satisfies(
            i ->
                assertThat(i.type())
                    .isEqualTo(io.kvscheduler.plugins.mock.ifplugin.model.Interface.Type.LOOPBACK));
  }

  @Test
  @DisplayName("wait_done returns once no pushed value is PENDING; at the deadline it fails")
  void waitDoneWaitsForPendingValues() throws Exception {
    UpdateRequest fib =
        UpdateRequest.newBuilder()
            .setWaitDone(true)
            .setUpdate(mockConfig(ConfigData.newBuilder().addFibs(dropFib())))
            .build();
    assertThatThrownBy(
            () -> configurator().withDeadlineAfter(300, TimeUnit.MILLISECONDS).update(fib))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(state(FIB_KEY)).isEqualTo(ValueState.PENDING);

    // without wait_done, the same PENDING value returns at once
    configurator().update(fib.toBuilder().setWaitDone(false).build());

    CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> configurator().update(fib));
    Thread.sleep(200);
    assertThat(waiting).isNotDone();
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(
                    mockConfig(
                        ConfigData.newBuilder()
                            .addBridgeDomains(BridgeDomain.newBuilder().setName("bd1"))))
                .build());
    waiting.get(10, TimeUnit.SECONDS);
    assertThat(state(FIB_KEY)).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  @DisplayName("a cancelled wait_done call ends at once with CANCELLED")
  void cancellationEndsAWaitingCall() throws Exception {
    Context.CancellableContext ctx = Context.current().withCancellation();
    CompletableFuture<Throwable> result = new CompletableFuture<>();
    ctx.run(
        () ->
            ConfiguratorServiceGrpc.newStub(channel)
                .update(
                    UpdateRequest.newBuilder()
                        .setWaitDone(true)
                        .setUpdate(mockConfig(ConfigData.newBuilder().addFibs(dropFib())))
                        .build(),
                    new StreamObserver<>() {
                      @Override
                      public void onNext(UpdateResponse r) {}

                      @Override
                      public void onError(Throwable t) {
                        result.complete(t);
                      }

                      @Override
                      public void onCompleted() {
                        result.complete(null);
                      }
                    }));
    await().atMost(Duration.ofSeconds(10)).until(() -> state(FIB_KEY) == ValueState.PENDING);
    ctx.cancel(null);
    assertThat(code(result.get(5, TimeUnit.SECONDS))).isEqualTo(Status.Code.CANCELLED);
    // the server is free for the next call
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("after"))))
                .build());
    assertThat(state(TAP_KEY + "after")).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  @DisplayName(
      "D41 D42 VPP content, unknown fields and values of no model: INVALID_ARGUMENT, nothing applied")
  void unsupportedContentIsRefusedByName() {
    Builder vpp =
        io.kvscheduler.grpc.proto.vpp.ConfigData.newBuilder()
            .addInterfaces(ByteString.copyFromUtf8("\n\u0004memif"));
    assertThatThrownBy(
            () ->
                configurator()
                    .update(
                        UpdateRequest.newBuilder()
                            .setUpdate(
                                MockDomain.with(
                                    Config.newBuilder().setVppConfig(vpp),
                                    ConfigData.newBuilder().addInterfaces(tap("x"))))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("update.vpp_config.interfaces");

    Interface withUnknown =
        tap("y").toBuilder()
            .setUnknownFields(
                UnknownFieldSet.newBuilder()
                    .addField(99, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                    .build())
            .build();
    assertThatThrownBy(
            () ->
                configurator()
                    .update(
                        UpdateRequest.newBuilder()
                            .setUpdate(
                                mockConfig(ConfigData.newBuilder().addInterfaces(withUnknown)))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining(
            "update.mock_config.interfaces[0]: field 99 of" + " mock.interfaces.Interface");

    Config unknownDomain =
        Config.newBuilder()
            .setUnknownFields(
                UnknownFieldSet.newBuilder()
                    .addField(
                        7,
                        UnknownFieldSet.Field.newBuilder()
                            .addLengthDelimited(ByteString.copyFromUtf8("x"))
                            .build())
                    .build())
            .build();
    assertThatThrownBy(
            () ->
                configurator().update(UpdateRequest.newBuilder().setUpdate(unknownDomain).build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("field 7 of ligato.configurator.Config");
    assertThat(agent.northbound().desired()).isEmpty();
  }

  @Test
  @DisplayName("D41 a single VPP message with every field at its default is refused by name too")
  void emptyVppMessageIsRefused() throws Exception {
    // on the wire as a ligato client writes UpdateRequest{update{vpp_config{dns_cache{}}}}:
    // field 1 (update) > field 1 (vpp_config) > field 100 (dns_cache), of length 0
    byte[] wire = {0x0a, 0x05, 0x0a, 0x03, (byte) 0xa2, 0x06, 0x00};
    UpdateRequest emptyDnsCache = UpdateRequest.parseFrom(wire);
    assertThatThrownBy(() -> configurator().update(emptyDnsCache))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("update.vpp_config.dns_cache");
    assertThat(agent.scheduler().transactionHistory())
        .noneMatch(t -> t.description().contains("grpc"));
  }

  @Test
  @DisplayName("address allocations while the Linux plugin is off: INVALID_ARGUMENT naming them")
  void allocationsWithoutTheLinuxPluginAreRefusedByName() {
    Config netalloc =
        MockDomain.with(
                Config.newBuilder()
                    .setNetallocConfig(
                        io.kvscheduler.grpc.proto.netalloc.ConfigData.newBuilder()
                            .addIpAddresses(
                                io.kvscheduler.grpc.proto.netalloc.IPAllocation.newBuilder()
                                    .setNetworkName("net1")
                                    .setInterfaceName("veth1")
                                    .setAddress("10.0.1.1/24"))),
                ConfigData.newBuilder().addInterfaces(tap("x")))
            .build();
    assertThatThrownBy(
            () -> configurator().update(UpdateRequest.newBuilder().setUpdate(netalloc).build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("update.netalloc_config.ip_addresses[0]")
        .hasMessageContaining("ligato.netalloc.IPAllocation")
        .hasMessageContaining("is its plugin enabled?");
    assertThat(agent.northbound().desired()).isEmpty();
  }

  @Test
  @DisplayName("Linux values while the Linux plugin is off: INVALID_ARGUMENT naming the value")
  void valuesOfAModelNotRegisteredAreRefused() {
    Config linux =
        MockDomain.with(
                Config.newBuilder()
                    .setLinuxConfig(
                        io.kvscheduler.grpc.proto.linux.ConfigData.newBuilder()
                            .addInterfaces(
                                io.kvscheduler.plugins.linux.model.interfaces.Interface.newBuilder()
                                    .setName("veth1"))),
                ConfigData.newBuilder().addInterfaces(tap("x")))
            .build();
    assertThatThrownBy(
            () -> configurator().update(UpdateRequest.newBuilder().setUpdate(linux).build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("update.linux_config.interfaces[0]")
        .hasMessageContaining("ligato.linux.interfaces.Interface")
        .hasMessageContaining("is its plugin enabled?");
    assertThatThrownBy(
            () -> configurator().delete(DeleteRequest.newBuilder().setDelete(linux).build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT));
    assertThat(agent.northbound().desired()).isEmpty();
  }

  @Test
  @DisplayName("a transaction that fails: FAILED_PRECONDITION with the transaction's error")
  void failedTransactionIsFailedPrecondition() {
    mock.plugins().interfaces().southbound().failNextTapCreation("no room for taps");
    assertThatThrownBy(
            () ->
                configurator()
                    .update(
                        UpdateRequest.newBuilder()
                            .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("t1"))))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.FAILED_PRECONDITION))
        .hasMessageContaining(TAP_KEY + "t1")
        .hasMessageContaining("no room for taps");
  }

  @Test
  @DisplayName(
      "invalid values of a megabyte: a status description of a few KB naming key and field")
  void largeInvalidValuesGiveBoundedDescriptions() {
    Interface big = tap("big").toBuilder().setPhysAddress("x".repeat(1 << 20)).build();
    assertThatThrownBy(
            () ->
                configurator()
                    .update(
                        UpdateRequest.newBuilder()
                            .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(big)))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.FAILED_PRECONDITION))
        .satisfies(
            e ->
                assertThat(Status.fromThrowable(e).getDescription())
                    .contains(TAP_KEY + "big")
                    .contains("phys_address")
                    .hasSizeLessThan(4 * 1024));

    ConfigData.Builder many = ConfigData.newBuilder();
    for (int i = 0; i < 40; i++) {
      many.addInterfaces(tap("big" + i).toBuilder().setPhysAddress("y".repeat(50_000)).build());
    }
    assertThatThrownBy(
            () ->
                configurator()
                    .update(UpdateRequest.newBuilder().setUpdate(mockConfig(many)).build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.FAILED_PRECONDITION))
        .satisfies(
            e ->
                assertThat(Status.fromThrowable(e).getDescription())
                    .contains(TAP_KEY + "big0")
                    .contains("more characters")
                    .hasSizeLessThan(8 * 1024));
  }

  @Test
  @DisplayName("Dump reads the southbound through the descriptors' Retrieve")
  void dumpReadsTheSouthbound() {
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("tap1"))))
                .build());
    mock.plugins().interfaces().southbound().createLoopbackInterface("outside");
    Config dump = configurator().dump(DumpRequest.getDefaultInstance()).getDump();
    assertThat(MockDomain.of(dump).getInterfacesList())
        .extracting(Interface::getName)
        .contains("tap1", "outside");
  }

  static Any any(Message m) {
    return Any.newBuilder()
        .setTypeUrl("type.googleapis.com/" + m.getDescriptorForType().getFullName())
        .setValue(m.toByteString())
        .build();
  }

  static UpdateItem put(Message m, Map<String, String> labels) {
    return UpdateItem.newBuilder()
        .setItem(Item.newBuilder().setData(Data.newBuilder().setAny(any(m))))
        .putAllLabels(labels)
        .build();
  }

  /** Request metadata {@code dry-run: value} (and {@code confirm-within} when not null). */
  static ClientInterceptor dryRun(String value, String confirmWithin) {
    Metadata m = new Metadata();
    m.put(Metadata.Key.of("dry-run", Metadata.ASCII_STRING_MARSHALLER), value);
    if (confirmWithin != null) {
      m.put(Metadata.Key.of("confirm-within", Metadata.ASCII_STRING_MARSHALLER), confirmWithin);
    }
    return MetadataUtils.newAttachHeadersInterceptor(m);
  }

  @Test
  @DisplayName(
      "SetConfig with metadata dry-run: true answers the planned results in execution order"
          + " (PENDING with what it waits for) and applies, records and keeps nothing")
  void setConfigDryRunPlansOnly() {
    manager().setConfig(SetConfigRequest.newBuilder().addUpdates(put(tap("a"), Map.of())).build());
    int history = agent.scheduler().transactionHistory().size();
    AtomicReference<Metadata> headers = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    SetConfigResponse r =
        manager()
            .withInterceptors(
                dryRun("true", null),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
            .setConfig(
                SetConfigRequest.newBuilder()
                    .setOverwriteAll(true)
                    .addUpdates(put(tap("b"), Map.of()))
                    .addUpdates(put(dropFib(), Map.of()))
                    .build());
    assertThat(r.getResultsList())
        .extracting(UpdateResult::getKey, x -> x.getStatus().getStatus())
        .containsExactly(
            tuple(TAP_KEY + "a", "REMOVED"),
            tuple(FIB_KEY, "PENDING"),
            tuple(TAP_KEY + "b", "CONFIGURED"));
    assertThat(r.getResults(1).getStatus().getMessage()).contains("bridge-domain");
    assertThat(r.getResults(2).getId().getName()).isEqualTo("b");
    assertThat(headers.get().get(Metadata.Key.of("seqnum", Metadata.ASCII_STRING_MARSHALLER)))
        .isNull();
    assertThat(
            headers
                .get()
                .get(Metadata.Key.of("dry-run-operations", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("3");
    assertThat(agent.scheduler().transactionHistory()).hasSize(history);
    assertThat(agent.northbound().desired().keySet()).containsExactly(TAP_KEY + "a");
    assertThat(state(TAP_KEY + "b")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(mock.plugins().interfaces().southboundState().values())
        .extracting(i -> i.name())
        .containsExactly("a");
  }

  @Test
  @DisplayName(
      "Update with metadata dry-run plans (the plan in the response headers) and applies nothing;"
          + " a bad dry-run value or dry-run with confirm-within is INVALID_ARGUMENT naming it")
  void updateDryRunPlansOnly() {
    int history = agent.scheduler().transactionHistory().size();
    AtomicReference<Metadata> headers = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    UpdateRequest request =
        UpdateRequest.newBuilder()
            .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("planned"))))
            .build();
    configurator()
        .withInterceptors(
            dryRun("1", null), MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
        .update(request);
    assertThat(headers.get().get(Metadata.Key.of("dry-run-plan", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("CREATE " + TAP_KEY + "planned CONFIGURED");
    assertThat(state(TAP_KEY + "planned")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(agent.scheduler().transactionHistory()).hasSize(history);
    assertThat(agent.northbound().desired()).isEmpty();

    assertThatThrownBy(() -> configurator().withInterceptors(dryRun("maybe", null)).update(request))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("dry-run");
    assertThatThrownBy(() -> configurator().withInterceptors(dryRun("true", "30s")).update(request))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("confirm-within");
    configurator().withInterceptors(dryRun("false", null)).update(request);
    assertThat(state(TAP_KEY + "planned")).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  @DisplayName("SetConfig: results with states and the seqnum entry; GetConfig by ids and labels")
  void setConfigAndGetConfigWithLabels() {
    SetConfigResponse r =
        manager()
            .setConfig(
                SetConfigRequest.newBuilder()
                    .addUpdates(put(tap("red"), Map.of("colour", "red", "team", "a")))
                    .addUpdates(put(tap("blue"), Map.of("colour", "blue")))
                    .addUpdates(put(dropFib(), Map.of()))
                    .build());
    assertThat(r.getResultsList())
        .extracting(UpdateResult::getKey)
        .containsExactly(TAP_KEY + "red", TAP_KEY + "blue", FIB_KEY, "seqnum");
    assertThat(r.getResults(0).getStatus().getStatus()).isEqualTo("CONFIGURED");
    assertThat(r.getResults(2).getStatus().getStatus()).isEqualTo("PENDING");
    assertThat(r.getResults(2).getStatus().getMessage()).contains("bridge-domain");
    assertThat(r.getResults(3).getStatus().getStatus()).isEqualTo("NONEXISTENT");
    long seq = Long.parseLong(r.getResults(3).getStatus().getMessage());
    assertThat(agent.scheduler().recordedTransaction(seq).orElseThrow().values()).hasSize(3);

    GetConfigResponse red =
        manager().getConfig(GetConfigRequest.newBuilder().putLabels("colour", "red").build());
    assertThat(red.getItemsList())
        .singleElement()
        .satisfies(
            i -> {
              assertThat(i.getItem().getId().getModel()).isEqualTo("mock.interfaces");
              assertThat(i.getItem().getId().getName()).isEqualTo("red");
              assertThat(i.getItem().getData().getAny().getTypeUrl())
                  .isEqualTo("models.ligato.io/mock.interfaces.Interface");
              assertThat(i.getLabelsMap()).containsEntry("team", "a");
              assertThat(i.getStatus().getStatus()).isEqualTo("CONFIGURED");
            });
    assertThat(
            manager()
                .getConfig(GetConfigRequest.newBuilder().putLabels("!colour", "").build())
                .getItemsList())
        .extracting(i -> i.getItem().getId().getModel())
        .containsExactly("mock.fib");
    assertThat(
            manager()
                .getConfig(
                    GetConfigRequest.newBuilder()
                        .addIds(Item.ID.newBuilder().setModel("mock.interfaces").setName("blue"))
                        .build())
                .getItemsList())
        .hasSize(1);
    assertThatThrownBy(
            () ->
                manager()
                    .getConfig(
                        GetConfigRequest.newBuilder()
                            .addIds(
                                Item.ID.newBuilder().setModel("mock.interfaces").setName("blue"))
                            .putLabels("colour", "blue")
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT));
  }

  @Test
  @DisplayName(
      "SetConfig: delete by model and name, overwrite_all; unknown model and unknown fields refused")
  void setConfigDeleteOverwriteAndUnknownModel() {
    manager()
        .setConfig(
            SetConfigRequest.newBuilder()
                .addUpdates(put(tap("a"), Map.of()))
                .addUpdates(put(tap("b"), Map.of()))
                .build());
    manager()
        .setConfig(
            SetConfigRequest.newBuilder()
                .addUpdates(
                    UpdateItem.newBuilder()
                        .setItem(
                            Item.newBuilder()
                                .setId(
                                    Item.ID.newBuilder().setModel("mock.interfaces").setName("a"))))
                .build());
    assertThat(agent.northbound().desired().keySet()).containsExactly(TAP_KEY + "b");
    manager()
        .setConfig(
            SetConfigRequest.newBuilder()
                .setOverwriteAll(true)
                .addUpdates(put(tap("c"), Map.of()))
                .build());
    assertThat(agent.northbound().desired().keySet()).containsExactly(TAP_KEY + "c");

    assertThatThrownBy(
            () ->
                manager()
                    .setConfig(
                        SetConfigRequest.newBuilder()
                            .addUpdates(
                                UpdateItem.newBuilder()
                                    .setItem(
                                        Item.newBuilder()
                                            .setId(
                                                Item.ID
                                                    .newBuilder()
                                                    .setModel("vpp.interfaces")
                                                    .setName("x"))))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("unknown model 'vpp.interfaces'");
    Interface withUnknown =
        tap("d").toBuilder()
            .setUnknownFields(
                UnknownFieldSet.newBuilder()
                    .addField(99, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                    .build())
            .build();
    assertThatThrownBy(
            () ->
                manager()
                    .setConfig(
                        SetConfigRequest.newBuilder()
                            .addUpdates(put(withUnknown, Map.of()))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("updates[0].data: field 99 of mock.interfaces.Interface");
    assertThat(agent.northbound().desired()).doesNotContainKey(TAP_KEY + "d");
    Any vpp =
        Any.newBuilder()
            .setTypeUrl("models.ligato.io/ligato.vpp.interfaces.Interface")
            .setValue(ByteString.copyFromUtf8("x"))
            .build();
    assertThatThrownBy(
            () ->
                manager()
                    .setConfig(
                        SetConfigRequest.newBuilder()
                            .addUpdates(
                                UpdateItem.newBuilder()
                                    .setItem(
                                        Item.newBuilder().setData(Data.newBuilder().setAny(vpp))))
                            .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("ligato.vpp.interfaces.Interface");
  }

  @Test
  @DisplayName("DumpState lists the scheduler's view of the southbound")
  void dumpStateListsCachedValues() {
    manager().setConfig(SetConfigRequest.newBuilder().addUpdates(put(tap("a"), Map.of())).build());
    assertThat(manager().dumpState(DumpStateRequest.getDefaultInstance()).getItemsList())
        .extracting(i -> i.getItem().getId().getName())
        .containsExactly("a");
  }

  @Test
  @DisplayName(
      "KnownModels and ProtoFileDescriptor: a client builds a value of a model learnt at run time")
  void metaServiceDescribesModels() throws Exception {
    var meta = MetaServiceGrpc.newBlockingStub(channel);
    KnownModelsResponse known =
        meta.knownModels(KnownModelsRequest.newBuilder().setClass_("config").build());
    assertThat(known.getKnownModelsList())
        .extracting(ModelDetail::getProtoName)
        .containsExactly("mock.interfaces.Interface", "mock.l2.BridgeDomain", "mock.l2.FIBEntry");
    ModelDetail iface = known.getKnownModels(0);
    assertThat(iface.getSpec().getModule()).isEqualTo("mock");
    assertThat(iface.getOptionsList())
        .anySatisfy(
            o -> {
              assertThat(o.getKey()).isEqualTo("protoFile");
              assertThat(o.getValuesList()).containsExactly("model/interface.proto");
            });
    assertThat(
            meta.knownModels(KnownModelsRequest.newBuilder().setClass_("metrics").build())
                .getKnownModelsList())
        .isEmpty();

    ProtoFileDescriptorResponse file =
        meta.protoFileDescriptor(
            ProtoFileDescriptorRequest.newBuilder()
                .setFullProtoFileName("model/bridge-domain.proto")
                .build());
    assertThat(file.hasFileImportDescriptors()).isTrue();
    FileDescriptor learnt =
        FileDescriptor.buildFrom(file.getFileDescriptor(), new FileDescriptor[0]);
    Descriptor bd = learnt.findMessageTypeByName("BridgeDomain");
    DynamicMessage value =
        DynamicMessage.newBuilder(bd).setField(bd.findFieldByName("name"), "learnt").build();
    manager().setConfig(SetConfigRequest.newBuilder().addUpdates(put(value, Map.of())).build());
    assertThat(state("config/mock/v1/bridge-domain/learnt")).isEqualTo(ValueState.CONFIGURED);

    assertThatThrownBy(
            () ->
                meta.protoFileDescriptor(
                    ProtoFileDescriptorRequest.newBuilder()
                        .setFullProtoFileName("ligato/vpp/vpp.proto")
                        .build()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.NOT_FOUND));
  }

  /** The files server reflection (v1) answers for {@code symbol}: its file first, then imports. */
  List<FileDescriptorProto> reflectedFiles(String symbol) throws Exception {
    CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
    var requests =
        ServerReflectionGrpc.newStub(channel)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ServerReflectionResponse r) {
                    answer.complete(r);
                  }

                  @Override
                  public void onError(Throwable t) {
                    answer.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {}
                });
    requests.onNext(ServerReflectionRequest.newBuilder().setFileContainingSymbol(symbol).build());
    ServerReflectionResponse r = answer.get(10, TimeUnit.SECONDS);
    requests.onCompleted();
    assertThat(r.hasErrorResponse()).as(r.getErrorResponse().getErrorMessage()).isFalse();
    List<FileDescriptorProto> files = new ArrayList<>();
    for (ByteString b : r.getFileDescriptorResponse().getFileDescriptorProtoList()) {
      files.add(FileDescriptorProto.parseFrom(b));
    }
    return files;
  }

  @Test
  @DisplayName(
      "reflection describes Config with the mock plugins' domain: mock.ConfigData mock_config = 100")
  void reflectionShowsThePluginDomain() throws Exception {
    List<FileDescriptorProto> files = reflectedFiles("ligato.configurator.Config");
    FileDescriptorProto configurator = files.get(0);
    assertThat(configurator.getName()).isEqualTo("ligato/configurator/configurator.proto");
    assertThat(configurator.getDependencyList()).contains("model/mock.proto");
    DescriptorProto config =
        configurator.getMessageTypeList().stream()
            .filter(m -> m.getName().equals("Config"))
            .findFirst()
            .orElseThrow();
    assertThat(config.getFieldList())
        .extracting(f -> f.getNumber() + " " + f.getName() + " " + f.getTypeName())
        .containsExactly(
            "1 vpp_config .ligato.vpp.ConfigData",
            "2 linux_config .ligato.linux.ConfigData",
            "3 netalloc_config .ligato.netalloc.ConfigData",
            "100 mock_config .mock.ConfigData");
    assertThat(files)
        .extracting(FileDescriptorProto::getName)
        .contains("model/mock.proto", "model/interface.proto", "model/bridge-domain.proto");
    // the whole set builds: a reflection client can make messages of every domain from it
    Map<String, FileDescriptor> built = new java.util.HashMap<>();
    List<FileDescriptorProto> pending = new ArrayList<>(files);
    while (!pending.isEmpty()) {
      FileDescriptorProto next =
          pending.stream()
              .filter(f -> built.keySet().containsAll(f.getDependencyList()))
              .findFirst()
              .orElseThrow();
      pending.remove(next);
      built.put(
          next.getName(),
          FileDescriptor.buildFrom(
              next,
              next.getDependencyList().stream().map(built::get).toArray(FileDescriptor[]::new)));
    }
    Descriptor described =
        built.get("ligato/configurator/configurator.proto").findMessageTypeByName("Config");
    assertThat(described.findFieldByNumber(100).getMessageType().getFullName())
        .isEqualTo("mock.ConfigData");
    assertThat(reflectedFiles("mock.l2.FIBEntry").get(0).getName()).isEqualTo("model/fib.proto");
  }

  @Test
  @DisplayName(
      "D43 Subscribe streams status changes of the selected models: PENDING, then CONFIGURED")
  void subscribeStreamsStatusChanges() throws Exception {
    BlockingQueue<SubscribeResponse> got = new LinkedBlockingQueue<>();
    Context.CancellableContext ctx = Context.current().withCancellation();
    ctx.run(
        () ->
            ManagerServiceGrpc.newStub(channel)
                .subscribe(
                    SubscribeRequest.newBuilder()
                        .addSubscriptions(
                            Subscription.newBuilder()
                                .setId(Item.ID.newBuilder().setModel("mock.fib")))
                        .build(),
                    new StreamObserver<>() {
                      @Override
                      public void onNext(SubscribeResponse r) {
                        got.add(r);
                      }

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {}
                    }));
    await().atMost(Duration.ofSeconds(5)).until(() -> api.openStreams() == 1);
    manager()
        .setConfig(
            SetConfigRequest.newBuilder()
                .addUpdates(put(dropFib(), Map.of()))
                .addUpdates(put(tap("not-followed"), Map.of()))
                .build());
    manager()
        .setConfig(
            SetConfigRequest.newBuilder()
                .addUpdates(put(BridgeDomain.newBuilder().setName("bd1").build(), Map.of()))
                .build());
    SubscribeResponse first = got.poll(10, TimeUnit.SECONDS);
    SubscribeResponse second = got.poll(10, TimeUnit.SECONDS);
    assertThat(first.getNotifications(0).getStatus().getStatus()).isEqualTo("PENDING");
    assertThat(first.getNotifications(0).getItem().getId().getName())
        .isEqualTo("bd1/mac/aa:bb:cc:dd:ee:ff");
    assertThat(first.getNotifications(0).getItem().getData().getAny().getTypeUrl())
        .endsWith("mock.l2.FIBEntry");
    assertThat(second.getNotifications(0).getStatus().getStatus()).isEqualTo("CONFIGURED");
    assertThat(got.poll(300, TimeUnit.MILLISECONDS)).isNull();
    ctx.cancel(null);
    await().atMost(Duration.ofSeconds(5)).until(() -> api.openStreams() == 0);
  }

  @Test
  @DisplayName("D43 a Subscribe client that never reads: its stream ends with RESOURCE_EXHAUSTED")
  void subscriberThatNeverReadsIsBounded() throws Exception {
    serve(null, new GrpcApi.Limits(100, 20));
    ClientCall<SubscribeRequest, SubscribeResponse> call =
        channel.newCall(ManagerServiceGrpc.getSubscribeMethod(), CallOptions.DEFAULT);
    CompletableFuture<Status> closed = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
          }
        },
        new Metadata());
    call.sendMessage(SubscribeRequest.getDefaultInstance());
    call.halfClose(); // and never call.request(n): no message is read
    await().atMost(Duration.ofSeconds(5)).until(() -> api.openStreams() == 1);
    for (int i = 0; i < 30; i++) {
      manager()
          .setConfig(SetConfigRequest.newBuilder().addUpdates(put(tap("t" + i), Map.of())).build());
    }
    assertThat(closed.get(10, TimeUnit.SECONDS).getCode())
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(api.openStreams()).isZero();
  }

  @Test
  @DisplayName(
      "a burst of status changes to a Subscribe stream keeps a few sending threads, not"
          + " one per change")
  void statusBurstStartsFewThreads() throws Exception {
    serve(null, new GrpcApi.Limits(100, 5_000));
    BlockingQueue<SubscribeResponse> got = new LinkedBlockingQueue<>();
    Context.CancellableContext ctx = Context.current().withCancellation();
    ctx.run(
        () ->
            ManagerServiceGrpc.newStub(channel)
                .subscribe(
                    SubscribeRequest.getDefaultInstance(),
                    new StreamObserver<>() {
                      @Override
                      public void onNext(SubscribeResponse r) {
                        got.add(r);
                      }

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {}
                    }));
    await().atMost(Duration.ofSeconds(5)).until(() -> api.openStreams() == 1);
    long before = streamThreads();
    SetConfigRequest.Builder burst = SetConfigRequest.newBuilder();
    for (int i = 0; i < 1000; i++) {
      burst.addUpdates(put(tap("burst" + i), Map.of()));
    }
    manager().setConfig(burst.build());
    // every value's change arrives (CONFIGURED is the last of each)
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                got.stream()
                        .flatMap(r -> r.getNotificationsList().stream())
                        .filter(n -> n.getStatus().getStatus().equals("CONFIGURED"))
                        .count()
                    == 1000);
    // idle threads of the stream executor live on for a while: their number is what the burst
    // started. Two drains of the stream at a time at most (one sending, one waiting); the pool
    // starts a thread more when a task comes as one finishes. One task per change started 16
    // to 30 threads in such bursts.
    assertThat(streamThreads() - before).isLessThanOrEqualTo(8);
    ctx.cancel(null);
  }

  /** The live threads that send the Subscribe streams' responses. */
  static long streamThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("kvs-grpc-stream"))
        .count();
  }

  static Notification linkNotification(String name, InterfaceState.Status oper) {
    return Notification.newBuilder()
        .setLinuxNotification(
            io.kvscheduler.grpc.proto.linux.Notification.newBuilder()
                .setInterface(
                    InterfaceNotification.newBuilder()
                        .setType(InterfaceNotification.NotifType.UPDOWN)
                        .setState(InterfaceState.newBuilder().setName(name).setOperStatus(oper))))
        .build();
  }

  @Test
  @DisplayName("Notify replays the buffer from idx, then follows live notifications, filtered")
  void notifyReplaysAndFollows() throws Exception {
    api.publish(linkNotification("veth1", InterfaceState.Status.UP));
    api.publish(linkNotification("veth2", InterfaceState.Status.DOWN));
    api.publish(linkNotification("veth3", InterfaceState.Status.UP));
    BlockingQueue<NotifyResponse> got = new LinkedBlockingQueue<>();
    Context.CancellableContext ctx = Context.current().withCancellation();
    Notification upOnly =
        Notification.newBuilder()
            .setLinuxNotification(
                io.kvscheduler.grpc.proto.linux.Notification.newBuilder()
                    .setInterface(
                        InterfaceNotification.newBuilder()
                            .setState(
                                InterfaceState.newBuilder()
                                    .setOperStatus(InterfaceState.Status.UP))))
            .build();
    ctx.run(
        () ->
            ConfiguratorServiceGrpc.newStub(channel)
                .notify(
                    NotifyRequest.newBuilder().setIdx(1).addFilters(upOnly).build(), collect(got)));
    NotifyResponse r = got.poll(5, TimeUnit.SECONDS);
    assertThat(r.getNextIdx()).isEqualTo(3);
    assertThat(r.getNotification().getLinuxNotification().getInterface().getState().getName())
        .isEqualTo("veth3");
    api.publish(linkNotification("veth4", InterfaceState.Status.DOWN));
    api.publish(linkNotification("veth5", InterfaceState.Status.UP));
    r = got.poll(5, TimeUnit.SECONDS);
    assertThat(r.getNextIdx()).isEqualTo(5);
    assertThat(r.getNotification().getLinuxNotification().getInterface().getState().getName())
        .isEqualTo("veth5");
    ctx.cancel(null);
  }

  @Test
  @DisplayName("without the Linux plugin, Notify stays open and idle")
  void notifyWithoutLinuxStaysOpenAndIdle() throws Exception {
    BlockingQueue<NotifyResponse> got = new LinkedBlockingQueue<>();
    Context.CancellableContext ctx = Context.current().withCancellation();
    ctx.run(
        () ->
            ConfiguratorServiceGrpc.newStub(channel)
                .notify(NotifyRequest.getDefaultInstance(), collect(got)));
    await().atMost(Duration.ofSeconds(5)).until(() -> api.openStreams() == 1);
    configurator()
        .update(
            UpdateRequest.newBuilder()
                .setUpdate(mockConfig(ConfigData.newBuilder().addInterfaces(tap("tap1"))))
                .build());
    assertThat(got.poll(300, TimeUnit.MILLISECONDS)).isNull();
    assertThat(api.openStreams()).isEqualTo(1);
    ctx.cancel(null);
    await().atMost(Duration.ofSeconds(5)).until(() -> api.openStreams() == 0);
  }

  private static <T> StreamObserver<T> collect(BlockingQueue<T> into) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T v) {
        into.add(v);
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    };
  }

  @Test
  @DisplayName(
      "D46 a Notify client that reads slowly holds no memory: it continues from the oldest kept")
  void slowNotifyClientSkipsToTheOldestKept() throws Exception {
    serve(null, new GrpcApi.Limits(100, 20));
    ClientCall<NotifyRequest, NotifyResponse> call =
        channel.newCall(ConfiguratorServiceGrpc.getNotifyMethod(), CallOptions.DEFAULT);
    BlockingQueue<NotifyResponse> got = new LinkedBlockingQueue<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(NotifyResponse message) {
            got.add(message);
          }
        },
        new Metadata());
    call.sendMessage(NotifyRequest.getDefaultInstance());
    call.halfClose();
    call.request(1);
    api.publish(linkNotification("first", InterfaceState.Status.UP));
    assertThat(got.poll(5, TimeUnit.SECONDS).getNextIdx()).isEqualTo(1);
    for (int i = 0; i < 1000; i++) {
      api.publish(linkNotification("n" + i, InterfaceState.Status.UP));
    }
    call.request(1);
    NotifyResponse next = got.poll(5, TimeUnit.SECONDS);
    assertThat(next.getNextIdx()).isEqualTo(1001 - 100 + 1); // the oldest of the last 100
    call.cancel("done", null);
  }

  @Test
  @DisplayName("a bearer token is required when set: UNAUTHENTICATED without it")
  void bearerTokenIsRequired() throws Exception {
    serve("s3cret", GrpcApi.Limits.DEFAULT);
    assertThatThrownBy(() -> configurator().get(GetRequest.getDefaultInstance()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.UNAUTHENTICATED));
    Metadata wrong = new Metadata();
    wrong.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer x");
    assertThatThrownBy(
            () ->
                configurator()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(wrong))
                    .get(GetRequest.getDefaultInstance()))
        .satisfies(e -> assertThat(code(e)).isEqualTo(Status.Code.UNAUTHENTICATED));
    Metadata right = new Metadata();
    right.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer s3cret");
    assertThat(
            configurator()
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(right))
                .get(GetRequest.getDefaultInstance())
                .hasConfig())
        .isTrue();
  }

  @Test
  @DisplayName("64 clients updating at once: every change applied exactly once")
  void concurrentUpdateStorm() throws Exception {
    int clients = 64;
    int perClient = 5;
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      int client = c;
      done.add(
          CompletableFuture.runAsync(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
                for (int i = 0; i < perClient; i++) {
                  configurator()
                      .update(
                          UpdateRequest.newBuilder()
                              .setUpdate(
                                  mockConfig(
                                      ConfigData.newBuilder()
                                          .addInterfaces(tap("c" + client + "-" + i))))
                              .build());
                }
              },
              pool));
    }
    go.countDown();
    CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    pool.shutdown();
    assertThat(mock.plugins().interfaces().southboundState()).hasSize(clients * perClient);
    Map<String, Long> creates =
        agent.scheduler().transactionHistory().stream()
            .flatMap(t -> t.executed().stream())
            .filter(op -> op.operation() == TxnOperation.CREATE && op.key().startsWith(TAP_KEY))
            .collect(Collectors.groupingBy(RecordedTxnOp::key, Collectors.counting()));
    assertThat(creates).hasSize(clients * perClient);
    assertThat(creates.values()).allMatch(n -> n == 1);
    assertThat(agent.northbound().desired()).hasSize(clients * perClient);
  }
}
