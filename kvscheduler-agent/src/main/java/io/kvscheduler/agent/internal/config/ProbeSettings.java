package io.kvscheduler.agent.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.Probe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code probes:} of the settings file: a list of mappings, each with a {@code name}, exactly
 * one of {@code command} (a list of words, or one string split at spaces; with an optional {@code
 * netns}), {@code tcp} ({@code host:port}) or {@code http} (a URL), and an optional {@code timeout}
 * (default 5s).
 *
 * <pre>
 * probes:
 * - name: ping-ns2
 *   command: [ping, -c, "1", -W, "1", 10.0.2.1]
 *   netns: ns1
 *   timeout: 3s
 * - {name: api, tcp: "127.0.0.1:6443", timeout: 1s}
 * - {name: health, http: "http://127.0.0.1:8080/healthz"}
 * </pre>
 */
final class ProbeSettings {
  private static final Set<String> KEYS =
      Set.of("name", "command", "netns", "tcp", "http", "timeout");

  private ProbeSettings() {}

  /**
   * @throws IllegalArgumentException naming the place, the probe and the problem
   */
  static List<Probe> read(JsonNode list, String where) {
    if (!list.isArray()) {
      throw new IllegalArgumentException(where + ": expected a list of probes");
    }
    List<Probe> out = new ArrayList<>();
    int index = 0;
    for (JsonNode n : list) {
      index++;
      String at = where + ": probe " + index;
      if (!n.isObject()) {
        throw new IllegalArgumentException(at + ": expected a mapping");
      }
      for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!KEYS.contains(k)) {
          throw new IllegalArgumentException(
              at
                  + ": unknown key '"
                  + k
                  + "' (known: "
                  + String.join(", ", new TreeSet<>(KEYS))
                  + ")");
        }
      }
      String name = text(n, "name", at);
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException(at + ": no name");
      }
      at = where + ": probe '" + name + "'";
      String timeoutText = text(n, "timeout", at);
      Duration timeout =
          timeoutText == null ? null : SettingValues.duration(timeoutText, at + ": timeout");
      List<String> kinds =
          List.of("command", "tcp", "http").stream()
              .filter(k -> SettingValues.set(n, k) != null)
              .toList();
      if (kinds.size() != 1) {
        throw new IllegalArgumentException(
            at + ": give exactly one of command, tcp or http, got " + kinds);
      }
      String netns = text(n, "netns", at);
      if (netns != null && !kinds.get(0).equals("command")) {
        throw new IllegalArgumentException(at + ": netns is for a command probe only");
      }
      try {
        out.add(
            switch (kinds.get(0)) {
              case "command" -> Probe.command(name, words(n.get("command"), at), netns, timeout);
              case "tcp" -> Probe.tcp(name, text(n, "tcp", at), timeout);
              default -> Probe.http(name, text(n, "http", at), timeout);
            });
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
      }
    }
    return out;
  }

  private static String text(JsonNode n, String key, String where) {
    JsonNode v = SettingValues.set(n, key);
    return v == null ? null : SettingValues.text(v, where, key);
  }

  private static List<String> words(JsonNode n, String where) {
    List<String> out = new ArrayList<>();
    if (n.isArray()) {
      for (JsonNode w : n) {
        out.add(SettingValues.text(w, where, "command"));
      }
    } else {
      for (String w : SettingValues.text(n, where, "command").strip().split("\\s+")) {
        if (!w.isEmpty()) {
          out.add(w);
        }
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(where + ": the command is empty");
    }
    return out;
  }
}
