package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.ValueState;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The graph of values at one moment (a snapshot of revisions) as Graphviz DOT, as JSON for a web
 * page, or as SVG rendered by Graphviz's {@code dot} program.
 *
 * <p>JSON shape: {@code {"nodes": [...], "edges": [...]}}. A node: {@code key}, {@code label},
 * {@code state}, {@code descriptor} ({@code ""} for properties and unimplemented values), {@code
 * derivedFrom} (base key, {@code ""} for base values), {@code error}, {@code unavailable}, {@code
 * lastUpdate} (sequence number of the transaction that last changed it, -1 none), {@code value}
 * (RecordedProtoMessage or null) and {@code placeholder}: true for a key a dependency names that
 * holds no value (state NONEXISTENT), or for an any-of dependency nothing matches (key {@code
 * anyOf[prefixes]}). An edge: {@code from}, {@code to}, {@code relation} ({@code depends-on} or
 * {@code derives}), {@code label} (the dependency label; the derived key for {@code derives}) and
 * {@code satisfied} (the target is available).
 */
final class GraphExport {
  /** How long {@code dot} may take to lay a graph out. */
  static final Duration DOT_TIMEOUT = Duration.ofSeconds(60);

  private final List<NodeRevision> nodes;
  private final Map<String, NodeRevision> byKey = new TreeMap<>();

  GraphExport(List<NodeRevision> snapshot) {
    this.nodes = snapshot;
    snapshot.forEach(n -> byKey.put(n.key(), n));
  }

  /** An edge of the graph. */
  record Edge(String from, String to, String relation, String label, boolean satisfied) {}

  /** Every edge, and the placeholder keys (targets without value) in {@code placeholders}. */
  List<Edge> edges(Set<String> placeholders) {
    List<Edge> out = new ArrayList<>();
    for (NodeRevision n : nodes) {
      n.dependencies()
          .forEach(
              (label, target) -> {
                List<String> prefixes = SchedulerJson.anyOfPrefixes(target);
                if (prefixes == null) {
                  if (!byKey.containsKey(target)) {
                    placeholders.add(target);
                  }
                  out.add(
                      new Edge(n.key(), target, "depends-on", label, available(byKey.get(target))));
                  return;
                }
                boolean any = false;
                for (NodeRevision t : byKey.values()) {
                  if (prefixes.stream().anyMatch(t.key()::startsWith)) {
                    any = true;
                    out.add(new Edge(n.key(), t.key(), "depends-on", label, available(t)));
                  }
                }
                if (!any) {
                  placeholders.add(target);
                  out.add(new Edge(n.key(), target, "depends-on", label, false));
                }
              });
      for (String d : n.derivedKeys()) {
        out.add(new Edge(n.key(), d, "derives", d, byKey.containsKey(d)));
      }
    }
    return out;
  }

  private static boolean available(NodeRevision n) {
    return n != null
        && n.value().isPresent()
        && !n.unavailable()
        && n.state() != ValueState.REMOVED;
  }

