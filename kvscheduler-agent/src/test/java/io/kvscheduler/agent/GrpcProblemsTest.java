package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.kvscheduler.agent.internal.northbound.NorthboundProblems;
import io.kvscheduler.grpc.proto.configurator.Config;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A configuration refused over gRPC is a northbound problem of source grpc until one is taken. */
class GrpcProblemsTest {
  @Test
  @DisplayName(
      "an Update refused as INVALID_ARGUMENT is listed (source grpc, the method and the cause);"
          + " the next accepted Update clears it")
  void refusedUpdateIsListedUntilOneIsAccepted() throws Exception {
    try (Agent agent =
        Agent.start(
            AgentConfig.load(
                List.of("--grpc", "127.0.0.1:0", "--rest", "off", "--quiet"), Map.of()))) {
      ManagedChannel ch =
          Grpc.newChannelBuilderForAddress(
                  "127.0.0.1",
                  GrpcTransportTest.grpcPort(agent),
                  InsecureChannelCredentials.create())
              .build();
      try {
        var stub =
            ConfiguratorServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
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
                () -> stub.update(UpdateRequest.newBuilder().setUpdate(unknownDomain).build()))
            .satisfies(
                e ->
                    assertThat(Status.fromThrowable(e).getCode())
                        .isEqualTo(Status.Code.INVALID_ARGUMENT));
        List<NorthboundProblems.Problem> listed = agent.problems().list();
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).source()).isEqualTo("grpc");
        assertThat(listed.get(0).message())
            .contains("Update was refused", "field 7 of ligato.configurator.Config");
        assertThat(agent.problems().count("grpc")).isEqualTo(1);

        stub.update(UpdateRequest.newBuilder().setUpdate(Config.getDefaultInstance()).build());
        assertThat(agent.problems().list()).isEmpty();
      } finally {
        ch.shutdownNow();
      }
    }
  }
}
