package io.kvscheduler.agent.internal.format;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.util.StringQuotingChecker;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The two formats NB configuration documents come in:
 *
 * <ul>
 *   <li><b>keyed</b>: a mapping of model keys to values ({@code config/mock/v1/interfaces/tap1:
 *       {name: tap1, ...}}), values in the protobuf JSON of their model;
 *   <li><b>YAML configuration format</b> of vpp-agent ({@code docs/interop.md} §2.6): top-level
 *       {@code <group>Config} keys, inside one field per model ({@code <Message>_list} lists for
 *       named models, single objects for singletons), items in protobuf JSON (lowerCamelCase or
 *       snake_case names accepted).
 * </ul>
 *
 * Only models of class {@code config} take part in the YAML configuration format.
 */
public final class ConfigFormat {
  private static final Pattern GROUP = Pattern.compile("[A-Za-z][A-Za-z0-9_]*Config");
  private static final ObjectMapper YAML_OUT =
      new ObjectMapper(
          YAMLFactory.builder()
              .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
              .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
              .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
              .stringQuotingChecker(new ReadsBack())
              .build());
  private static final JsonFactory YAML_IN = new YAMLFactory();

  /**
   * Quotes a string value whenever reading it back unquoted would not give the same string (e.g.
   * {@code 0x1F}, {@code 1_000}, {@code .inf}, which YAML reads as numbers), so that what {@code
   * GET /configuration} writes can be sent back with {@code PUT}.
   */
  private static final class ReadsBack extends StringQuotingChecker.Default {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean needToQuoteValue(String value) {
      if (super.needToQuoteValue(value)) {
        return true;
      }
      // a plain scalar that starts with a letter (and is no reserved word, checked above) is read
      // as a string: only the others (numbers, dates, .inf, ...) need the costlier check
      return !value.isEmpty() && !Character.isLetter(value.charAt(0)) && !readsBackAsItself(value);
    }

    private static boolean readsBackAsItself(String value) {
      try (JsonParser p = YAML_IN.createParser("v: " + value)) {
        return p.nextToken() == JsonToken.START_OBJECT
            && p.nextToken() == JsonToken.FIELD_NAME
            && p.nextToken() == JsonToken.VALUE_STRING
            && value.equals(p.getText())
            && p.nextToken() == JsonToken.END_OBJECT
            && p.nextToken() == null;
      } catch (IOException | RuntimeException e) {
        return false;
      }
    }
  }

  private ConfigFormat() {}

  /** A document that does not fit a format or whose values do not decode; names a line. */
  public static final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int line;

    public ConfigException(String message, int line) {
      super(message);
      this.line = line;
    }

    public ConfigException(String message, int line, Throwable cause) {
      super(message, cause);
      this.line = line;
    }

