package io.kvscheduler.agent.crash;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the kernel holds, read with {@code ip -json} in the namespace and in each of its named
 * namespaces, independent of the agent: links, their addresses, and routes with the agent's routing
 * protocol (200). Objects are named as the configuration names them ({@code link <name>}, {@code
 * addr <name> <ip/len>}, {@code route <dst> <name>}) with their attributes as a string; an object
 * found twice is listed twice. A link is the agent's when its alias starts with the agent's prefix
 * (its name follows); a link that is not, other than {@code lo}, is an object of its own ({@code
 * foreign <ns>/<name>}) or, when it has the temporary name of a veth end ({@code veth-<hash>}), one
 * more copy of that interface: no configuration asks for either.
 */
final class KernelState {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Reads every namespace in one command. */
  private static final String READ =
      "for ns in '' $(ip netns list | cut -d' ' -f1); do"
          + " echo \"@@ns $ns\"; n=${ns:+-n $ns};"
          + " echo @@link; ip $n -d -json link show;"
          + " echo @@addr; ip $n -json addr show;"
          + " echo @@route; ip $n -json route show proto 200; done";

  /** Objects of the kernel: name → attributes, once per copy. */
  final Map<String, List<String>> objects = new TreeMap<>();

  static String link(String name) {
    return "link " + name;
  }

  static String address(String name, String ip) {
    return "addr " + name + " " + ip;
  }

  static String route(String dst, String name) {
    return "route " + dst + " " + name;
  }

  static String ns(String ns) {
    return "ns=" + (ns.isEmpty() ? "-" : ns);
  }

  static String linkAttributes(
      String ns, String host, String mac, boolean up, String peer, boolean paired) {
    return ns(ns)
        + " host="
        + host
        + " mac="
        + mac
        + " up="
        + up
        + " peer="
        + peer
        + " paired="
        + paired;
  }

  static String routeAttributes(String ns, String gw, int metric) {
    return ns(ns) + " gw=" + gw + " metric=" + metric;
  }

  /** The temporary kernel name of a veth end (as the Linux plugin names it). */
  static String temporaryName(String logicalName) {
    int h = 0x811c9dc5;
    for (byte b : logicalName.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x01000193;
    }
    return "veth-" + String.format("%08x", h);
  }

  /**
   * Reads the kernel.
   *
   * @param aliasPrefix the agent's alias prefix ({@code /vnf-agent/<label>/})
   * @param names logical names whose temporary names to recognise
   */
  static KernelState read(NamespaceHolder holder, String aliasPrefix, Collection<String> names) {
    Map<String, String> temporary = new HashMap<>();
    names.forEach(n -> temporary.put(temporaryName(n), n));
    String out = holder.run("sh", "-c", READ);
    KernelState k = new KernelState();
    // per namespace: the sections, then the links by index to pair veth ends
    List<Namespace> namespaces = new ArrayList<>();
    Namespace cur = null;
    String section = null;
    StringBuilder body = new StringBuilder();
    for (String line : (out + "\n@@end").split("\n")) {
      if (line.startsWith("@@")) {
        if (cur != null && section != null) {
          cur.put(section, parse(body.toString()));
        }
        body.setLength(0);
        if (line.startsWith("@@ns")) {
          cur = new Namespace(line.substring(4).strip());
          namespaces.add(cur);
          section = null;
        } else {
          section = line.substring(2);
        }
      } else {
        body.append(line).append('\n');
      }
    }
    for (Namespace ns : namespaces) {
      k.readLinks(ns, aliasPrefix, temporary);
    }
    Map<String, String[]> ends = new HashMap<>(); // logical name → ns, ifindex
    for (Namespace ns : namespaces) {
      ns.owner.forEach((index, name) -> ends.put(name, new String[] {ns.name, index.toString()}));
    }
    for (Namespace ns : namespaces) {
      for (JsonNode l : ns.links) {
        String name = ns.owner.get(l.path("ifindex").asInt());
        if (name == null) {
          continue;
        }
        String alias = l.path("ifalias").asText();
        String[] parts = alias.substring(aliasPrefix.length()).split("/", -1);
        String peer = parts.length > 1 ? parts[1] : "";
        String[] peerEnd = ends.get(peer);
        boolean paired = peerEnd != null && ns.isPeer(l, peerEnd[0], peerEnd[1]);
        List<String> flags = new ArrayList<>();
        l.path("flags").forEach(f -> flags.add(f.asText()));
        k.add(
            link(name),
            linkAttributes(
                ns.name,
                l.path("ifname").asText(),
                l.path("address").asText(),
                flags.contains("UP"),
                peer,
                paired));
      }
      for (JsonNode l : ns.addrs) {
        String name = ns.owner.get(l.path("ifindex").asInt());
        if (name == null) {
          continue;
        }
        for (JsonNode a : l.path("addr_info")) {
          if (!"link".equals(a.path("scope").asText())) {
            k.add(
                address(name, a.path("local").asText() + "/" + a.path("prefixlen").asInt()),
                ns(ns.name));
          }
        }
      }
      for (JsonNode r : ns.routes) {
        String dev = r.path("dev").asText();
        String name = ns.ownerByKernelName.getOrDefault(dev, "?" + dev);
        k.add(
            route(r.path("dst").asText(), name),
            routeAttributes(ns.name, r.path("gateway").asText(), r.path("metric").asInt()));
      }
    }
    return k;
  }

