package io.kvscheduler.agent.spi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Descriptors;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import java.lang.reflect.Method;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The JSON codec of models whose values are protobuf messages, built on protobuf-java-util's {@link
 * JsonFormat}: it reads snake_case and lowerCamelCase field names, enums by name or number, rejects
 * unknown fields; it writes snake_case names (or lowerCamelCase for the YAML format), enums by
 * name, default values left out.
 */
final class ProtoJson {
  private static final JsonFormat.Parser PARSER = JsonFormat.parser();
  private static final JsonFormat.Printer SNAKE =
      JsonFormat.printer().preservingProtoFieldNames().omittingInsignificantWhitespace();
  private static final JsonFormat.Printer CAMEL =
      JsonFormat.printer().omittingInsignificantWhitespace();

  private ProtoJson() {}

  /** Whether values of {@code type} are protobuf messages. */
  static boolean isMessage(Class<?> type) {
    return Message.class.isAssignableFrom(type);
  }

  /** The full proto name of a generated message class ({@code ligato.linux.l3.Route}). */
  static String fullName(Class<?> type) {
    try {
      Method m = type.getMethod("getDescriptor");
      return ((Descriptors.Descriptor) m.invoke(null)).getFullName();
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new IllegalArgumentException(
          type.getName() + " is not a generated protobuf message", e);
    }
  }

  /** A fresh builder of the message class {@code type}. */
  private static Message.Builder builder(Class<?> type) {
    try {
      return (Message.Builder) type.getMethod("newBuilder").invoke(null);
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new IllegalArgumentException(
          type.getName() + " is not a generated protobuf message", e);
    }
  }

  /**
   * Decodes {@code json} (the text of an object) into a message of {@code type}.
   *
   * @throws ModelException naming the key and the cause given by the parser
   */
  static Object decode(Model<?> model, String key, JsonNode tree) throws ModelException {
    Message.Builder b = builder(model.valueClass());
    try {
      PARSER.merge(tree.toString(), b);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      String field = faultyField(model.valueClass(), tree);
      throw new ModelException(
          key,
          "cannot decode "
              + model.protoName()
              + (field == null ? "" : ", field '" + field + "'")
              + ": "
              + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()),
          e,
          field == null ? List.of() : List.of(field));
    }
    return b.build();
  }

  /**
   * The first top-level field of {@code tree} that cannot be read on its own (the parser's messages
   * do not always name it), or null when each can.
   */
  private static String faultyField(Class<?> type, JsonNode tree) {
    for (Iterator<Map.Entry<String, JsonNode>> it = tree.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      ObjectNode one = JsonNodeFactory.instance.objectNode();
      one.set(e.getKey(), e.getValue());
      try {
        PARSER.merge(one.toString(), builder(type));
      } catch (InvalidProtocolBufferException | RuntimeException ex) {
        return e.getKey();
      }
    }
    return null;
  }

  /** A message as compact JSON with snake_case names. */
  static String encode(Message m) {
    try {
      return SNAKE.print(m);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(
          "cannot encode " + m.getDescriptorForType().getFullName(), e);
    }
  }

  /** A message as a JSON tree, lowerCamelCase names when {@code camel}, snake_case otherwise. */
  static JsonNode toTree(ObjectMapper mapper, Message m, boolean camel) {
    try {
      return mapper.readTree((camel ? CAMEL : SNAKE).print(m));
    } catch (InvalidProtocolBufferException | JsonProcessingException e) {
      throw new IllegalArgumentException(
          "cannot encode " + m.getDescriptorForType().getFullName(), e);
    }
  }
}
