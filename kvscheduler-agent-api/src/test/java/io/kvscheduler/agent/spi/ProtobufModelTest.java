package io.kvscheduler.agent.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Field;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Models whose values are protobuf messages go through protobuf's JSON mapping with no codec of
 * their own. {@code google.protobuf.Field} stands for any generated message: it has snake_case
 * fields, enums and repeated messages.
 */
class ProtobufModelTest {
  static final Model<Field> FIELD =
      Model.builder("test.proto", "v1", "field", Field.class)
          .name(Field::getName, "{{.Name}}")
          .build();

  private final ModelRegistry registry = new ModelRegistry();

  ProtobufModelTest() {
    registry.register(FIELD);
  }

  @Test
  void protoNameIsTheMessagesFullName() {
    assertThat(FIELD.protoName()).isEqualTo("google.protobuf.Field");
    assertThat(FIELD.keyPrefix()).isEqualTo("config/test/proto/v1/field/");
  }

  @Test
  void readsSnakeCaseAndLowerCamelCaseNamesAndEnumsByNameOrNumber() throws Exception {
    Object snake =
        registry.decode(
            "config/test/proto/v1/field/f1",
            "{\"name\":\"f1\",\"kind\":\"TYPE_STRING\",\"type_url\":\"t\",\"oneof_index\":2}");
    Object camel =
        registry.decode(
            "config/test/proto/v1/field/f1",
            "{\"name\":\"f1\",\"kind\":9,\"typeUrl\":\"t\",\"oneofIndex\":2}");
    Field expected =
        Field.newBuilder()
            .setName("f1")
            .setKind(Field.Kind.TYPE_STRING)
            .setTypeUrl("t")
            .setOneofIndex(2)
            .build();
    assertThat(snake).isEqualTo(expected);
    assertThat(camel).isEqualTo(expected);
  }

  @Test
  void writesSnakeCaseEnumsByNameAndNoDefaults() {
    Field f =
        Field.newBuilder().setName("f1").setKind(Field.Kind.TYPE_BOOL).setTypeUrl("t").build();
    assertThat(registry.encode(f))
        .isEqualTo("{\"kind\":\"TYPE_BOOL\",\"name\":\"f1\",\"type_url\":\"t\"}");
    assertThat(registry.toTree(f, true).toString())
        .isEqualTo("{\"kind\":\"TYPE_BOOL\",\"name\":\"f1\",\"typeUrl\":\"t\"}");
    assertThat(registry.keyOf(f)).isEqualTo("config/test/proto/v1/field/f1");
  }

  @Test
  void rejectsUnknownFieldsBadEnumsWrongTypesAndKeyMismatchNamingTheKey() {
    String key = "config/test/proto/v1/field/f1";
    assertThatThrownBy(() -> registry.decode(key, "{\"name\":\"f1\",\"colour\":1}"))
        .isInstanceOf(ModelException.class)
        .hasMessageStartingWith(key + ": cannot decode google.protobuf.Field")
        .hasMessageContaining("colour");
    assertThatThrownBy(() -> registry.decode(key, "{\"name\":\"f1\",\"kind\":\"NO_SUCH\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("NO_SUCH");
    assertThatThrownBy(() -> registry.decode(key, "{\"name\":\"f1\",\"number\":\"x\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("field 'number'")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("number"));
    assertThatThrownBy(() -> registry.decode(key, "{\"name\":\"f2\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("key does not match the key computed from the value");
    assertThatThrownBy(() -> registry.decode(key, "[1]"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("must be a JSON object");
  }

  @Test
  void logTextOfAMessageIsOneLine() {
    Field f = Field.newBuilder().setName("f1").setKind(Field.Kind.TYPE_BOOL).build();
    assertThat(ModelRegistry.text(f)).isEqualTo("kind: TYPE_BOOL name: \"f1\"");
    assertThat(ModelRegistry.text(List.of(1))).isEqualTo("[1]");
  }
}