  private void readLinks(Namespace ns, String aliasPrefix, Map<String, String> temporary) {
    for (JsonNode l : ns.links) {
      String ifname = l.path("ifname").asText();
      String alias = l.path("ifalias").asText();
      int index = l.path("ifindex").asInt();
      if (alias.startsWith(aliasPrefix)) {
        String name = alias.substring(aliasPrefix.length()).split("/", -1)[0];
        ns.owner.put(index, name);
        ns.ownerByKernelName.put(ifname, name);
      } else if (temporary.containsKey(ifname)) {
        add(link(temporary.get(ifname)), "temporary " + ns(ns.name) + " host=" + ifname);
      } else if (!ifname.equals("lo")) {
        add("foreign " + (ns.name.isEmpty() ? "-" : ns.name) + "/" + ifname, "alias=" + alias);
      }
    }
  }

  private void add(String object, String attributes) {
    objects.computeIfAbsent(object, o -> new ArrayList<>()).add(attributes);
  }

  private static JsonNode parse(String text) {
    try {
      return JSON.readTree(text.isBlank() ? "[]" : text);
    } catch (IOException e) {
      throw new IllegalStateException("ip printed no JSON: " + text, e);
    }
  }

  /** The objects that differ from {@code desired}: missing, different, extra or found twice. */
  Set<String> differingFrom(Map<String, String> desired) {
    Set<String> out = new TreeSet<>();
    objects.forEach(
        (o, copies) -> {
          if (copies.size() != 1 || !copies.get(0).equals(desired.get(o))) {
            out.add(o);
          }
        });
    desired
        .keySet()
        .forEach(
            o -> {
              if (!objects.containsKey(o)) {
                out.add(o);
              }
            });
    return out;
  }

  /** A readable account of what differs from {@code desired}. */
  String describeDifferences(Map<String, String> desired) {
    StringBuilder b = new StringBuilder();
    for (String o : differingFrom(desired)) {
      b.append("\n  ")
          .append(o)
          .append(": kernel ")
          .append(objects.getOrDefault(o, List.of()))
          .append(", desired ")
          .append(desired.getOrDefault(o, "(none)"));
    }
    return b.toString();
  }

  /** One namespace's readings. */
  private static final class Namespace {
    final String name;
    JsonNode links = JSON.createArrayNode();
    JsonNode addrs = JSON.createArrayNode();
    JsonNode routes = JSON.createArrayNode();
    final Map<Integer, String> owner = new HashMap<>(); // ifindex → logical name
    final Map<String, String> ownerByKernelName = new HashMap<>();

    Namespace(String name) {
      this.name = name;
    }

    void put(String section, JsonNode node) {
      switch (section) {
        case "link" -> links = node;
        case "addr" -> addrs = node;
        case "route" -> routes = node;
        default -> throw new IllegalStateException("section " + section);
      }
    }

    /**
     * Whether link {@code l} of this namespace is a veth end whose peer is link {@code index} of
     * namespace {@code ns}: {@code ip} names a peer in the same namespace, and gives the index of
     * one in another namespace.
     */
    boolean isPeer(JsonNode l, String ns, String index) {
      if (l.has("link")) {
        String peerName = l.path("link").asText();
        for (JsonNode other : links) {
          if (other.path("ifname").asText().equals(peerName)) {
            return ns.equals(name) && index.equals(other.path("ifindex").asText());
          }
        }
        return false;
      }
      return l.has("link_netnsid")
          && !ns.equals(name)
          && index.equals(l.path("link_index").asText());
    }
  }
}
