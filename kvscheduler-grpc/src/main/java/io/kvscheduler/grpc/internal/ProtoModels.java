package io.kvscheduler.grpc.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.grpc.proto.configurator.Config;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The protobuf side of the registered models: the message definition of each model (found by its
 * proto name among the wire contract's definitions, the plugins' proto files and those of models
 * whose values are protobuf messages), and the conversion between messages and the values the
 * registry holds. A value that is a protobuf message of the model's class is taken as is; a value
 * of another class (a record) goes through protobuf JSON: {@link JsonFormat} on the message side,
 * the registry's codec on the value side, so both agree on field names and enum spellings.
 */
public final class ProtoModels {
  /** The type URL prefix of the values this agent packs into {@code google.protobuf.Any}. */
  public static final String TYPE_URL_PREFIX = "models.ligato.io/";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonFormat.Printer PRINTER =
      JsonFormat.printer().preservingProtoFieldNames().omittingInsignificantWhitespace();
  private static final JsonFormat.Parser PARSER = JsonFormat.parser();

  private final ModelRegistry registry;
  private final Map<String, Descriptor> messages = new LinkedHashMap<>();
  private final Map<String, FileDescriptor> files = new LinkedHashMap<>();
  private final Map<Model<?>, Optional<Descriptor>> byModel = new ConcurrentHashMap<>();

  /**
   * @param registry the agent's models
   * @param extraFiles proto files of models beyond the wire contract's (the plugins')
   */
  public ProtoModels(ModelRegistry registry, List<FileDescriptor> extraFiles) {
    this.registry = registry;
    addFile(Config.getDescriptor().getFile());
    extraFiles.forEach(this::addFile);
  }

  private synchronized void addFile(FileDescriptor file) {
    if (files.putIfAbsent(file.getName(), file) != null) {
      return;
    }
    file.getDependencies().forEach(this::addFile);
    file.getMessageTypes().forEach(this::addMessage);
  }

  private void addMessage(Descriptor d) {
    messages.putIfAbsent(d.getFullName(), d);
    d.getNestedTypes().forEach(this::addMessage);
  }

  /** The registry. */
  public ModelRegistry registry() {
    return registry;
  }

  /** The message definition of {@code model}'s values, if known. */
  public Optional<Descriptor> descriptor(Model<?> model) {
    return byModel.computeIfAbsent(model, this::find);
  }

  private Optional<Descriptor> find(Model<?> model) {
    if (Message.class.isAssignableFrom(model.valueClass())) {
      try {
        Descriptor d = (Descriptor) model.valueClass().getMethod("getDescriptor").invoke(null);
        addFile(d.getFile());
        return Optional.of(d);
      } catch (ReflectiveOperationException | ClassCastException e) {
        // a message class without the generated static accessor: look the name up instead
      }
    }
    synchronized (this) {
      return Optional.ofNullable(messages.get(model.protoName()));
    }
  }

  /** The proto file named {@code name} that defines some registered model's messages. */
  public Optional<FileDescriptor> modelFile(String name) {
    for (Model<?> m : registry.models()) {
      Optional<Descriptor> d = descriptor(m);
      if (d.isPresent() && d.get().getFile().getName().equals(name)) {
        return Optional.of(d.get().getFile());
      }
    }
    return Optional.empty();
  }

  /** The registered model whose values are messages named {@code protoName}. */
  public Optional<Model<?>> modelForMessage(String protoName) {
    for (Model<?> m : registry.models()) {
      if (descriptor(m).map(d -> d.getFullName().equals(protoName)).orElse(false)) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  /** The registered model named {@code name} (e.g. {@code mock.interfaces}). */
  public Optional<Model<?>> model(String name) {
    return registry.models().stream().filter(m -> m.name().equals(name)).findFirst();
  }

  /**
   * The value of {@code model} that {@code message} (a message of the model's definition) stands
   * for.
   *
   * @throws ModelException when the registry's codec refuses it (its message names the field)
   */
  public Object toValue(Model<?> model, Message message) throws ModelException {
    Class<?> type = model.valueClass();
    if (type.isInstance(message)) {
      return message;
    }
    if (Message.class.isAssignableFrom(type)) {
      try {
        return type.getMethod("parseFrom", ByteString.class).invoke(null, message.toByteString());
      } catch (ReflectiveOperationException e) {
        throw new ModelException(
            model.keyPrefix(), "cannot read " + model.protoName() + ": " + e.getMessage(), e);
      }
    }
    JsonNode tree;
    try {
      tree = JSON.readTree(PRINTER.print(message));
    } catch (InvalidProtocolBufferException | JsonProcessingException e) {
      throw new ModelException(
          model.keyPrefix(), "cannot read " + model.protoName() + ": " + e.getMessage(), e);
    }
    return registry.decodeTree(model, tree);
  }

  /** {@code value} as a message built by {@code builder} (a builder of the model's message). */
  public Message toMessage(Object value, Message.Builder builder) {
    if (value instanceof Message m) {
      if (builder.getDescriptorForType().equals(m.getDescriptorForType())
          && builder.getDefaultInstanceForType().getClass().isInstance(m)) {
        return m;
      }
      try {
        return builder.mergeFrom(m.toByteString()).build();
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalStateException(
            "cannot convert " + m.getDescriptorForType().getFullName(), e);
      }
    }
    try {
      PARSER.merge(registry.encode(value), builder);
      return builder.build();
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(
          "the value "
              + value
              + " does not fit its message "
              + builder.getDescriptorForType().getFullName()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** {@code value} of {@code model} as a (dynamic) message of its definition. */
  public Optional<Message> toMessage(Model<?> model, Object value) {
    return descriptor(model).map(d -> toMessage(value, DynamicMessage.newBuilder(d)));
  }

  /** {@code value} packed into an {@code Any} with the agent's type URL. */
  public Optional<Any> toAny(Model<?> model, Object value) {
    return toMessage(model, value)
        .map(
            m ->
                Any.newBuilder()
                    .setTypeUrl(TYPE_URL_PREFIX + m.getDescriptorForType().getFullName())
                    .setValue(m.toByteString())
                    .build());
  }

  /** The full message name of an {@code Any}'s type URL (the part after the last {@code /}). */
  public static String typeName(Any any) {
    String url = any.getTypeUrl();
    return url.substring(url.lastIndexOf('/') + 1);
  }

  /**
   * The fields of {@code message} (recursively) that this agent's definitions do not know, as
   * {@code path (field N of Message)}; empty when there is none.
   */
  public static List<String> unknownFields(Message message, String path) {
    List<String> out = new ArrayList<>();
    collectUnknown(message, path, out);
    return out;
  }

  private static void collectUnknown(Message message, String path, List<String> out) {
    String name = message.getDescriptorForType().getFullName();
    message
        .getUnknownFields()
        .asMap()
        .keySet()
        .forEach(n -> out.add((path.isEmpty() ? "" : path + ": ") + "field " + n + " of " + name));
    for (Map.Entry<FieldDescriptor, Object> e : message.getAllFields().entrySet()) {
      FieldDescriptor f = e.getKey();
      if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
        continue;
      }
      String at = (path.isEmpty() ? "" : path + ".") + f.getName();
      if (f.isRepeated()) {
        List<?> items = (List<?>) e.getValue();
        for (int i = 0; i < items.size(); i++) {
          if (items.get(i) instanceof Message m) {
            collectUnknown(m, at + "[" + i + "]", out);
          }
        }
      } else if (e.getValue() instanceof Message m) {
        collectUnknown(m, at, out);
      }
    }
  }
}