    /** 1-based line, 0 when unknown. */
    public int line() {
      return line;
    }
  }

  /**
   * Whether {@code root} is in the YAML configuration format: a top-level {@code ...Config} key.
   */
  public static boolean isYamlConfig(JsonNode root) {
    if (root == null || !root.isObject()) {
      return false;
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String field = it.next();
      // a model key (with a '/') is never a group: no pattern matched for each of 100,000 keys
      if (field.indexOf('/') < 0 && GROUP.matcher(field).matches()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Decodes a document in either format (recognised by {@link #isYamlConfig}); an empty document
   * holds nothing.
   *
   * @return the values by key, sorted by key
   */
  public static Map<String, Object> decodeAny(ModelRegistry models, ConfigDocument doc)
      throws ConfigException {
    return decodeAny(models, doc, null);
  }

  /**
   * As {@link #decodeAny(ModelRegistry, ConfigDocument)}, and puts the line of each key into {@code
   * lines} (when not null): of the key in the keyed format, of the list item or field in the YAML
   * configuration format.
   */
  public static Map<String, Object> decodeAny(
      ModelRegistry models, ConfigDocument doc, Map<String, Integer> lines) throws ConfigException {
    JsonNode root = doc.root();
    if (root.isNull() || root.isMissingNode()) {
      return new TreeMap<>();
    }
    if (!root.isObject()) {
      throw new ConfigException(
          "expected a mapping of keys to values, or the YAML configuration"
              + " format (top-level <group>Config keys); got "
              + kind(root),
          doc.lineOf(root));
    }
    return isYamlConfig(root)
        ? decodeYamlConfig(models, doc, lines)
        : decodeKeyed(models, doc, lines);
  }

  /** Decodes a mapping of keys to values. */
  public static Map<String, Object> decodeKeyed(ModelRegistry models, ConfigDocument doc)
      throws ConfigException {
    return decodeKeyed(models, doc, null);
  }

  private static Map<String, Object> decodeKeyed(
      ModelRegistry models, ConfigDocument doc, Map<String, Integer> lines) throws ConfigException {
    Map<String, Object> out = new TreeMap<>();
    JsonNode root = doc.root();
    if (root.isNull()) {
      return out;
    }
    if (!root.isObject()) {
      throw new ConfigException(
          "expected a mapping of keys to values, got " + kind(root), doc.lineOf(root));
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String key = e.getKey();
      JsonNode node = e.getValue();
      int line = doc.lineOf(node) > 0 ? doc.lineOf(node) : doc.lineOf(root);
      if (node.isNull()) {
        throw new ConfigException(key + ": no value", line);
      }
      try {
        checkKey(models, key);
        out.put(key, models.decodeTree(key, node));
        if (lines != null) {
          lines.put(key, doc.lineOf(root, List.of(key), line));
        }
      } catch (ModelException ex) {
        throw new ConfigException(
            ex.getMessage(), ex.path().isEmpty() ? line : doc.lineOf(node, ex.path(), line), ex);
      }
    }
    return out;
  }

  /**
   * Checks, before a value given under {@code key} is decoded, that the key is no named model's key
   * prefix with nothing after it: such a key has the model's prefix, but an empty name, and is
   * rejected saying so (not as a key of no model, as {@link ModelRegistry} would).
   *
   * @throws ModelException for a key with an empty name
   */
  public static void checkKey(ModelRegistry models, String key) throws ModelException {
    if (models.forKey(key).isPresent()) {
      return;
    }
    for (Model<?> m : models.models()) {
      if (m.named() && key.equals(m.keyPrefix())) {
        throw new ModelException(
            key,
            "the key has an empty name after the prefix "
                + m.keyPrefix()
                + " of model "
                + m.name());
      }
    }
  }

  /** Decodes the YAML configuration format (§2.6). */
  public static Map<String, Object> decodeYamlConfig(ModelRegistry models, ConfigDocument doc)
      throws ConfigException {
    return decodeYamlConfig(models, doc, null);
  }

  private static Map<String, Object> decodeYamlConfig(
      ModelRegistry models, ConfigDocument doc, Map<String, Integer> lines) throws ConfigException {
    Map<String, Object> out = new TreeMap<>();
    Map<String, String> where = new HashMap<>();
    JsonNode root = doc.root();
    if (root.isNull()) {
      return out;
    }
    if (!root.isObject()) {
      throw new ConfigException(
          "expected a mapping of <group>Config keys, got " + kind(root), doc.lineOf(root));
    }
    Map<String, Map<String, Model<?>>> groups = groups(models);
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> g = it.next();
      String group = g.getKey();
      JsonNode groupNode = g.getValue();
      int groupLine = line(doc, groupNode, root);
      Map<String, Model<?>> fields = groups.get(group);
      if (fields == null) {
        if (groupNode.isNull() || (groupNode.isContainerNode() && groupNode.isEmpty())) {
          // an empty group of models this agent does not have (e.g. vpp-agent's `vppConfig: {}`)
          // holds nothing to apply or lose
          continue;
        }
        throw new ConfigException(
            "unknown group '"
                + group
                + "' (known groups: "
                + String.join(", ", groups.keySet())
                + ")",
            groupLine);
      }
      if (groupNode.isNull()) {
        continue;
      }
      if (!groupNode.isObject()) {
        throw new ConfigException(
            group + ": expected a mapping of model fields, got " + kind(groupNode), groupLine);
      }
      for (Iterator<Map.Entry<String, JsonNode>> fit = groupNode.fields(); fit.hasNext(); ) {
        Map.Entry<String, JsonNode> f = fit.next();
        String path = group + "." + f.getKey();
        JsonNode fieldNode = f.getValue();
        int fieldLine = line(doc, fieldNode, groupNode);
        Model<?> model = fields.get(f.getKey());
        if (model == null) {
          throw new ConfigException(
              "unknown field '"
                  + f.getKey()
                  + "' in group "
                  + group
                  + " (known fields: "
                  + String.join(", ", fields.keySet())
                  + ")",
              fieldLine);
        }
        if (fieldNode.isNull()) {
          continue;
        }
        if (model.named()) {
          if (!fieldNode.isArray()) {
            throw new ConfigException(
                path + ": expected a list of " + model.protoName() + ", got " + kind(fieldNode),
                fieldLine);
          }
          for (int i = 0; i < fieldNode.size(); i++) {
            JsonNode item = fieldNode.get(i);
            put(
                models,
                doc,
                model,
                item,
                path + "[" + i + "]",
                doc.lineOf(fieldNode, List.of(i), doc.lineOf(fieldNode)),
                out,
                where,
                lines);
          }
        } else {
          put(models, doc, model, fieldNode, path, fieldLine, out, where, lines);
        }
      }
    }
    return out;
  }

  private static void put(
      ModelRegistry models,
      ConfigDocument doc,
      Model<?> model,
      JsonNode node,
      String path,
      int line,
      Map<String, Object> out,
      Map<String, String> where,
      Map<String, Integer> lines)
      throws ConfigException {
    Object value;
    try {
      value = models.decodeTree(model, node);
    } catch (ModelException e) {
      String msg = e.getMessage();
      String prefix = e.key() + ": ";
      throw new ConfigException(
          path + ": " + (msg.startsWith(prefix) ? msg.substring(prefix.length()) : msg),
          e.path().isEmpty() ? line : doc.lineOf(node, e.path(), line),
          e);
    }
    String key = models.keyOf(value);
    if (!model.isKey(key)) {
      throw new ConfigException(
          path + ": the value has no name (its key would be '" + key + "')", line);
    }
    String at = path + (line > 0 ? " on line " + line : "");
    String previous = where.putIfAbsent(key, at);
    if (previous != null) {
      throw new ConfigException(path + ": key " + key + " is also given by " + previous, line);
    }
    out.put(key, value);
    if (lines != null) {
      lines.put(key, line);
    }
  }

  /**
   * The YAML configuration format of {@code values} (keys of models not of class {@code config} or
   * of no model are left out): every group of the registered models, lists sorted by key,
   * lowerCamelCase field names, default values left out.
   */
  public static ObjectNode encode(ModelRegistry models, Map<String, Object> values) {
    Map<Model<?>, List<Object>> byModel = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : new TreeMap<>(values).entrySet()) {
      if (e.getValue() == null) {
        continue;
      }
      models
          .forKey(e.getKey())
          .filter(m -> m.modelClass().equals("config"))
          .ifPresent(m -> byModel.computeIfAbsent(m, x -> new ArrayList<>()).add(e.getValue()));
    }
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    groups(models)
        .forEach(
            (group, fields) -> {
              ObjectNode g = root.putObject(group);
              fields.forEach(
                  (field, model) -> {
                    List<Object> vs = byModel.get(model);
                    if (vs == null) {
                      return;
                    }
                    if (model.named()) {
                      vs.forEach(v -> g.withArray(field).add(models.toTree(v, true)));
                    } else {
                      g.set(field, models.toTree(vs.get(0), true));
                    }
                  });
            });
    return root;
  }

  /** YAML text of a tree (no document marker, quotes only where needed). */
  public static String toYaml(JsonNode tree) {
    try {
      return YAML_OUT.writeValueAsString(tree);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write YAML", e);
    }
  }

  /** The config groups of the registered models (sorted), each with its fields in order. */
  private static Map<String, Map<String, Model<?>>> groups(ModelRegistry models) {
    Map<String, Map<String, Model<?>>> groups = new TreeMap<>();
    for (Model<?> m : models.models()) {
      if (m.modelClass().equals("config")) {
        groups.computeIfAbsent(m.yamlGroup(), g -> new LinkedHashMap<>()).put(m.yamlField(), m);
      }
    }
    return groups;
  }

  private static int line(ConfigDocument doc, JsonNode node, JsonNode parent) {
    int l = doc.lineOf(node);
    return l > 0 ? l : doc.lineOf(parent);
  }

  private static String kind(JsonNode n) {
    return switch (n.getNodeType()) {
      case ARRAY -> "a list";
      case OBJECT -> "a mapping";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case NULL, MISSING -> "nothing";
      default -> n.getNodeType().toString().toLowerCase();
    };
  }
}
