package io.kvscheduler.agent.spi;

import java.util.Objects;
import java.util.function.Function;

/**
 * A model: a kind of NB value with its key layout, as vpp-agent's models define them. The key of a
 * value is {@code keyPrefix + name(value)}; the key prefix is {@code <class>/<module with . as
 * />/<version>/<type with . as />/}.
 *
 * <p>Value classes are Java records (or classes Jackson can bind) whose component names are the
 * lowerCamelCase forms of the proto field names; enums must declare their constants in proto number
 * order (the JSON codec accepts enum numbers as ordinals).
 *
 * <p>Value classes may also be generated protobuf messages: their proto name is then the message's
 * full name, and the registry encodes them with protobuf's own JSON mapping.
 *
 * @param <V> the value class
 */
public final class Model<V> {
  private final String module;
  private final String version;
  private final String type;
  private final String modelClass;
  private final String protoName;
  private final Class<V> valueClass;
  private final Function<? super V, String> nameFunction;
  private final String nameTemplate;
  private final String yamlField;

  /** The key prefix, made once: every key read from a northbound is matched against it. */
  private final String keyPrefix;

  private Model(Builder<V> b) {
    this.module = b.module;
    this.version = b.version;
    this.type = b.type;
    this.modelClass = b.modelClass;
    this.protoName = b.protoName;
    this.valueClass = b.valueClass;
    this.nameFunction = b.nameFunction;
    this.nameTemplate = b.nameTemplate;
    this.yamlField =
        b.yamlField != null
            ? b.yamlField
            : simpleName(protoName) + (nameFunction != null ? "_list" : "");
    String p =
        modelClass + "/" + module.replace('.', '/') + "/" + version + "/" + type.replace('.', '/');
    this.keyPrefix = named() ? p + "/" : p;
  }

  /** Starts a model of {@code module}, {@code version} and {@code type} for values of a class. */
  public static <V> Builder<V> builder(
      String module, String version, String type, Class<V> valueClass) {
    return new Builder<>(module, version, type, valueClass);
  }

  /** Model name: {@code module.type}, e.g. {@code mock.interfaces}. */
  public String name() {
    return module + "." + type;
  }

  public String module() {
    return module;
  }

  public String version() {
    return version;
  }

  public String type() {
    return type;
  }

  /** The model class, {@code config} for configuration models. */
  public String modelClass() {
    return modelClass;
  }

  /** The proto message name, e.g. {@code mock.interfaces.Interface}. */
  public String protoName() {
    return protoName;
  }

  public Class<V> valueClass() {
    return valueClass;
  }

  /** Whether instances have a name (a list in the YAML format) or the model is a singleton. */
  public boolean named() {
    return nameFunction != null;
  }

  /** The name template as documentation, e.g. {@code {{.Name}}}. */
  public String nameTemplate() {
    return nameTemplate;
  }

  /** The key prefix: with a trailing {@code /} for named models, the whole key for singletons. */
  public String keyPrefix() {
    return keyPrefix;
  }

  /** Group of the YAML configuration format: first module segment + {@code Config}. */
  public String yamlGroup() {
    int dot = module.indexOf('.');
    return (dot < 0 ? module : module.substring(0, dot)) + "Config";
  }

  /** Field of the model within its YAML group, e.g. {@code Interface_list}. */
  public String yamlField() {
    return yamlField;
  }

  /** The instance name of {@code value}. */
  public String instanceName(V value) {
    return named() ? nameFunction.apply(value) : "";
  }

  /** The key of {@code value}. */
  public String key(V value) {
    return named() ? keyPrefix() + instanceName(value) : keyPrefix();
  }

  /** Whether {@code key} belongs to this model (its prefix and a non-empty name). */
  public boolean isKey(String key) {
    String p = keyPrefix();
    return named() ? key.length() > p.length() && key.startsWith(p) : key.equals(p);
  }

  @Override
  public String toString() {
    return name() + " (" + protoName + ", " + keyPrefix() + (named() ? nameTemplate : "") + ")";
  }

  private static String simpleName(String protoName) {
    int dot = protoName.lastIndexOf('.');
    return dot < 0 ? protoName : protoName.substring(dot + 1);
  }

  /** Builder of a {@link Model}. */
  public static final class Builder<V> {
    private final String module;
    private final String version;
    private final String type;
    private final Class<V> valueClass;
    private String modelClass = "config";
    private String protoName;
    private Function<? super V, String> nameFunction;
    private String nameTemplate = "";
    private String yamlField;

    private Builder(String module, String version, String type, Class<V> valueClass) {
      this.module = requireMatch(module, "^[-a-z0-9_]+(?:\\.[-a-z0-9_]+)?$", "module");
      this.version = requireMatch(version, "^v[0-9]+(?:[-a-z0-9]+)?$", "version");
      this.type = requireMatch(type, "^[-a-z0-9_]+(?:\\.[-a-z0-9_]+)?$", "type");
      this.valueClass = Objects.requireNonNull(valueClass, "valueClass");
      this.protoName =
          ProtoJson.isMessage(valueClass)
              ? ProtoJson.fullName(valueClass)
              : valueClass.getSimpleName();
    }

    /** The model class (default {@code config}). */
    public Builder<V> modelClass(String c) {
      this.modelClass = requireMatch(c, "^[-a-z0-9_]+$", "class");
      return this;
    }

    /** The proto message name (default: the value class's simple name). */
    public Builder<V> protoName(String name) {
      this.protoName = Objects.requireNonNull(name, "name");
      return this;
    }

    /**
     * How an instance is named, with the template it stands for (documentation), e.g. {@code
     * name(Interface::name, "{{.Name}}")}. Without it the model is a singleton.
     */
    public Builder<V> name(Function<? super V, String> f, String template) {
      this.nameFunction = Objects.requireNonNull(f, "f");
      this.nameTemplate = Objects.requireNonNull(template, "template");
      return this;
    }

    /** The field name in the YAML configuration format (default {@code <Message>_list}). */
    public Builder<V> yamlField(String field) {
      this.yamlField = Objects.requireNonNull(field, "field");
      return this;
    }

    public Model<V> build() {
      return new Model<>(this);
    }

    private static String requireMatch(String value, String regex, String what) {
      if (value == null || !value.matches(regex)) {
        throw new IllegalArgumentException(
            "model " + what + " '" + value + "' does not match " + regex);
      }
      return value;
    }
  }
}
