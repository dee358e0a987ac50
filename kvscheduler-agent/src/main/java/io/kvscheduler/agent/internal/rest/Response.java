package io.kvscheduler.agent.internal.rest;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/** A response: status, content type and a body written as it is sent. */
public record Response(int status, String contentType, Body body) {
  /** Content type of JSON answers. */
  public static final String JSON_TYPE = "application/json; charset=UTF-8";

  /** Content type of YAML answers. */
  public static final String YAML_TYPE = "application/yaml; charset=UTF-8";

  /** Content type of plain-text answers. */
  public static final String TEXT_TYPE = "text/plain; charset=UTF-8";

  /** Go-style indented JSON: {@code "key": value}, two-space indent, {@code {}} when empty. */
  public static final ObjectWriter JSON =
      new ObjectMapper()
          .writer(
              new DefaultPrettyPrinter(
                      Separators.createDefaultInstance()
                          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                          .withObjectEmptySeparator("")
                          .withArrayEmptySeparator(""))
                  .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                  .withArrayIndenter(new DefaultIndenter("  ", "\n")));

  /** Writes a response body to the client's stream. */
  @FunctionalInterface
  public interface Body {
    void writeTo(OutputStream out) throws IOException;
  }

  /** Writes a JSON body token by token with a generator of {@link #JSON}'s layout. */
  @FunctionalInterface
  public interface JsonBody {
    void writeTo(JsonGenerator g) throws IOException;
  }

  /** Go-style indented JSON of {@code value}, with a trailing newline, written as it goes. */
  public static Response json(int status, Object value) {
    return jsonStream(status, g -> JSON.writeValue(g, value));
  }

  /**
   * Go-style indented JSON that {@code body} writes straight to the client's stream with a
   * generator (no object tree in between), with a trailing newline.
   */
  public static Response jsonStream(int status, JsonBody body) {
    return new Response(
        status,
        JSON_TYPE,
        out -> {
          try (JsonGenerator g = JSON.createGenerator(out)) {
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            body.writeTo(g);
          }
          out.write('\n');
        });
  }

  /**
   * A JSON array of {@code items}, each turned into JSON by {@code toJson} only as it is written: a
   * large answer streams instead of being built in memory first.
   */
  public static <T> Response jsonArray(
      int status, Iterable<T> items, Function<? super T, ?> toJson) {
    // Jackson writes an Iterable element by element: each is converted only when written
    Iterable<Object> lazy =
        () ->
            new Iterator<>() {
              private final Iterator<T> it = items.iterator();

              @Override
              public boolean hasNext() {
                return it.hasNext();
              }

              @Override
              public Object next() {
                return toJson.apply(it.next());
              }
            };
    return json(status, lazy);
  }

  /** {@code {"Error": message}} with {@code status}. */
  public static Response error(int status, String message) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("Error", message);
    return json(status, m);
  }

  public static Response text(int status, String text) {
    return bytes(status, TEXT_TYPE, text.getBytes(StandardCharsets.UTF_8));
  }

  public static Response bytes(int status, String type, byte[] body) {
    return new Response(status, type, out -> out.write(body));
  }
}
