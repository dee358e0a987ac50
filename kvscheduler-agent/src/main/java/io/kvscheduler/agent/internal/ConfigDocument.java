package io.kvscheduler.agent.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.IdentityHashMap;
import java.util.Map;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * A parsed JSON or YAML document that remembers the line of every object and array (the line of
 * the field name or list item that introduced it), so that errors found after parsing can name a
 * line.
 */
public final class ConfigDocument {
  private static final JsonFactory JSON = new JsonFactory();
  private static final YAMLFactory YAML = new YAMLFactory();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final JsonNode root;
  private final Map<JsonNode, Integer> lines;

  private ConfigDocument(JsonNode root, Map<JsonNode, Integer> lines) {
    this.root = root;
    this.lines = lines;
  }

  /** A syntax error (or a duplicate mapping key) at a line (0 when unknown). */
  public static final class SyntaxException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int line;

    SyntaxException(String message, int line, Throwable cause) {
      super(message, cause);
      this.line = line;
    }

    /** 1-based line, 0 when unknown. */
    public int line() {
      return line;
    }
  }

  /** Parses YAML (which also accepts JSON). */
  public static ConfigDocument parseYaml(String text) throws SyntaxException {
    return parse(YAML, text);
  }

  /** Parses strict JSON. */
  public static ConfigDocument parseJson(String text) throws SyntaxException {
    return parse(JSON, text);
  }

  private static ConfigDocument parse(JsonFactory factory, String text) throws SyntaxException {
    Map<JsonNode, Integer> lines = new IdentityHashMap<>();
    try (JsonParser p = factory.createParser(text)) {
      JsonToken first = p.nextToken();
      if (first == null) {
        return new ConfigDocument(NullNode.getInstance(), lines);
      }
      JsonNode root = read(p, lines, line(p));
      if (p.nextToken() != null) {
        throw new SyntaxException("more than one document (only one is supported)", line(p), null);
      }
      return new ConfigDocument(root, lines);
    } catch (JsonProcessingException e) {
      if (e.getCause() instanceof MarkedYAMLException y && y.getProblemMark() != null) {
        // SnakeYAML knows the problem's own position, and where the construct it was in began
        String context = y.getContext() != null && y.getContextMark() != null
            ? " (" + y.getContext() + " at line " + (y.getContextMark().getLine() + 1) + ")" : "";
        throw new SyntaxException("malformed YAML: " + y.getProblem() + context,
            y.getProblemMark().getLine() + 1, e);
      }
      JsonLocation loc = e.getLocation();
      int line = loc != null && loc.getLineNr() > 0 ? loc.getLineNr() : 0;
      String msg = e.getOriginalMessage();
      int nl = msg == null ? -1 : msg.indexOf('\n');
      throw new SyntaxException("malformed " + (factory == YAML ? "YAML" : "JSON") + ": "
          + (nl > 0 ? msg.substring(0, nl).strip() : msg), line, e);
    } catch (IOException e) {
      throw new SyntaxException("cannot parse: " + e.getMessage(), 0, e);
    }
  }

  private static int line(JsonParser p) {
    JsonLocation loc = p.currentTokenLocation();
    return loc == null ? 0 : Math.max(loc.getLineNr(), 0);
  }

  private static JsonNode read(JsonParser p, Map<JsonNode, Integer> lines, int line)
      throws IOException, SyntaxException {
    JsonToken t = p.currentToken();
    switch (t) {
      case START_OBJECT -> {
        ObjectNode o = NODES.objectNode();
        lines.put(o, line);
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          int fieldLine = line(p);
          p.nextToken();
          JsonNode v = read(p, lines, fieldLine);
          if (o.has(name)) {
            throw new SyntaxException("duplicate key '" + name + "'", fieldLine, null);
          }
          o.set(name, v);
        }
        return o;
      }
      case START_ARRAY -> {
        ArrayNode a = NODES.arrayNode();
        lines.put(a, line);
        while (p.nextToken() != JsonToken.END_ARRAY) {
          a.add(read(p, lines, line(p)));
        }
        return a;
      }
      case VALUE_STRING -> {
        return NODES.textNode(p.getText());
      }
      case VALUE_NUMBER_INT -> {
        return switch (p.getNumberType()) {
          case INT -> NODES.numberNode(p.getIntValue());
          case LONG -> NODES.numberNode(p.getLongValue());
          default -> NODES.numberNode(p.getBigIntegerValue());
        };
      }
      case VALUE_NUMBER_FLOAT -> {
        return NODES.numberNode(p.getDecimalValue());
      }
      case VALUE_TRUE -> {
        return NODES.booleanNode(true);
      }
      case VALUE_FALSE -> {
        return NODES.booleanNode(false);
      }
      case VALUE_NULL -> {
        return NODES.nullNode();
      }
      case VALUE_EMBEDDED_OBJECT -> {
        Object o = p.getEmbeddedObject();
        return o instanceof byte[] b ? NODES.binaryNode(b) : NODES.pojoNode(o);
      }
      default -> throw new SyntaxException("unexpected " + t, line, null);
    }
  }

  /** The root node; a {@link NullNode} for an empty document. */
  public JsonNode root() {
    return root;
  }

  /** The line of an object or array node of this document, 0 when unknown. */
  public int lineOf(JsonNode node) {
    Integer l = lines.get(node);
    return l == null ? 0 : l;
  }
}
