package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The chains {@code iptables-save} printed: per table, per chain, its policy ({@code -} for a chain
 * of one's own) and its rules in order, each without the {@code -A CHAIN} in front.
 */
public final class IptablesSave {
  /** One chain as saved. */
  public record Chain(String policy, List<String> rules) {}

  private final Map<String, Map<String, Chain>> tables;

  private IptablesSave(Map<String, Map<String, Chain>> tables) {
    this.tables = tables;
  }

  /** The chain {@code chain} of {@code table} ({@code filter}, {@code nat}, ...), if saved. */
  public Optional<Chain> chain(String table, String chain) {
    return Optional.ofNullable(tables.getOrDefault(table, Map.of()).get(chain));
  }

  /** Whether the table {@code table} was saved at all (a table nobody used is not there). */
  public boolean hasTable(String table) {
    return tables.containsKey(table);
  }

  /** Reads what {@code iptables-save} printed. */
  public static IptablesSave parse(String text) {
    Map<String, Map<String, Chain>> tables = new LinkedHashMap<>();
    Map<String, Chain> current = null;
    for (String raw : text.split("\n")) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.equals("COMMIT")) {
        continue;
      }
      if (line.startsWith("*")) {
        current = tables.computeIfAbsent(line.substring(1), t -> new LinkedHashMap<>());
      } else if (current != null && line.startsWith(":")) {
        String[] words = line.substring(1).split(" ");
        current.put(words[0], new Chain(words.length > 1 ? words[1] : "-", new ArrayList<>()));
      } else if (current != null && line.startsWith("-A ")) {
        String rest = line.substring(3);
        int space = rest.indexOf(' ');
        String chain = space < 0 ? rest : rest.substring(0, space);
        String rule = space < 0 ? "" : rest.substring(space + 1);
        current.computeIfAbsent(chain, c -> new Chain("-", new ArrayList<>())).rules().add(rule);
      }
    }
    return new IptablesSave(tables);
  }
}
