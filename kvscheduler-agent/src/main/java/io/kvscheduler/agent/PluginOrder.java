package io.kvscheduler.agent;

import io.kvscheduler.agent.spi.AgentPlugin;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** Orders plugins so that each comes after the plugins it depends on (ties by name). */
public final class PluginOrder {
  private PluginOrder() {}

  /**
   * @throws IllegalStateException for a duplicate name, an unknown dependency or a cycle (named)
   */
  public static List<AgentPlugin> order(List<AgentPlugin> plugins) {
    Map<String, AgentPlugin> byName = new TreeMap<>();
    for (AgentPlugin p : plugins) {
      if (byName.put(p.name(), p) != null) {
        throw new IllegalStateException("two plugins are named '" + p.name() + "'");
      }
    }
    Map<String, AgentPlugin> done = new LinkedHashMap<>();
    for (String name : byName.keySet()) {
      visit(name, byName, done, new ArrayList<>());
    }
    return List.copyOf(done.values());
  }

  private static void visit(
      String name,
      Map<String, AgentPlugin> byName,
      Map<String, AgentPlugin> done,
      List<String> path) {
    if (done.containsKey(name)) {
      return;
    }
    if (path.contains(name)) {
      List<String> cycle = new ArrayList<>(path.subList(path.indexOf(name), path.size()));
      cycle.add(name);
      throw new IllegalStateException("plugin dependency cycle: " + String.join(" -> ", cycle));
    }
    AgentPlugin p = byName.get(name);
    if (p == null) {
      throw new IllegalStateException(
          "plugin '" + path.get(path.size() - 1) + "' depends on unknown plugin '" + name + "'");
    }
    path.add(name);
    for (String dep : new TreeSet<>(p.dependsOn())) {
      visit(dep, byName, done, path);
    }
    path.remove(path.size() - 1);
    done.put(name, p);
  }
}
