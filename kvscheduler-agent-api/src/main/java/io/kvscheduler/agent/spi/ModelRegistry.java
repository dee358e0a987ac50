package io.kvscheduler.agent.spi;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The models the agent knows, and their values' JSON through the {@link ModelJsonCodec} (where the
 * rules of reading and writing are described): a key or a value finds its model here, the codec
 * turns JSON into values of that model and back.
 *
 * <p>Thread-safe.
 */
public final class ModelRegistry {
  /**
   * Limits of the JSON text {@link #decode(String, String)} reads ({@link ModelJsonCodec#LIMITS}).
   */
  public static final StreamReadConstraints LIMITS = ModelJsonCodec.LIMITS;

  private final List<Model<?>> models = new CopyOnWriteArrayList<>();
  private final ModelJsonCodec codec = new ModelJsonCodec();

  /**
   * Registers a model.
   *
   * @throws IllegalArgumentException if a model of the same name is registered, or its key prefix
   *     overlaps another model's
   */
  public synchronized void register(Model<?> model) {
    for (Model<?> m : models) {
      if (m.name().equals(model.name())) {
        throw new IllegalArgumentException("model " + model.name() + " is already registered");
      }
      if (m.keyPrefix().startsWith(model.keyPrefix())
          || model.keyPrefix().startsWith(m.keyPrefix())) {
        throw new IllegalArgumentException(
            "key prefix "
                + model.keyPrefix()
                + " of model "
                + model.name()
                + " overlaps "
                + m.keyPrefix()
                + " of model "
                + m.name());
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
    Model m =
        forValue(value)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "no model for values of " + value.getClass().getName()));
    return m.key(value);
  }

  /** The JSON codec of the registered models' values. */
  public ModelJsonCodec codec() {
    return codec;
  }

  /**
   * Decodes the JSON text stored under {@code key}.
   *
   * @throws ModelException for a key of no model, malformed JSON, an unknown field or value, or a
   *     key that does not match the value
   */
  public Object decode(String key, String json) throws ModelException {
    Model<?> model = model(key);
    return codec.decode(model, key, codec.parse(key, json));
  }

  /**
   * Decodes a value already parsed (from JSON or YAML) given under {@code key}.
   *
   * @throws ModelException as {@link #decode(String, String)}
   */
  public Object decodeTree(String key, JsonNode tree) throws ModelException {
    return codec.decode(model(key), key, tree);
  }

  /**
   * Decodes a value of {@code model} (from the YAML configuration format, where the key is not
   * given); returns the value, whose key is {@link #keyOf(Object)}.
   */
  public Object decodeTree(Model<?> model, JsonNode tree) throws ModelException {
    return codec.decode(model, tree);
  }

  private Model<?> model(String key) throws ModelException {
    return forKey(key)
        .orElseThrow(
            () ->
                new ModelException(
                    key,
                    "no registered model has this"
                        + " key (known key prefixes: "
                        + models.stream().map(Model::keyPrefix).toList()
                        + ")"));
  }

  /** A value as one line of text for logs and transaction records ({@link ModelJsonCodec#text}). */
  public static String text(Object value) {
    return ModelJsonCodec.text(value);
  }

  /** Estimated bytes of a value ({@link ModelJsonCodec#sizeEstimate}). */
  public static long sizeEstimate(Object value) {
    return ModelJsonCodec.sizeEstimate(value);
  }

  /** Compact protobuf-style JSON of a value: snake_case names, defaults left out. */
  public String encode(Object value) {
    return codec.encode(value);
  }

  /**
   * A value as a JSON tree, defaults left out; field names in lowerCamelCase when {@code camel}
   * (the YAML configuration format), snake_case otherwise.
   */
  public JsonNode toTree(Object value, boolean camel) {
    return codec.toTree(value, camel);
  }
}
