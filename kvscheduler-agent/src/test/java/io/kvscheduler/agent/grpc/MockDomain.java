package io.kvscheduler.agent.grpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.kvscheduler.grpc.proto.configurator.Config;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.proto.ConfigData;

/**
 * The mock plugins' domain of the configurator's Config ({@code mock.ConfigData mock_config = 100})
 * as a client writes and reads it: the wire contract's Config does not declare the field, so it
 * travels as field 100 of Config's unknown fields, with {@link ConfigData}'s bytes.
 */
public final class MockDomain {
  private MockDomain() {}

  /** A Config holding only {@code data} in the mock domain. */
  public static Config config(ConfigData.Builder data) {
    return with(Config.newBuilder(), data).build();
  }

  /** {@code config} with {@code data} added in the mock domain. */
  public static Config.Builder with(Config.Builder config, ConfigData.Builder data) {
    return config.mergeUnknownFields(
        UnknownFieldSet.newBuilder()
            .addField(
                MockAgentPlugin.CONFIG_FIELD,
                UnknownFieldSet.Field.newBuilder()
                    .addLengthDelimited(data.build().toByteString())
                    .build())
            .build());
  }

  /** The mock domain of {@code config} (empty when it has none). */
  public static ConfigData of(Config config) {
    ConfigData.Builder data = ConfigData.newBuilder();
    UnknownFieldSet.Field field = config.getUnknownFields().getField(MockAgentPlugin.CONFIG_FIELD);
    try {
      for (var bytes : field.getLengthDelimitedList()) {
        data.mergeFrom(bytes);
      }
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError(
          "field " + MockAgentPlugin.CONFIG_FIELD + " is no mock.ConfigData", e);
    }
    return data.build();
  }
}
