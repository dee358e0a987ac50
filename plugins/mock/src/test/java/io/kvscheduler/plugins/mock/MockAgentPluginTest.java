package io.kvscheduler.plugins.mock;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import io.kvscheduler.agent.spi.ConfigDomain;
import io.kvscheduler.agent.spi.Model;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What the mock plugins declare to the agent's transports: their proto files and their domain. */
class MockAgentPluginTest {
  final MockAgentPlugin plugin = new MockAgentPlugin();

  @Test
  @DisplayName("the domain is mock.ConfigData mock_config = 100, one list per mock model")
  void configDomain() {
    ConfigDomain domain = plugin.configDomain().orElseThrow();
    assertThat(domain.fieldNumber()).isEqualTo(100);
    assertThat(domain.fieldName()).isEqualTo("mock_config");
    assertThat(domain.configData().getFullName()).isEqualTo("mock.ConfigData");
    assertThat(domain.configData().getFields())
        .extracting(f -> f.getNumber() + " " + f.getName() + " " + f.getMessageType().getFullName())
        .containsExactly(
            "10 interfaces mock.interfaces.Interface",
            "20 bridge_domains mock.l2.BridgeDomain",
            "21 fibs mock.l2.FIBEntry");
    assertThat(domain.configData().getFields()).allMatch(FieldDescriptor::isRepeated);
    assertThat(MockModels.all())
        .extracting(Model::protoName)
        .containsExactlyInAnyOrder(
            "mock.interfaces.Interface", "mock.l2.BridgeDomain", "mock.l2.FIBEntry");
  }

  @Test
  @DisplayName("the proto files: model/mock.proto, importing the three models' files")
  void protoFiles() {
    assertThat(plugin.protoFiles())
        .extracting(FileDescriptor::getName)
        .containsExactly("model/mock.proto");
    assertThat(plugin.protoFiles().get(0).getDependencies())
        .extracting(FileDescriptor::getName)
        .containsExactly("model/interface.proto", "model/bridge-domain.proto", "model/fib.proto");
  }
}
