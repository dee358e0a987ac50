package io.kvscheduler.plugins.linux.linuxcalls;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * {@link LinuxCalls} through the iproute2 {@code ip} command: reads with {@code ip -json}, writes
 * with one {@code ip} command per call, follows link events with {@code ip monitor}. Whatever
 * {@code ip} prints on failure (the kernel's answer, e.g. {@code RTNETLINK answers: File exists})
 * becomes the exception's message unchanged.
 */
public final class IpRoute2Calls implements LinuxCalls {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final CommandRunner runner;

  /** Whether util-linux's {@code setpriv} is there (to tie the monitor's life to this JVM). */
  private static final boolean SETPRIV = java.util.Arrays.stream(
      System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
      .anyMatch(d -> java.nio.file.Files.isExecutable(java.nio.file.Path.of(d, "setpriv")));

  /** Calls {@code ip} directly, each call bounded to {@code limit}. */
  public IpRoute2Calls(Duration limit) {
    this(List.of(), limit);
  }

  /**
   * Calls {@code ip} after {@code prefix} (e.g. the {@code nsenter} command of a {@link
   * NetnsSandbox}), each call bounded to {@code limit}.
   */
  public IpRoute2Calls(List<String> prefix, Duration limit) {
    this.runner = new CommandRunner(prefix, limit);
  }

  /** Runs {@code ip} with {@code args} in {@code namespace}; returns stdout. */
  private String ip(String namespace, String... args) throws LinuxCallException {
    return runner.run(ipArgs(namespace, args), null);
  }

  /**
   * Runs the {@code ip -batch} commands of {@code script} (one per line), stopping at the first
   * failure, whose message is the kernel's answer.
   */
  public void batch(String namespace, String script) throws LinuxCallException {
    batchOutput(namespace, script);
  }

  /**
   * Runs a batch with the global {@code options}; returns its output. A failure's message is
   * the kernel's answer, without the line saying which command of the batch failed.
   */
  private String batchOutput(String namespace, String script, String... options)
      throws LinuxCallException {
    List<String> args = new ArrayList<>(List.of(options));
    args.addAll(List.of("-batch", "-"));
    CommandRunner.Result r = runner.runForResult(ipArgs(namespace, args.toArray(String[]::new)),
        script);
    if (r.exitCode() != 0) {
      StringBuilder msg = new StringBuilder();
      for (String line : r.stderr().split("\n")) {
        if (!line.isBlank() && !line.startsWith("Command failed")) {
          msg.append(msg.length() == 0 ? "" : "\n").append(line.strip());
        }
      }
      throw new LinuxCallException("ip -batch", r.exitCode(),
          msg.length() == 0 ? "ip -batch failed with exit code " + r.exitCode() : msg.toString());
    }
    return r.stdout();
  }

  private static List<String> ipArgs(String namespace, String... args) {
    List<String> argv = new ArrayList<>(List.of("ip"));
    if (!namespace.isEmpty()) {
      argv.addAll(List.of("-n", namespace));
    }
    argv.addAll(List.of(args));
    return argv;
  }

  private JsonNode json(String namespace, String... args) throws LinuxCallException {
    String out = ip(namespace, args);
    try {
      return out.isBlank() ? JSON.createArrayNode() : JSON.readTree(out);
    } catch (IOException e) {
      throw new LinuxCallException("ip " + String.join(" ", args), 0,
          "cannot parse the output of ip: " + e.getMessage());
    }
  }

  @Override
  public List<String> namespaces() throws LinuxCallException {
    List<String> out = new ArrayList<>();
    for (JsonNode n : json("", "-json", "netns", "list")) {
      out.add(n.path("name").asText());
    }
    return out;
  }

  @Override
  public synchronized void ensureNamespace(String name) throws LinuxCallException {
    if (!namespaces().contains(name)) {
      ip("", "netns", "add", name);
    }
  }

  @Override
  public List<Link> links(String namespace) throws LinuxCallException {
    return parseLinks(namespace, json(namespace, "-d", "-json", "addr", "show"));
  }

  @Override
  public java.util.Optional<Link> link(String namespace, String name) throws LinuxCallException {
    try {
      return parseLinks(namespace, json(namespace, "-d", "-json", "addr", "show", "dev", name))
          .stream().findFirst();
    } catch (LinuxCallException e) {
      if (e.notFound()) {
        return java.util.Optional.empty();
      }
      throw e;
    }
  }

  private static List<Link> parseLinks(String namespace, JsonNode links) {
    List<Link> out = new ArrayList<>();
    for (JsonNode n : links) {
      boolean loopback = "loopback".equals(n.path("link_type").asText());
      List<String> addrs = new ArrayList<>();
      for (JsonNode a : n.path("addr_info")) {
        boolean v6 = "inet6".equals(a.path("family").asText());
        String addr = a.path("local").asText() + "/" + a.path("prefixlen").asInt();
        if (v6 && "link".equals(a.path("scope").asText())
            || loopback && (addr.equals("127.0.0.1/8") || addr.equals("::1/128"))) {
          continue; // the kernel's own addresses
        }
        addrs.add(addr);
      }
      boolean up = false;
      for (JsonNode f : n.path("flags")) {
        up |= "UP".equals(f.asText());
      }
      String kind = n.path("linkinfo").path("info_kind").asText("");
      if (kind.isEmpty() && loopback) {
        kind = "loopback";
      }
      out.add(new Link(namespace, n.path("ifindex").asInt(), n.path("ifname").asText(), kind,
          n.path("ifalias").asText(""), up, n.path("mtu").asInt(),
          n.path("address").asText("").toLowerCase(Locale.ROOT), addrs));
    }
    return out;
  }

  @Override
  public java.util.Map<String, Link> findLinks(String namespace, List<String> names)
      throws LinuxCallException {
    java.util.Map<String, Link> out = new java.util.LinkedHashMap<>();
    if (names.size() == 1) {
      link(namespace, names.get(0)).ifPresent(l -> out.put(l.name(), l));
      return out;
    }
    StringBuilder script = new StringBuilder();
    names.forEach(n -> script.append("addr show dev ").append(n).append('\n'));
    CommandRunner.Result r = runner.runForResult(
        ipArgs(namespace, "-d", "-json", "-force", "-batch", "-"), script.toString());
    for (String line : r.stderr().split("\n")) {
      if (!line.isBlank() && !line.contains("does not exist") && !line.startsWith("Command failed")) {
        throw new LinuxCallException("ip -batch: addr show", r.exitCode(), line.strip());
      }
    }
    // one JSON array per command that found its link, one after the other
    try (com.fasterxml.jackson.core.JsonParser p = JSON.createParser(r.stdout())) {
      while (p.nextToken() != null) {
        JsonNode links = JSON.readTree(p);
        parseLinks(namespace, links).forEach(l -> out.put(l.name(), l));
      }
    } catch (IOException | RuntimeException e) {
      throw new LinuxCallException("ip -batch: addr show", 0,
          "cannot parse the output of ip: " + e.getMessage());
    }
    return out;
  }

  @Override
  public void addVethPair(String name, String peerName, String namespace)
      throws LinuxCallException {
    String add = "link add " + name + " type veth peer name " + peerName + "\n";
    batch("", namespace.isEmpty() ? add : add + "link set dev " + name + " netns " + namespace
        + "\n");
  }

  @Override
  public Link configureLink(String namespace, String name, String newName, String alias,
      LinkSettings s) throws LinuxCallException {
    StringBuilder script = new StringBuilder();
    if (!name.equals(newName)) {
      script.append("link set dev ").append(name).append(" down\n");
      script.append("link set dev ").append(name).append(" name ").append(newName).append('\n');
    }
    if (alias != null) {
      script.append("link set dev ").append(newName).append(" alias \"").append(alias)
          .append("\"\n");
    }
    if (!s.isEmpty()) {
      script.append("link set dev ").append(newName);
      if (s.alias() != null) {
        script.append(" alias \"").append(s.alias()).append('"');
      }
      if (s.mtu() != null) {
        script.append(" mtu ").append(s.mtu());
      }
      if (s.mac() != null) {
        script.append(" address ").append(s.mac());
      }
      if (s.up() != null) {
        script.append(s.up() ? " up" : " down");
      }
      script.append('\n');
    }
    script.append("addr show dev ").append(newName).append('\n');
    String out = batchOutput(namespace, script.toString(), "-d", "-json");
    try {
      return parseLinks(namespace, JSON.readTree(out)).stream().findFirst().orElseThrow(() ->
          new LinuxCallException("ip addr show dev " + newName, 1,
              "Device \"" + newName + "\" does not exist."));
    } catch (IOException e) {
      throw new LinuxCallException("ip addr show dev " + newName, 0,
          "cannot parse the output of ip: " + e.getMessage());
    }
  }

  @Override
  public void addLink(String namespace, String name, String kind) throws LinuxCallException {
    ip(namespace, "link", "add", name, "type", kind);
  }

  @Override
  public void deleteLink(String namespace, String name) throws LinuxCallException {
    ip(namespace, "link", "del", "dev", name);
  }

  @Override
  public void moveLink(String name, String namespace) throws LinuxCallException {
    ip("", "link", "set", "dev", name, "netns", namespace);
  }

  @Override
  public void renameLink(String namespace, String name, String newName)
      throws LinuxCallException {
    ip(namespace, "link", "set", "dev", name, "name", newName);
  }

  @Override
  public void setLink(String namespace, String name, LinkSettings s) throws LinuxCallException {
    if (s.isEmpty()) {
      return;
    }
    List<String> args = new ArrayList<>(List.of("link", "set", "dev", name));
    if (s.alias() != null) {
      args.addAll(List.of("alias", s.alias()));
    }
    if (s.mtu() != null) {
      args.addAll(List.of("mtu", Integer.toString(s.mtu())));
    }
    if (s.mac() != null) {
      args.addAll(List.of("address", s.mac()));
    }
    if (s.up() != null) {
      args.add(s.up() ? "up" : "down");
    }
    ip(namespace, args.toArray(String[]::new));
  }

  @Override
  public void addAddress(String namespace, String device, String address)
      throws LinuxCallException {
    ip(namespace, "addr", "add", address, "dev", device);
  }

  @Override
  public void deleteAddress(String namespace, String device, String address)
      throws LinuxCallException {
    ip(namespace, "addr", "del", address, "dev", device);
  }

  @Override
  public List<RouteEntry> routes(String namespace, String device) throws LinuxCallException {
    List<RouteEntry> out = new ArrayList<>();
    for (String family : List.of("-4", "-6")) {
      for (JsonNode n : json(namespace, family, "-json", "route", "show", "dev", device)) {
        String proto = n.path("protocol").asText("");
        String type = n.path("type").asText("unicast");
        if (proto.equals("kernel") || proto.equals("ra") || !type.equals("unicast")) {
          continue; // put there by an address or by the kernel itself
        }
        String dst = n.path("dst").asText();
        boolean v6 = family.equals("-6");
        if (dst.equals("default")) {
          dst = v6 ? "::/0" : "0.0.0.0/0";
        } else if (!dst.contains("/")) {
          dst = dst + (v6 ? "/128" : "/32");
        }
        if (v6 && (dst.startsWith("fe80:") || dst.startsWith("ff00:"))) {
          continue;
        }
        out.add(new RouteEntry(namespace, device, dst, n.path("gateway").asText(""),
            n.path("metric").asInt(0), n.path("scope").asText("global")));
      }
    }
    return out;
  }

  private List<String> routeArgs(String verb, RouteEntry r) {
    List<String> args = new ArrayList<>(List.of("route", verb, r.destination()));
    if (!r.gateway().isEmpty()) {
      args.addAll(List.of("via", r.gateway()));
    }
    args.addAll(List.of("dev", r.device()));
    if (r.metric() != 0) {
      args.addAll(List.of("metric", Integer.toString(r.metric())));
    }
    if (!r.scope().isEmpty() && !r.destination().contains(":")) {
      args.addAll(List.of("scope", r.scope()));
    }
    return args;
  }

  @Override
  public void addRoute(RouteEntry r) throws LinuxCallException {
    ip(r.namespace(), routeArgs("add", r).toArray(String[]::new));
  }

  @Override
  public void replaceRoute(RouteEntry r) throws LinuxCallException {
    ip(r.namespace(), routeArgs("replace", r).toArray(String[]::new));
  }

  @Override
  public void deleteRoute(RouteEntry r) throws LinuxCallException {
    ip(r.namespace(), routeArgs("del", r).toArray(String[]::new));
  }

  @Override
  public List<Neighbour> neighbours(String namespace, String device) throws LinuxCallException {
    List<Neighbour> out = new ArrayList<>();
    for (JsonNode n : json(namespace, "-json", "neigh", "show", "dev", device, "nud",
        "permanent")) {
      out.add(new Neighbour(namespace, device, n.path("dst").asText(),
          n.path("lladdr").asText("").toLowerCase(Locale.ROOT)));
    }
    return out;
  }

  @Override
  public void replaceNeighbour(Neighbour n) throws LinuxCallException {
    ip(n.namespace(), "neigh", "replace", n.ip(), "lladdr", n.mac(), "dev", n.device(), "nud",
        "permanent");
  }

  @Override
  public void deleteNeighbour(Neighbour n) throws LinuxCallException {
    ip(n.namespace(), "neigh", "del", n.ip(), "dev", n.device());
  }

  @Override
  public AutoCloseable watchLinks(Runnable onChange) throws LinuxCallException {
    // with setpriv the monitor ends with this JVM even when the JVM is killed outright
    List<String> monitor = List.of("ip", "monitor", "link", "address");
    Process p = runner.start(SETPRIV ? java.util.stream.Stream.concat(
        Stream.of("setpriv", "--pdeathsig", "KILL"), monitor.stream()).toList() : monitor);
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        while (r.readLine() != null) {
          onChange.run();
        }
      } catch (IOException e) {
        // the monitor was stopped
      }
    }, "linux-link-monitor");
    reader.setDaemon(true);
    reader.start();
    return () -> {
      p.destroy();
      if (!p.waitFor(2, java.util.concurrent.TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      reader.join(2000);
    };
  }
}
