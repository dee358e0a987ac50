package io.kvscheduler.agent.spi;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.TextFormat;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * The JSON codec of the models' values (those of a {@link ModelRegistry}), compatible with
 * vpp-agent's protobuf JSON:
 *
 * <ul>
 *   <li>written with snake_case field names, enums by name, default values left out (null, false,
 *       zero, empty strings and lists, and an enum's first constant, its proto number 0);
 *   <li>read accepting snake_case or lowerCamelCase names (a field given under both is rejected),
 *       enums by name or number, and integers as numbers or decimal strings (protobuf JSON writes
 *       64-bit integers as strings); an absent or null field reads as its default: an empty string,
 *       list or map, or the enum's first constant;
 *   <li>a scalar of the wrong JSON type is rejected, as protobuf JSON rejects it: a boolean must be
 *       {@code true} or {@code false}, a string field takes only a string, an integer field a whole
 *       number ({@code 1500}, {@code 1500.0}, {@code "1500"}; not {@code 1500.5}, an empty or
 *       padded string), a number field no empty string; a field given twice is rejected;
 *   <li>an unknown field is rejected naming the field and the known ones;
 *   <li>a value whose computed key differs from the key it was given under is rejected.
 * </ul>
 *
 * <p>Models whose value class is a generated protobuf message ({@link com.google.protobuf.Message})
 * need no codec of their own: their values go through protobuf-java-util's {@code JsonFormat},
 * which reads snake_case and lowerCamelCase names and enums by name or number, rejects unknown
 * fields, and writes snake_case names, enums by name and no default values.
 *
 * <p>Thread-safe.
 *
 * <p>Longer than our other classes because reading and writing share the field renaming and the
 * error paths below (naming the field and what it takes); split, each half would need the other's
 * internals.
 */
public final class ModelJsonCodec {
  /**
   * Limits of the JSON text {@link #parse(String, String)} reads (an etcd value, for example), each
   * refused as too large naming the limit: 64 Mi characters in all, 1 Mi characters in a string or
   * a field name, 100 levels of nested objects and lists, 1,000 digits in a number. Parsing costs
   * time linear in the text's length.
   */
  public static final StreamReadConstraints LIMITS =
      StreamReadConstraints.builder()
          .maxDocumentLength(64L * 1024 * 1024)
          .maxStringLength(1024 * 1024)
          .maxNameLength(1024 * 1024)
          .maxNestingDepth(100)
          .maxNumberLength(1000)
          .build();

  private final ObjectMapper mapper = Proto3JsonMapper.create();

  /**
   * The JSON text {@code json} given under {@code key}, parsed.
   *
   * @throws ModelException for malformed JSON, or JSON beyond {@link #LIMITS}
   */
  public JsonNode parse(String key, String json) throws ModelException {
    try {
      return mapper.readTree(json);
    } catch (JsonProcessingException e) {
      JsonLocation loc = e.getLocation();
      throw new ModelException(
          key,
          (e instanceof StreamConstraintsException ? "too large" : "malformed JSON")
              + (loc != null ? " at line " + loc.getLineNr() + ", column " + loc.getColumnNr() : "")
              + ": "
              + e.getOriginalMessage(),
          e);
    }
  }

  /**
   * The value of {@code model} that {@code tree} stands for, where no key is given (the YAML
   * configuration format); its key is the one the model computes.
   */
  public Object decode(Model<?> model, JsonNode tree) throws ModelException {
    return bind(model, model.keyPrefix() + "…", tree);
  }

  /**
   * The value of {@code model} that {@code tree} (parsed JSON or YAML) stands for, given under
   * {@code key}.
   *
   * @throws ModelException for an unknown field or value, or a key that does not match the value
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Object decode(Model<?> model, String key, JsonNode tree) throws ModelException {
    Object value = bind(model, key, tree);
    String computed = ((Model) model).key(value);
    if (!computed.equals(key)) {
      throw new ModelException(
          key, "key does not match the key computed from the value: " + computed);
    }
    return value;
  }

  private Object bind(Model<?> model, String key, JsonNode tree) throws ModelException {
    if (tree == null || !tree.isObject()) {
      throw new ModelException(
          key,
          "value of model "
              + model.name()
              + " must be a JSON object, got "
              + (tree == null ? "nothing" : tree.getNodeType().toString().toLowerCase()));
    }
    if (ProtoJson.isMessage(model.valueClass())) {
      return ProtoJson.decode(model, key, tree);
    }
    JsonNode snake;
    try {
      snake = snakeCase(tree, model.valueClass());
    } catch (NullItem e) {
      throw new ModelException(
          key,
          "field '"
              + pathText(e.path)
              + "' of "
              + model.protoName()
              + " is null (a list holds no null items)",
          null,
          e.path);
    } catch (TwiceGiven e) {
      List<Object> field = new ArrayList<>(e.path.subList(0, e.path.size() - 1));
      field.add(e.field);
      throw new ModelException(
          key,
          "field '"
              + pathText(field)
              + "' is given twice in "
              + model.protoName()
              + " (as '"
              + e.first
              + "' and as '"
              + e.second
              + "')",
          null,
          e.path);
    }
    try {
      return mapper.treeToValue(snake, model.valueClass());
    } catch (UnrecognizedPropertyException e) {
      List<String> known = new ArrayList<>();
      Collection<Object> ids = e.getKnownPropertyIds();
      if (ids != null) {
        ids.forEach(id -> known.add(String.valueOf(id)));
      }
      List<Object> at = pathOf(e);
      throw new ModelException(
          key,
          "unknown field '"
              + pathText(asTyped(tree, at))
              + "' in "
              + model.protoName()
              + " (known fields"
              + (at.size() > 1 ? " there" : "")
              + ": "
              + String.join(", ", known)
              + ")",
          e,
          at);
    } catch (InvalidFormatException e) {
      if (e.getTargetType() == null || !e.getTargetType().isEnum()) {
        throw wrongType(model, key, snake, e);
      }
      throw new ModelException(
          key,
          "invalid value " + e.getValue() + " for field '" + path(e) + "' of " + model.protoName(),
          e,
          pathOf(e));
    } catch (MismatchedInputException e) {
      throw wrongType(model, key, snake, e);
    } catch (JsonMappingException e) {
      List<Object> at = pathOf(e);
      String message = e.getOriginalMessage();
      // a value class's constructor that failed: its own message, not Jackson's wrapping
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        if (c.getMessage() != null && !(c instanceof JsonProcessingException)) {
          message = c.getMessage();
        }
      }
      throw new ModelException(
          key,
          "cannot decode "
              + model.protoName()
              + (at.isEmpty() ? "" : ", field '" + path(e) + "'")
              + ": "
              + message,
          e,
          at);
    } catch (JsonProcessingException e) {
      throw new ModelException(
          key, "cannot decode " + model.protoName() + ": " + e.getOriginalMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new ModelException(
          key, "cannot decode " + model.protoName() + ": " + e.getMessage(), e);
    }
  }

  private static ModelException wrongType(
      Model<?> model, String key, JsonNode tree, MismatchedInputException e) {
    JsonNode given = at(tree, pathOf(e));
    return new ModelException(
        key,
        "wrong type for field '"
            + path(e)
            + "' of "
            + model.protoName()
            + ": expected "
            + expected(e.getTargetType())
            + (given != null ? ", got " + kind(given) : ""),
        e,
        pathOf(e));
  }

  /** The field names and list indexes of a Jackson error's path, outermost first. */
  private static List<Object> pathOf(JsonMappingException e) {
    List<Object> out = new ArrayList<>();
    e.getPath()
        .forEach(
            ref -> {
              if (ref.getFieldName() != null) {
                out.add(ref.getFieldName());
              } else if (ref.getIndex() >= 0) {
                out.add(ref.getIndex());
              }
            });
    return out;
  }

  /**
   * {@code path} (snake_case names and indexes) spelled as in {@code tree}, the value as given:
   * {@code colourName} rather than {@code colour_name}.
   */
  private static List<Object> asTyped(JsonNode tree, List<Object> path) {
    List<Object> out = new ArrayList<>();
    JsonNode n = tree;
    for (Object step : path) {
      if (step instanceof Integer i) {
        out.add(i);
        n = n == null ? null : n.get(i);
        continue;
      }
      String name = (String) step;
      if (n != null && n.isObject() && !n.has(name)) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
          String f = it.next();
          if (toSnake(f).equals(name)) {
            name = f;
            break;
          }
        }
      }
      out.add(name);
      n = n == null ? null : n.get(name);
    }
    return out;
  }

  /** A path of field names and list indexes as text: {@code interfaces[1].name}. */
  private static String pathText(List<Object> path) {
    StringBuilder sb = new StringBuilder();
    for (Object step : path) {
      if (step instanceof Integer i) {
        sb.append('[').append(i).append(']');
      } else {
        sb.append(sb.length() > 0 ? "." : "").append(step);
      }
    }
    return sb.toString();
  }

  /** The node at {@code path} under {@code node}, or null. */
  private static JsonNode at(JsonNode node, List<Object> path) {
    JsonNode n = node;
    for (Object step : path) {
      n = step instanceof Integer i ? n.get(i) : n.get((String) step);
      if (n == null) {
        return null;
      }
    }
    return n;
  }

  /** What a field of type {@code t} takes, in words. */
  private static String expected(Class<?> t) {
    if (t == null) {
      return "another type";
    }
    if (t == String.class || CharSequence.class.isAssignableFrom(t)) {
      return "a string";
    }
    if (t == boolean.class || t == Boolean.class) {
      return "true or false";
    }
    if (t == int.class
        || t == long.class
        || t == short.class
        || t == byte.class
        || t == Integer.class
        || t == Long.class
        || t == Short.class
        || t == Byte.class
        || t == BigInteger.class) {
      return "an integer";
    }
    if (t.isPrimitive() || Number.class.isAssignableFrom(t)) {
      return "a number";
    }
    if (t.isEnum()) {
      return "one of "
          + Arrays.stream(t.getEnumConstants())
              .map(String::valueOf)
              .collect(Collectors.joining(", "));
    }
    if (t.isArray() || Collection.class.isAssignableFrom(t)) {
      return "a list";
    }
    return "an object";
  }

  /** What a JSON node is, in words. */
  private static String kind(JsonNode n) {
    return switch (n.getNodeType()) {
      case STRING -> "the string '" + abbreviated(n.textValue()) + "'";
      case NUMBER -> "the number " + abbreviated(n.asText());
      case BOOLEAN -> n.booleanValue() ? "true" : "false";
      case ARRAY -> "a list";
      case OBJECT, POJO -> "an object";
      case NULL, MISSING -> "nothing";
      case BINARY -> "binary data";
    };
  }

  private static String abbreviated(String s) {
    return s.length() <= 40 ? s : s.substring(0, 37) + "...";
  }

  private static String path(JsonMappingException e) {
    return pathText(pathOf(e));
  }

  /**
   * A value as one line of text for logs and transaction records: protobuf text format on one line
   * for protobuf messages ({@code name: "veth1" type: VETH}), {@code toString()} otherwise.
   */
  public static String text(Object value) {
    if (value instanceof MessageOrBuilder m) {
      return TextFormat.shortDebugString(m);
    }
    return String.valueOf(value);
  }

  /**
   * Estimated bytes of a value, for the transaction history's byte budget: a protobuf message's
   * serialized size (which the message caches), else two bytes per character of its {@link #text}.
   */
  public static long sizeEstimate(Object value) {
    if (value instanceof Message m) {
      return m.getSerializedSize();
    }
    return 2L * text(value).length();
  }

  /** Compact protobuf-style JSON of a value: snake_case names, defaults left out. */
  public String encode(Object value) {
    if (value instanceof Message m) {
      return ProtoJson.encode(m);
    }
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
    if (value instanceof Message m) {
      return ProtoJson.toTree(mapper, m, camel);
    }
    JsonNode tree = mapper.valueToTree(value);
    try {
      return camel ? camelCase(tree, value.getClass()) : tree;
    } catch (TwiceGiven e) {
      throw new IllegalArgumentException(
          "cannot write "
              + value.getClass().getName()
              + " in lowerCamelCase: '"
              + e.first
              + "' and '"
              + e.second
              + "' become the same name");
    } catch (NullItem e) {
      throw new IllegalArgumentException(
          "cannot write " + value.getClass().getName() + ": a list holds a null item at " + e.path);
    }
  }

  /**
   * A fault found while renaming a value's fields, at {@link #path} (outermost first; {@link
   * #rename} adds the steps above the fault on the way out).
   */
  private abstract static class RenameFault extends RuntimeException {
    final LinkedList<Object> path = new LinkedList<>();

    RenameFault(Object at) {
      super(null, null, false, false);
      path.add(at);
    }
  }

  /** A null item of a list. */
  private static final class NullItem extends RenameFault {
    NullItem(int index) {
      super(index);
    }
  }

  /** A field given under two spellings that name the same field. */
  private static final class TwiceGiven extends RenameFault {
    final String field;
    final String first;
    final String second;

    TwiceGiven(String field, String first, String second) {
      super(second);
      this.field = field;
      this.first = first;
      this.second = second;
    }
  }

  /**
   * {@code node}, a value of {@code type}, with its field names in snake_case; {@link TwiceGiven}
   * when two names become one. The keys of map fields are data and keep their spelling.
   */
  private JsonNode snakeCase(JsonNode node, Class<?> type) {
    return rename(node, mapper.constructType(type), ModelJsonCodec::toSnake);
  }

  private JsonNode camelCase(JsonNode node, Class<?> type) {
    return rename(node, mapper.constructType(type), ModelJsonCodec::toCamel);
  }

  /**
   * Renames the field names of the objects that are values of classes (per the declared type, null
   * when unknown: then every object key is taken for a field name); leaves map keys alone. Returns
   * {@code node} itself when nothing in it is renamed: most values are written in one case style,
   * and copying every tree cost about a tenth of a large file's parse (W9 of {@code
   * BENCHMARKS.md}).
   */
  private JsonNode rename(JsonNode node, JavaType type, UnaryOperator<String> f) {
    if (node.isObject()) {
      boolean map = type != null && type.isMapLikeType();
      Map<String, JavaType> fields = map || type == null ? Map.of() : fieldTypes(type);
      ObjectNode out = null; // the copy, made at the first entry that changes
      Map<String, String> given = null;
      int index = 0;
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); index++) {
        Map.Entry<String, JsonNode> e = it.next();
        String name = map ? e.getKey() : f.apply(e.getKey());
        if (out == null && !name.equals(e.getKey())) {
          out = copyOfFirst(node, index);
          given = namesOf(out);
        }
        if (out != null) {
          String before = given.putIfAbsent(name, e.getKey());
          if (before != null) {
            throw new TwiceGiven(name, before, e.getKey());
          }
        }
        JavaType child = map ? type.getContentType() : fields.get(toSnake(e.getKey()));
        JsonNode renamed;
        try {
          renamed = rename(e.getValue(), child, f);
        } catch (RenameFault t) {
          t.path.addFirst(e.getKey());
          throw t;
        }
        if (out == null && renamed != e.getValue()) {
          // the names so far and this one are unchanged, so distinct
          out = copyOfFirst(node, index);
          given = namesOf(out);
          given.put(name, name);
        }
        if (out != null) {
          out.set(name, renamed);
        }
      }
      return out == null ? node : out;
    }
    if (node.isArray()) {
      ArrayNode out = null;
      JavaType item =
          type != null && (type.isCollectionLikeType() || type.isArrayType())
              ? type.getContentType()
              : null;
      for (int i = 0; i < node.size(); i++) {
        if (node.get(i).isNull()) {
          throw new NullItem(i); // protobuf JSON has no null in a repeated field
        }
        JsonNode renamed;
        try {
          renamed = rename(node.get(i), item, f);
        } catch (RenameFault t) {
          t.path.addFirst(i);
          throw t;
        }
        if (out == null && renamed != node.get(i)) {
          out = ((ArrayNode) node).arrayNode(node.size());
          for (int j = 0; j < i; j++) {
            out.add(node.get(j));
          }
        }
        if (out != null) {
          out.add(renamed);
        }
      }
      return out == null ? node : out;
    }
    return node;
  }

  /** A new object holding the first {@code count} fields of {@code node}, as they are. */
  private static ObjectNode copyOfFirst(JsonNode node, int count) {
    ObjectNode out = ((ObjectNode) node).objectNode();
    Iterator<Map.Entry<String, JsonNode>> it = node.fields();
    for (int i = 0; i < count; i++) {
      Map.Entry<String, JsonNode> e = it.next();
      out.set(e.getKey(), e.getValue());
    }
    return out;
  }

  /** The field names of {@code o}, each given as itself. */
  private static Map<String, String> namesOf(ObjectNode o) {
    Map<String, String> names = new HashMap<>();
    o.fieldNames().forEachRemaining(n -> names.put(n, n));
    return names;
  }

  /** The declared type of each field of a value class, by snake_case name (cached per type). */
  private final Map<JavaType, Map<String, JavaType>> fieldTypes = new ConcurrentHashMap<>();

  private Map<String, JavaType> fieldTypes(JavaType type) {
    if (type.isContainerType()
        || type.isEnumType()
        || type.isPrimitive()
        || type.getRawClass() == Object.class
        || type.getRawClass() == String.class) {
      return Map.of();
    }
    return fieldTypes.computeIfAbsent(
        type,
        t -> {
          Map<String, JavaType> out = new HashMap<>();
          BeanDescription d = mapper.getDeserializationConfig().introspect(t);
          d.findProperties().forEach(p -> out.put(p.getName(), p.getPrimaryType()));
          return Map.copyOf(out);
        });
  }

  /** {@code name} in snake_case; {@code name} itself when it has no upper case letter. */
  static String toSnake(String name) {
    int first = 0;
    while (first < name.length() && !Character.isUpperCase(name.charAt(first))) {
      first++;
    }
    if (first == name.length()) {
      return name;
    }
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

  /**
   * {@code name} in lowerCamelCase; {@code name} itself when it has no {@code _} after its start.
   */
  static String toCamel(String name) {
    if (name.indexOf('_', 1) < 0) {
      return name;
    }
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
