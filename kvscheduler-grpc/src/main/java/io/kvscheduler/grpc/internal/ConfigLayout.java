package io.kvscheduler.grpc.internal;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.grpc.proto.configurator.Config;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where each model's values sit in {@code ligato.configurator.Config}: a domain field ({@code
 * linux_config}, ..., or a plugin's own domain such as {@code mock_config = 100}, see {@link
 * PluginDomains}) and, in it, a field whose message type is the model's. Fields of type {@code
 * bytes} stand for domains this agent does not support (VPP, address allocation).
 */
final class ConfigLayout {
  /** A model's place: the domain field of Config and the field inside the domain message. */
  record Place(FieldDescriptor domain, FieldDescriptor field) {
    String path() {
      return domain.getName() + "." + field.getName();
    }
  }

  private final ProtoModels models;
  private final PluginDomains domains;
  private final Map<String, Place> byMessage = new HashMap<>();

  ConfigLayout(ProtoModels models, PluginDomains domains) {
    this.models = models;
    this.domains = domains;
    for (FieldDescriptor domain : domains.fields()) {
      for (FieldDescriptor f : domain.getMessageType().getFields()) {
        if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
          byMessage.put(f.getMessageType().getFullName(), new Place(domain, f));
        }
      }
    }
  }

  /** The place of {@code model}'s values, if Config has one. */
  Optional<Place> place(Model<?> model) {
    return models.descriptor(model).map(d -> byMessage.get(d.getFullName()));
  }

  /**
   * The values of {@code config} by key ({@code what} names the request field in errors).
   *
   * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT naming unknown fields, content of an
   *     unsupported domain, a message of no registered model, or a value the model refuses
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  Map<String, Object> values(Config request, String what) {
    Message config = domains.read(request);
    List<String> unknown = ProtoModels.unknownFields(config, what);
    if (!unknown.isEmpty()) {
      throw Calls.invalid(
          "the request has fields this agent does not know (are they of a"
              + " newer model version?): "
              + String.join(", ", unknown));
    }
    List<String> unsupported = new ArrayList<>();
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<FieldDescriptor, Object> d : config.getAllFields().entrySet()) {
      Message domain = (Message) d.getValue();
      for (Map.Entry<FieldDescriptor, Object> e : domain.getAllFields().entrySet()) {
        FieldDescriptor f = e.getKey();
        String path = what + "." + d.getKey().getName() + "." + f.getName();
        if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
          unsupported.add(path);
          continue;
        }
        List<?> items = f.isRepeated() ? (List<?>) e.getValue() : List.of(e.getValue());
        for (int i = 0; i < items.size(); i++) {
          Message m = (Message) items.get(i);
          String at = f.isRepeated() ? path + "[" + i + "]" : path;
          Descriptor type = m.getDescriptorForType();
          Model model =
              models
                  .modelForMessage(type.getFullName())
                  .orElseThrow(
                      () ->
                          Calls.invalid(
                              at
                                  + ": no registered model has values of "
                                  + type.getFullName()
                                  + " (is its plugin enabled?)"));
          try {
            Object value = models.toValue(model, m);
            out.put(model.key(value), value);
          } catch (ModelException ex) {
            throw Calls.invalid(at + ": " + ex.getMessage());
          }
        }
      }
    }
    if (!unsupported.isEmpty()) {
      throw Calls.invalid(
          "this agent has no VPP southbound and no address allocation;"
              + " not supported: "
              + String.join(", ", unsupported));
    }
    return out;
  }

  /** A Config holding {@code values} (by key) where their models have a place; others left out. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  Config config(Map<String, Object> values) {
    Map<FieldDescriptor, Message.Builder> byDomain = new LinkedHashMap<>();
    values.forEach(
        (key, value) -> {
          Optional<Model<?>> model = models.registry().forKey(key);
          Optional<Place> place = model.flatMap(this::place);
          if (place.isEmpty()) {
            return;
          }
          Message.Builder domain =
              byDomain.computeIfAbsent(
                  place.get().domain(), d -> DynamicMessage.newBuilder(d.getMessageType()));
          FieldDescriptor f = place.get().field();
          Message m = models.toMessage(value, domain.newBuilderForField(f));
          if (f.isRepeated()) {
            domain.addRepeatedField(f, m);
          } else {
            domain.setField(f, m);
          }
        });
    DynamicMessage.Builder config = DynamicMessage.newBuilder(domains.config());
    byDomain.forEach((field, domain) -> config.setField(field, domain.build()));
    return domains.write(config.build());
  }
}
