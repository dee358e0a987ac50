package io.kvscheduler.agent.spi;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The models the agent knows, and the JSON codec of their values, compatible with vpp-agent's
 * protobuf JSON:
 *
 * <ul>
 *   <li>written with snake_case field names, enums by name, default values left out;
 *   <li>read accepting snake_case or lowerCamelCase names and enums by name or number; an unknown
 *       field is rejected naming the field and the known ones;
 *   <li>a value whose computed key differs from the key it was given under is rejected.
 * </ul>
 *
 * Thread-safe.
 */
public final class ModelRegistry {
  private final List<Model<?>> models = new CopyOnWriteArrayList<>();
  private final ObjectMapper mapper = new ObjectMapper()
      .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
      .setDefaultPropertyInclusion(JsonInclude.Include.NON_DEFAULT)
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .disable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS);

  /**
   * Registers a model.
   *
   * @throws IllegalArgumentException if a model of the same name is registered, or its key
   *     prefix overlaps another model's
   */
  public synchronized void register(Model<?> model) {
    for (Model<?> m : models) {
      if (m.name().equals(model.name())) {
        throw new IllegalArgumentException("model " + model.name() + " is already registered");
      }
      if (m.keyPrefix().startsWith(model.keyPrefix()) || model.keyPrefix().startsWith(m.keyPrefix())) {
        throw new IllegalArgumentException("key prefix " + model.keyPrefix() + " of model "
            + model.name() + " overlaps " + m.keyPrefix() + " of model " + m.name());
      }
    }
    models.add(model);
  }

  /** Every registered model, in registration order. */
  public List<Model<?>> models() {
    return List.copyOf(models);
  }

  /** The model a key belongs to. */
  public Optional<Model<?>> forKey(String key) {
    for (Model<?> m : models) {
      if (m.isKey(key)) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  /** The model of a value class. */
  public Optional<Model<?>> forValue(Object value) {
    for (Model<?> m : models) {
      if (m.valueClass().isInstance(value)) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  /** The key of {@code value}, computed by its model. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public String keyOf(Object value) {
    Model m = forValue(value).orElseThrow(() ->
        new IllegalArgumentException("no model for values of " + value.getClass().getName()));
    return m.key(value);
  }

  /**
   * Decodes the JSON text stored under {@code key}.
   *
   * @throws ModelException for a key of no model, malformed JSON, an unknown field or value, or a
   *     key that does not match the value
   */
  public Object decode(String key, String json) throws ModelException {
    Model<?> model = model(key);
    JsonNode tree;
    try {
      tree = mapper.readTree(json);
    } catch (JsonProcessingException e) {
      JsonLocation loc = e.getLocation();
      throw new ModelException(key, "malformed JSON"
          + (loc != null ? " at line " + loc.getLineNr() + ", column " + loc.getColumnNr() : "")
          + ": " + e.getOriginalMessage(), e);
    }
    return decodeTree(model, key, tree);
  }

  /**
   * Decodes a value already parsed (from JSON or YAML) given under {@code key}.
   *
   * @throws ModelException as {@link #decode(String, String)}
   */
  public Object decodeTree(String key, JsonNode tree) throws ModelException {
    return decodeTree(model(key), key, tree);
  }

  /**
   * Decodes a value of {@code model} (from the YAML configuration format, where the key is not
   * given); returns the value, whose key is {@link #keyOf(Object)}.
   */
  public Object decodeTree(Model<?> model, JsonNode tree) throws ModelException {
    return bind(model, model.keyPrefix() + "…", tree);
  }

  private Model<?> model(String key) throws ModelException {
    return forKey(key).orElseThrow(() -> new ModelException(key, "no registered model has this"
        + " key (known key prefixes: " + models.stream().map(Model::keyPrefix).toList() + ")"));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private Object decodeTree(Model<?> model, String key, JsonNode tree) throws ModelException {
    Object value = bind(model, key, tree);
    String computed = ((Model) model).key(value);
    if (!computed.equals(key)) {
      throw new ModelException(key,
          "key does not match the key computed from the value: " + computed);
    }
    return value;
  }

  private Object bind(Model<?> model, String key, JsonNode tree) throws ModelException {
    if (tree == null || !tree.isObject()) {
      throw new ModelException(key, "value of model " + model.name() + " must be a JSON object, got "
          + (tree == null ? "nothing" : tree.getNodeType().toString().toLowerCase()));
    }
    try {
      return mapper.treeToValue(snakeCase(tree), model.valueClass());
    } catch (UnrecognizedPropertyException e) {
      List<String> known = new ArrayList<>();
      Collection<Object> ids = e.getKnownPropertyIds();
      if (ids != null) {
        ids.forEach(id -> known.add(String.valueOf(id)));
      }
      throw new ModelException(key, "unknown field '" + e.getPropertyName() + "' in "
          + model.protoName() + " (known fields: " + String.join(", ", known) + ")", e);
    } catch (InvalidFormatException e) {
      throw new ModelException(key, "invalid value " + e.getValue() + " for field '"
          + path(e) + "' of " + model.protoName(), e);
    } catch (MismatchedInputException e) {
      throw new ModelException(key, "wrong type for field '" + path(e) + "' of "
          + model.protoName() + ": " + e.getOriginalMessage(), e);
    } catch (JsonProcessingException e) {
      throw new ModelException(key, "cannot decode " + model.protoName() + ": "
          + e.getOriginalMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new ModelException(key, "cannot decode " + model.protoName() + ": " + e.getMessage(), e);
    }
  }

  private static String path(MismatchedInputException e) {
    StringBuilder sb = new StringBuilder();
    e.getPath().forEach(ref -> {
      if (ref.getFieldName() != null) {
        if (sb.length() > 0) {
          sb.append('.');
        }
        sb.append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        sb.append('[').append(ref.getIndex()).append(']');
      }
    });
    return sb.toString();
  }

  /** Compact protobuf-style JSON of a value: snake_case names, defaults left out. */
  public String encode(Object value) {
    try {
      return mapper.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot encode " + value.getClass().getName(), e);
    }
  }

  /**
   * A value as a JSON tree, defaults left out; field names in lowerCamelCase when {@code camel}
   * (the YAML configuration format), snake_case otherwise.
   */
  public JsonNode toTree(Object value, boolean camel) {
    JsonNode tree = mapper.valueToTree(value);
    return camel ? camelCase(tree) : tree;
  }

  static JsonNode snakeCase(JsonNode node) {
    return rename(node, ModelRegistry::toSnake);
  }

  static JsonNode camelCase(JsonNode node) {
    return rename(node, ModelRegistry::toCamel);
  }

  private static JsonNode rename(JsonNode node, java.util.function.UnaryOperator<String> f) {
    if (node.isObject()) {
      ObjectNode out = ((ObjectNode) node).objectNode();
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        out.set(f.apply(e.getKey()), rename(e.getValue(), f));
      }
      return out;
    }
    if (node.isArray()) {
      ArrayNode out = ((ArrayNode) node).arrayNode();
      node.forEach(n -> out.add(rename(n, f)));
      return out;
    }
    return node;
  }

  static String toSnake(String name) {
    StringBuilder sb = new StringBuilder(name.length() + 4);
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isUpperCase(c)) {
        if (i > 0) {
          sb.append('_');
        }
        sb.append(Character.toLowerCase(c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  static String toCamel(String name) {
    StringBuilder sb = new StringBuilder(name.length());
    boolean up = false;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '_' && i > 0) {
        up = true;
      } else {
        sb.append(up ? Character.toUpperCase(c) : c);
        up = false;
      }
    }
    return sb.toString();
  }
}
