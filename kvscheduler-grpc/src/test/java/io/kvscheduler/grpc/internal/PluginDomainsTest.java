package io.kvscheduler.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.UnknownFieldSet;
import io.grpc.Status;
import io.kvscheduler.agent.spi.ConfigDomain;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.grpc.proto.configurator.Config;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A plugin's own domain of the configurator's Config, declared through the SPI: read from requests,
 * written into answers at the plugin's field number, described with Config for reflection. The
 * plugin here is a test one, its messages built at run time: the gRPC module knows no plugin.
 */
class PluginDomainsTest {
  /** A value of the test plugin's model. */
  record Thing(String name, int size) {}

  static final int FIELD = 200;

  /** {@code test/thing.proto}: message Thing, and the domain {@code test.ConfigData}. */
  static final FileDescriptor THING_FILE = thingFile();

  static final Descriptor THING = THING_FILE.findMessageTypeByName("Thing");
  static final Descriptor CONFIG_DATA = THING_FILE.findMessageTypeByName("ConfigData");
  static final ConfigDomain DOMAIN = new ConfigDomain("things_config", FIELD, CONFIG_DATA);

  static final Model<Thing> MODEL =
      Model.builder("test", "v1", "things", Thing.class)
          .protoName("test.Thing")
          .name(Thing::name, "{{.Name}}")
          .build();

