package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/** JSON for people (indented) and for one-line cells. */
public final class Json {
  public static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private Json() {}

  /** Indented JSON. */
  public static String pretty(JsonNode n) {
    try {
      return MAPPER.writeValueAsString(n);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** One-line JSON, "" for a missing or null node. */
  public static String compact(JsonNode n) {
    if (n == null || n.isNull() || n.isMissingNode()) {
      return "";
    }
    return n.toString();
  }

  /** The text of {@code field}, or "" when absent. */
  public static String text(JsonNode n, String field) {
    JsonNode f = n == null ? null : n.get(field);
    return f == null || f.isNull() ? "" : f.isValueNode() ? f.asText() : f.toString();
  }
}
