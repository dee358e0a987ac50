package io.kvscheduler.agent;

import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.plugins.mock.MockModels;
import io.kvscheduler.plugins.mock.MockPlugins;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The mock plugins with a southbound whose every operation is recorded, to check what reached the
 * southbound and in which order (for example that no update was applied twice or out of order).
 */
final class SbRecorder implements AgentPlugin {
  private static final Pattern MAC = Pattern.compile("Set interface '([^']+)' MAC address: (\\S+)");
  private static final Pattern CREATED = Pattern.compile("Created \\w+ interface: (\\S+) .*");
  private static final Pattern DELETED = Pattern.compile("Deleted \\w+ interface: (\\S+)");

  private final List<String> lines = new CopyOnWriteArrayList<>();
  private volatile MockPlugins plugins;

  @Override
  public String name() {
    return "mock";
  }

  @Override
  public void init(AgentContext ctx) {
    MockModels.registerAll(ctx.models());
    plugins = MockPlugins.register(ctx.scheduler(), lines::add);
  }

  MockPlugins plugins() {
    return plugins;
  }

  /** Every southbound operation so far, in order. */
  List<String> lines() {
    return List.copyOf(lines);
  }

  /** The MAC addresses set on each interface, in order. */
  TreeMap<String, List<String>> macsSet() {
    TreeMap<String, List<String>> out = new TreeMap<>();
    for (String l : lines) {
      Matcher m = MAC.matcher(l);
      if (m.matches()) {
        out.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(m.group(2));
      }
    }
    return out;
  }

  /** How many times each interface was created. */
  TreeMap<String, Integer> creations() {
    return count(CREATED);
  }

  /** How many times each interface was deleted. */
  TreeMap<String, Integer> deletions() {
    return count(DELETED);
  }

  private TreeMap<String, Integer> count(Pattern p) {
    TreeMap<String, Integer> out = new TreeMap<>();
    for (String l : lines) {
      Matcher m = p.matcher(l);
      if (m.matches()) {
        out.merge(m.group(1), 1, Integer::sum);
      }
    }
    return out;
  }
}