  private static FileDescriptor thingFile() {
    FieldDescriptorProto.Builder string =
        FieldDescriptorProto.newBuilder()
            .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL)
            .setType(FieldDescriptorProto.Type.TYPE_STRING);
    FileDescriptorProto proto =
        FileDescriptorProto.newBuilder()
            .setName("test/thing.proto")
            .setPackage("test")
            .setSyntax("proto3")
            .addMessageType(
                DescriptorProto.newBuilder()
                    .setName("Thing")
                    .addField(string.clone().setName("name").setNumber(1))
                    .addField(
                        string
                            .clone()
                            .setName("size")
                            .setNumber(2)
                            .setType(FieldDescriptorProto.Type.TYPE_INT32)))
            .addMessageType(
                DescriptorProto.newBuilder()
                    .setName("ConfigData")
                    .addField(
                        FieldDescriptorProto.newBuilder()
                            .setName("things")
                            .setNumber(10)
                            .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED)
                            .setType(FieldDescriptorProto.Type.TYPE_MESSAGE)
                            .setTypeName(".test.Thing")))
            .build();
    try {
      return FileDescriptor.buildFrom(proto, new FileDescriptor[0]);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static ConfigLayout layout(List<ConfigDomain> domains) {
    ModelRegistry registry = new ModelRegistry();
    registry.register(MODEL);
    return new ConfigLayout(
        new ProtoModels(registry, List.of(THING_FILE)), new PluginDomains(domains));
  }

  /** The test domain's message holding {@code things}, as a client sends it. */
  static ByteString domainBytes(Map<String, Integer> things) {
    DynamicMessage.Builder data = DynamicMessage.newBuilder(CONFIG_DATA);
    FieldDescriptor list = CONFIG_DATA.findFieldByName("things");
    things.forEach(
        (name, size) ->
            data.addRepeatedField(
                list,
                DynamicMessage.newBuilder(THING)
                    .setField(THING.findFieldByName("name"), name)
                    .setField(THING.findFieldByName("size"), size)
                    .build()));
    return data.build().toByteString();
  }

  /** A Config with {@code domain} at field {@value #FIELD}, as a client that knows it sends it. */
  static Config configWith(ByteString domain) {
    return Config.newBuilder()
        .setUnknownFields(
            UnknownFieldSet.newBuilder()
                .addField(
                    FIELD, UnknownFieldSet.Field.newBuilder().addLengthDelimited(domain).build())
                .build())
        .build();
  }

  @Test
  @DisplayName("a request's plugin domain (an unknown field of Config) gives the plugin's values")
  void readsThePluginDomain() {
    Map<String, Integer> things = new LinkedHashMap<>();
    things.put("a", 1);
    things.put("b", 2);
    Map<String, Object> values =
        layout(List.of(DOMAIN)).values(configWith(domainBytes(things)), "update");
    assertThat(values)
        .containsExactly(
            Map.entry("config/test/v1/things/a", new Thing("a", 1)),
            Map.entry("config/test/v1/things/b", new Thing("b", 2)));
  }

  @Test
  @DisplayName("answers carry a plugin's values at its field number, with its message's bytes")
  void writesThePluginDomain() {
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("config/test/v1/things/a", new Thing("a", 1));
    values.put("config/test/v1/things/b", new Thing("b", 2));
    Config answer = layout(List.of(DOMAIN)).config(values);
    Map<String, Integer> things = new LinkedHashMap<>();
    things.put("a", 1);
    things.put("b", 2);
    assertThat(answer).isEqualTo(configWith(domainBytes(things)));
    assertThat(answer.getUnknownFields().getField(FIELD).getLengthDelimitedList()).hasSize(1);
    assertThat(answer.getAllFields()).isEmpty(); // none of ligato's domains
  }

  @Test
  @DisplayName("without the plugin's domain its field stays an unknown field, refused by name")
  void withoutTheDomainTheFieldIsRefused() {
    assertThatThrownBy(
            () -> layout(List.of()).values(configWith(domainBytes(Map.of("a", 1))), "update"))
        .satisfies(
            e -> {
              Status s = Status.fromThrowable(e);
              assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(s.getDescription())
                  .contains("update: field " + FIELD + " of ligato.configurator.Config");
            });
  }

  @Test
  @DisplayName("a field unknown inside a plugin's domain is refused with its path")
  void unknownFieldInsideTheDomain() {
    ByteString withUnknown =
        domainBytes(Map.of("a", 1))
            .concat(
                UnknownFieldSet.newBuilder()
                    .addField(77, UnknownFieldSet.Field.newBuilder().addVarint(5).build())
                    .build()
                    .toByteString());
    assertThatThrownBy(() -> layout(List.of(DOMAIN)).values(configWith(withUnknown), "update"))
        .satisfies(
            e ->
                assertThat(Status.fromThrowable(e).getDescription())
                    .contains("update.things_config: field 77 of test.ConfigData"));
  }

  @Test
  @DisplayName("Config for reflection declares the plugin's field and imports its file")
  void describedConfig() {
    PluginDomains domains = new PluginDomains(List.of(DOMAIN));
    FileDescriptor file = domains.file();
    assertThat(file.getName()).isEqualTo("ligato/configurator/configurator.proto");
    assertThat(file.getDependencies()).contains(THING_FILE);
    FieldDescriptor f = domains.config().findFieldByNumber(FIELD);
    assertThat(f.getName()).isEqualTo("things_config");
    assertThat(f.getMessageType()).isSameAs(CONFIG_DATA);
    assertThat(domains.config().findFieldByName("linux_config").getNumber()).isEqualTo(2);
    assertThat(file.findServiceByName("ConfiguratorService")).isNotNull();
    assertThat(new PluginDomains(List.of()).file()).isSameAs(Config.getDescriptor().getFile());
  }

  @Test
  @DisplayName("a domain at a number or name Config (or another domain) has is refused")
  void takenFieldsAreRefused() {
    assertThatThrownBy(() -> new PluginDomains(List.of(new ConfigDomain("things", 2, CONFIG_DATA))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("field number 2")
        .hasMessageContaining("taken by linux_config");
    assertThatThrownBy(
            () ->
                new PluginDomains(
                    List.of(DOMAIN, new ConfigDomain("other_config", FIELD, CONFIG_DATA))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("taken by things_config");
    assertThatThrownBy(
            () -> new PluginDomains(List.of(new ConfigDomain("vpp_config", 300, CONFIG_DATA))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has a field of that name (number 1)");
    assertThatThrownBy(() -> new ConfigDomain("x", 19500, CONFIG_DATA))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("field number 19500");
  }
}