  /** The JSON document described on the class. */
  Map<String, Object> json(SchedulerJson json) {
    Set<String> placeholders = new LinkedHashSet<>();
    List<Edge> edges = edges(placeholders);
    List<Object> ns = new ArrayList<>();
    for (NodeRevision n : byKey.values()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("key", n.key());
      m.put("label", n.label());
      m.put("state", n.state().name());
      m.put("descriptor", n.descriptor());
      m.put("derivedFrom", n.derivedFrom());
      m.put("error", n.error());
      m.put("unavailable", n.unavailable());
      m.put("lastUpdate", n.lastUpdateSeq());
      m.put("value", n.value().map(v -> json.proto(n.key(), v)).orElse(null));
      m.put("placeholder", false);
      ns.add(m);
    }
    for (String p : placeholders) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("key", p);
      m.put("label", p);
      m.put("state", ValueState.NONEXISTENT.name());
      m.put("descriptor", "");
      m.put("derivedFrom", "");
      m.put("error", "");
      m.put("unavailable", true);
      m.put("lastUpdate", -1);
      m.put("value", null);
      m.put("placeholder", true);
      ns.add(m);
    }
    List<Object> es = new ArrayList<>();
    for (Edge e : edges) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("from", e.from());
      m.put("to", e.to());
      m.put("relation", e.relation());
      m.put("label", e.label());
      m.put("satisfied", e.satisfied());
      es.add(m);
    }
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("nodes", ns);
    doc.put("edges", es);
    return doc;
  }

  /**
   * DOT source: values as boxes coloured by state, each base value in a cluster with the values
   * derived from it, depends-on edges labelled with the dependency label, derives edges dotted.
   */
  String dot() {
    Set<String> placeholders = new LinkedHashSet<>();
    List<Edge> edges = edges(placeholders);
    StringBuilder sb = new StringBuilder();
    sb.append("digraph kvscheduler {\n");
    sb.append("  rankdir=LR;\n  ranksep=0.6;\n  nodesep=0.25;\n");
    sb.append(
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\","
            + " fontsize=10];\n");
    sb.append("  edge [fontname=\"Helvetica\", fontsize=9];\n");
    Map<String, List<NodeRevision>> groups = new TreeMap<>();
    for (NodeRevision n : byKey.values()) {
      groups.computeIfAbsent(root(n), k -> new ArrayList<>()).add(n);
    }
    int cluster = 0;
    for (Map.Entry<String, List<NodeRevision>> g : groups.entrySet()) {
      boolean grouped = g.getValue().size() > 1;
      String indent = grouped ? "    " : "  ";
      if (grouped) {
        sb.append("  subgraph cluster_").append(cluster++).append(" {\n");
        sb.append("    style=dashed;\n    color=\"#999999\";\n    label=")
            .append(quote(g.getKey()))
            .append(";\n    fontsize=9;\n");
      }
      for (NodeRevision n : g.getValue()) {
        sb.append(indent)
            .append(quote(n.key()))
            .append(" [label=")
            .append(
                quote(
                    n.key()
                        + "\n"
                        + n.state().name()
                        + (n.error().isEmpty() ? "" : "\n" + shorten(n.error()))))
            .append(", fillcolor=")
            .append(quote(color(n.state())))
            .append(", tooltip=")
            .append(quote(n.descriptor().isEmpty() ? n.key() : n.descriptor() + ": " + n.key()))
            .append("];\n");
      }
      if (grouped) {
        sb.append("  }\n");
      }
    }
    for (String p : placeholders) {
      sb.append("  ")
          .append(quote(p))
          .append(" [label=")
          .append(quote(p + "\nmissing"))
          .append(", style=\"rounded,dashed\", fillcolor=\"#ffffff\"];\n");
    }
    for (Edge e : edges) {
      sb.append("  ").append(quote(e.from())).append(" -> ").append(quote(e.to()));
      if (e.relation().equals("derives")) {
        sb.append(" [style=dotted, arrowhead=none]");
      } else {
        sb.append(" [label=")
            .append(quote(e.label()))
            .append(e.satisfied() ? "" : ", color=\"#cc0000\", fontcolor=\"#cc0000\"")
            .append(']');
      }
      sb.append(";\n");
    }
    sb.append("}\n");
    return sb.toString();
  }

  /** The base value a derived value belongs to (through derived-from links), else itself. */
  private String root(NodeRevision n) {
    NodeRevision cur = n;
    for (int i = 0; i < 64 && !cur.derivedFrom().isEmpty(); i++) {
      NodeRevision base = byKey.get(cur.derivedFrom());
      if (base == null) {
        return cur.derivedFrom();
      }
      cur = base;
    }
    return cur.key();
  }

  static String color(ValueState s) {
    return switch (s) {
      case CONFIGURED -> "#a6f3a6";
      case OBTAINED -> "#cde6ff";
      case DISCOVERED -> "#e0d4ff";
      case PENDING -> "#fff3a0";
      case INVALID -> "#ffc680";
      case FAILED, RETRYING -> "#ff9b9b";
      case MISSING, UNIMPLEMENTED -> "#dddddd";
      default -> "#ffffff";
    };
  }

  private static String shorten(String s) {
    return s.length() <= 60 ? s : s.substring(0, 57) + "...";
  }

  /** A DOT quoted string. */
  static String quote(String s) {
    return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + '"';
  }

  /** Thrown when Graphviz's {@code dot} is not installed. */
  static final class NoGraphviz extends Exception {
    NoGraphviz() {
      super(
          "rendering the graph needs Graphviz's 'dot' program, which is not installed here"
              + " (Debian/Ubuntu package 'graphviz': apt-get install graphviz); without it use"
              + " format=raw (DOT source) or format=json",
          null,
          false,
          false);
    }
  }

  /**
   * Runs {@code dot -T<format>} on {@code source}.
   *
   * @throws NoGraphviz when {@code dot} is not on the PATH
   * @throws IOException when it fails or runs longer than {@link #DOT_TIMEOUT}
   */
  static byte[] render(String source, String format)
      throws NoGraphviz, IOException, InterruptedException {
    return render(source, format, System.getenv("PATH"));
  }

  /** Like {@link #render(String, String)}, looking for {@code dot} in {@code searchPath}. */
  static byte[] render(String source, String format, String searchPath)
      throws NoGraphviz, IOException, InterruptedException {
    Path dot = findDot(searchPath);
    if (dot == null) {
      throw new NoGraphviz();
    }
    Process p = new ProcessBuilder(dot.toString(), "-T" + format).start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Thread readOut = drain(p.getInputStream(), out);
    Thread readErr = drain(p.getErrorStream(), err);
    try (OutputStream in = p.getOutputStream()) {
      in.write(source.getBytes(StandardCharsets.UTF_8));
    }
    if (!p.waitFor(DOT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new IOException("dot did not finish within " + DOT_TIMEOUT.toSeconds() + " s");
    }
    readOut.join();
    readErr.join();
    if (p.exitValue() != 0) {
      throw new IOException(
          "dot failed (exit "
              + p.exitValue()
              + "): "
              + err.toString(StandardCharsets.UTF_8).strip());
    }
    return out.toByteArray();
  }

  private static Thread drain(InputStream in, ByteArrayOutputStream to) {
    Thread t =
        new Thread(
            () -> {
              try (in) {
                in.transferTo(to);
              } catch (IOException e) {
                // the process went away; its exit status tells
              }
            },
            "kvs-dot-output");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static Path findDot(String path) {
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path p = Path.of(dir, "dot");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }
}
