package io.kvscheduler.agent.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reading of the values the settings files and the environment give: a YAML file, single values,
 * booleans, durations and etcd endpoints. Every error names the place ({@code where}) and the
 * setting.
 */
final class SettingValues {
  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m)");

  private SettingValues() {}

  /**
   * The YAML document of {@code file}, null when it is empty.
   *
   * @param what how errors begin, followed by the file: {@code "etcd config "}
   * @throws IllegalArgumentException naming the file (and line) and the cause
   */
  static JsonNode readYaml(Path file, String what) {
    try {
      return ConfigDocument.parseYaml(Files.readString(file)).root();
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(what + file + ": no such file", e);
    } catch (ConfigDocument.SyntaxException e) {
      throw new IllegalArgumentException(
          what + file + (e.line() > 0 ? ":" + e.line() : "") + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw new IllegalArgumentException(what + file + ": " + e.getMessage(), e);
    }
  }

  /** The node {@code key} of {@code map}, or null when it is absent or null. */
  static JsonNode set(JsonNode map, String key) {
    JsonNode n = map.get(key);
    return n == null || n.isNull() ? null : n;
  }

  /** {@code n}, the setting {@code key} of {@code where}, as a single value. */
  static String text(JsonNode n, String where, String key) {
    if (!n.isValueNode()) {
      throw new IllegalArgumentException(
          where
              + ": "
              + key
              + " must be a single value, got "
              + (n.isObject() ? "a mapping" : "a list"));
    }
    return n.asText();
  }

  /** {@code n}, the setting {@code key} of {@code where}: true or false, quoted or not. */
  static boolean bool(JsonNode n, String where, String key) {
    if (n.isBoolean()) {
      return n.booleanValue();
    }
    if (n.isTextual()
        && (n.textValue().equalsIgnoreCase("true") || n.textValue().equalsIgnoreCase("false"))) {
      return Boolean.parseBoolean(n.textValue()); // quoted, as templating tools often write it
    }
    throw new IllegalArgumentException(
        where
            + ": "
            + key
            + " must be true or false, got '"
            + (n.isValueNode() ? n.asText() : n.toString())
            + "'");
  }

  /** A positive duration: {@code 500ms}, {@code 5s}, {@code 1m} or ISO-8601 ({@code PT5S}). */
  static Duration duration(String text, String what) {
    String t = text.strip();
    Duration d;
    Matcher m = SHORT_DURATION.matcher(t);
    try {
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        d =
            switch (m.group(2)) {
              case "ms" -> Duration.ofMillis(n);
              case "s" -> Duration.ofSeconds(n);
              default -> Duration.ofMinutes(n);
            };
      } else {
        d = Duration.parse(t);
      }
    } catch (RuntimeException e) {
      d = null;
    }
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(
          what
              + ": expected a positive duration such as 500ms,"
              + " 5s, 1m or PT5S, got '"
              + text
              + "'");
    }
    return d;
  }

  /** Endpoints given as a list or a comma-separated string, checked. */
  static List<String> endpoints(JsonNode n, String where) {
    List<String> out = new ArrayList<>();
    if (n.isArray()) {
      for (JsonNode e : n) {
        if (!e.isValueNode()) {
          throw new IllegalArgumentException(where + ": expected host:port entries");
        }
        out.add(e.asText().strip());
      }
    } else if (n.isValueNode()) {
      out.addAll(split(n.asText()));
    } else {
      throw new IllegalArgumentException(where + ": expected a list or a comma-separated string");
    }
    return checkedEndpoints(out, where);
  }

  /** {@code endpoints}, each {@code host:port} or {@code http(s)://host:port}, at least one. */
  static List<String> checkedEndpoints(List<String> endpoints, String where) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException(where + ": no endpoint given");
    }
    for (String e : endpoints) {
      URI u;
      try {
        u = new URI(e.contains("://") ? e : "http://" + e);
      } catch (URISyntaxException ex) {
        u = null;
      }
      if (u == null
          || u.getHost() == null
          || u.getPort() <= 0
          || !(u.getScheme().equals("http") || u.getScheme().equals("https"))) {
        throw new IllegalArgumentException(
            where + ": endpoint '" + e + "' is not host:port or http(s)://host:port");
      }
    }
    return endpoints;
  }

  /** The non-blank comma-separated parts of {@code s}, stripped. */
  static List<String> split(String s) {
    return Arrays.stream(s.split(",")).map(String::strip).filter(x -> !x.isEmpty()).toList();
  }
}
