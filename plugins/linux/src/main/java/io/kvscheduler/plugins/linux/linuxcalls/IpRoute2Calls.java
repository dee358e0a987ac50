package io.kvscheduler.plugins.linux.linuxcalls;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * {@link LinuxCalls} through the iproute2 {@code ip} command. Reads ({@code -json}) and writes go
 * to long-running {@code ip -batch} processes ({@link IpSession}): per namespace one for links
 * ({@code ip link ...}), one for addresses, routes and neighbours, and one for reading IPv6 routes.
 * {@code ip netns add} runs on its own, {@code ip -o monitor} follows link and address events.
 * Whatever {@code ip} prints on failure (the kernel's answer, e.g. {@code RTNETLINK answers: File
 * exists}) becomes the exception's message unchanged.
 *
 * <p>Links have a process of their own because {@code ip link show} switches the {@code ip} process
 * it runs in to links for good: the address and route commands after it would fail. A link is read
 * with {@code ip link show dev NAME}, one request to the kernel, not with {@code ip addr show dev
 * NAME}, which reads the addresses of every link of the namespace (its cost grows with the number
 * of links).
 */
public final class IpRoute2Calls implements LinuxCalls, AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final CommandRunner runner;
  private final Duration limit;

  /** The sessions, by namespace and kind ({@link #ADDRESSES}, {@link #IPV6}, {@link #LINKS}). */
  private final ConcurrentMap<List<String>, IpSession> sessions = new ConcurrentHashMap<>();

  /** Whether util-linux's {@code setpriv} is there (to tie the monitor's life to this JVM). */
  private static final boolean SETPRIV =
      Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
          .anyMatch(d -> Files.isExecutable(Path.of(d, "setpriv")));

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
    this.limit = limit;
  }

  /** When a command that changes something was last sent or answered ({@link System#nanoTime}). */
  private volatile long lastChangeNanos = System.nanoTime() - TimeUnit.DAYS.toNanos(1);

  private void changing() {
    lastChangeNanos = System.nanoTime();
  }

  @Override
  public boolean changedWithin(Duration d) {
    return System.nanoTime() - lastChangeNanos < d.toNanos();
  }

  /** The session for addresses, IPv4 routes and neighbours (and reading all links). */
  private static final String ADDRESSES = "";

  /** The session reading IPv6 routes ({@code ip -6}). */
  private static final String IPV6 = "-6";

  /** The session for {@code ip link} commands. */
  private static final String LINKS = "link";

  /**
   * The session reading IPv4 routes of every table ({@code ip -4}): without a family, {@code ip
   * route show table all} prints IPv6 routes too.
   */
  private static final String IPV4 = "-4";

  private IpSession session(String namespace, String kind) {
    return sessions.computeIfAbsent(
        List.of(namespace, kind),
        k -> {
          List<String> argv = new ArrayList<>(ipArgs(namespace, "-d", "-json"));
          if (kind.startsWith("-")) {
            argv.add(kind);
          }
          return new IpSession(runner, argv, limit, this::changing);
        });
  }

  /** Runs the {@code ip} command {@code args} in {@code namespace}. */
  private void ip(String namespace, String... args) throws LinuxCallException {
    session(namespace, ADDRESSES).run(BatchLine.of(args));
  }

  /** Runs the {@code ip link} command {@code args} in {@code namespace}. */
  private void ipLink(String namespace, String... args) throws LinuxCallException {
    session(namespace, LINKS).run(BatchLine.of(args));
  }

  /**
   * Runs the {@code ip -batch} commands of {@code script} (one per line) in a process of their own,
   * stopping at the first failure, whose message is the kernel's answer (without the line saying
   * which command of the batch failed).
   */
  public void batch(String namespace, String script) throws LinuxCallException {
    CommandRunner.Result r = runner.runForResult(ipArgs(namespace, "-batch", "-"), script);
    if (r.exitCode() != 0) {
      String msg = IpSession.kernelAnswer(List.of(r.stderr().split("\n")));
      throw new LinuxCallException(
          "ip -batch",
          r.exitCode(),
          msg.isEmpty() ? "ip -batch failed with exit code " + r.exitCode() : msg);
    }
  }

  /**
   * The iptables calls that go with these: {@code iptables-save} and {@code iptables-restore} run
   * after the same prefix and within the same limit.
   */
  public IptablesCalls iptables() {
    return new IptablesRestoreCalls(runner.commandLine(List.of()), limit);
  }

  /** Whether {@code namespace} is the path of a namespace file, not the name of a named one. */
  static boolean isPath(String namespace) {
    return namespace.startsWith("/");
  }

  private static List<String> ipArgs(String namespace, String... args) {
    List<String> argv = new ArrayList<>();
    if (isPath(namespace)) {
      // ip -n takes the names of /run/netns only: other namespace files are entered by nsenter
      argv.addAll(List.of("nsenter", "--net=" + namespace, "ip"));
    } else {
      argv.add("ip");
    }
    if (!namespace.isEmpty() && !isPath(namespace)) {
      argv.addAll(List.of("-n", namespace));
    }
    argv.addAll(List.of(args));
    return argv;
  }

  /** The JSON answer of the reading command {@code args} in {@code namespace}. */
  private JsonNode json(String namespace, String... args) throws LinuxCallException {
    return session(namespace, ADDRESSES).query(BatchLine.of(args));
  }

  @Override
  public List<String> namespaces() throws LinuxCallException {
    List<String> out = new ArrayList<>();
    // in a process of its own: with no named namespace, ip may print nothing at all
    String listed = runner.run(ipArgs("", "-json", "netns", "list"), null);
    JsonNode all;
    try {
      all = listed.isBlank() ? JSON.createArrayNode() : JSON.readTree(listed);
    } catch (IOException e) {
      throw new LinuxCallException(
          "ip -json netns list", 0, "cannot parse the output of ip: " + e.getMessage());
    }
    for (JsonNode n : all) {
      out.add(n.path("name").asText());
    }
    return out;
  }

  @Override
  public synchronized void ensureNamespace(String name) throws LinuxCallException {
    if (!namespaces().contains(name)) {
      runner.run(ipArgs("", "netns", "add", name), null);
      // a session left from a namespace of the same name, deleted since, holds the old one
      for (String kind : List.of(ADDRESSES, IPV6, LINKS, IPV4)) {
        IpSession stale = sessions.remove(List.of(name, kind));
        if (stale != null) {
          stale.close();
        }
      }
    }
  }

  @Override
  public Map<String, String> namespaceFiles(List<String> paths) throws LinuxCallException {
    Map<String, String> out = new LinkedHashMap<>();
    if (paths.isEmpty()) {
      return out;
    }
    // only files of the namespace file system count (a bind mount of a namespace undone leaves
    // an empty file behind); a path that does not exist makes stat say so on its error output and
    // fail, the others are printed all the same
    List<String> argv =
        new ArrayList<>(
            List.of(
                "sh",
                "-c",
                "stat -f -L -c '%T %n' -- \"$@\"; echo; stat -L -c '%i %n' -- \"$@\"",
                "sh"));
    argv.addAll(paths);
    CommandRunner.Result r = runner.runForResult(argv, null);
    List<String> namespaceFiles = new ArrayList<>();
    boolean types = true;
    for (String line : r.stdout().split("\n", -1)) {
      int space = line.indexOf(' ');
      if (line.isEmpty()) {
        types = false;
      } else if (space > 0 && paths.contains(line.substring(space + 1))) {
        String path = line.substring(space + 1);
        if (types && line.substring(0, space).equals("nsfs")) {
          namespaceFiles.add(path);
        } else if (!types && namespaceFiles.contains(path)) {
          out.put(path, line.substring(0, space));
        }
      }
    }
    return out;
  }

  @Override
  public void closeNamespace(String namespace) {
    for (String kind : List.of(ADDRESSES, IPV6, LINKS, IPV4)) {
      IpSession s = sessions.remove(List.of(namespace, kind));
      if (s != null) {
        s.close();
      }
    }
  }

  @Override
  public List<Link> links(String namespace) throws LinuxCallException {
    return parseLinks(namespace, json(namespace, "addr", "show"));
  }

  @Override
  public Optional<Link> link(String namespace, String name) throws LinuxCallException {
    try {
      return parseLinks(namespace, json(namespace, "addr", "show", "dev", name)).stream()
          .findFirst();
    } catch (LinuxCallException e) {
      if (e.notFound()) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /**
   * Whether an address is one the kernel gives links by itself: IPv6 link-local addresses, and the
   * loopback's {@code 127.0.0.1/8} and {@code ::1/128} (of scope host).
   */
  static boolean kernelsOwn(boolean v6, String address, String scope) {
    return v6 && scope.equals("link")
        || scope.equals("host") && (address.equals("127.0.0.1/8") || address.equals("::1/128"));
  }

  private static List<Link> parseLinks(String namespace, JsonNode links) {
    List<Link> out = new ArrayList<>();
    for (JsonNode n : links) {
      boolean loopback = "loopback".equals(n.path("link_type").asText());
      List<String> addrs = new ArrayList<>();
      for (JsonNode a : n.path("addr_info")) {
        boolean v6 = "inet6".equals(a.path("family").asText());
        String addr = a.path("local").asText() + "/" + a.path("prefixlen").asInt();
        if (kernelsOwn(v6, addr, a.path("scope").asText())) {
          continue;
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
      out.add(
          new Link(
              namespace,
              n.path("ifindex").asInt(),
              n.path("ifname").asText(),
              kind,
              n.path("ifalias").asText(""),
              up,
              n.path("mtu").asInt(),
              n.path("address").asText("").toLowerCase(Locale.ROOT),
              addrs,
              group(n.path("group").asText("default"))));
    }
    return out;
  }

  /** The number of a device group as {@code ip -json} prints it ({@code default}, a number). */
  static int group(String printed) {
    if (printed.equals("default")) {
      return 0;
    }
    try {
      return Integer.parseUnsignedInt(printed);
    } catch (NumberFormatException e) {
      return -1; // a group the system knows by a name (/etc/iproute2/group): not one of ours
    }
  }

  @Override
  public Map<String, Link> findLinks(String namespace, List<String> names)
      throws LinuxCallException {
    List<String> commands =
        names.stream().map(n -> BatchLine.of("link", "show", "dev", n)).toList();
    IpSession links = session(namespace, LINKS);
    Map<String, Link> out = readLinks(namespace, names, links.runAll(commands));
    if (out == null) {
      // ip found a name through the index it remembered, and that index now belongs to a link
      // renamed since: a new process looks the names up afresh
      links.restart();
      out = readLinks(namespace, names, links.runAll(commands));
      if (out == null) {
        throw new LinuxCallException(
            String.join("; ", commands), 1, "ip answered for another link than the one asked for");
      }
    }
    return out;
  }

  /**
   * The links of the answers to {@code link show dev NAME} for each of {@code names}, by name; null
   * when one answer is about a link of another name.
   */
  private static Map<String, Link> readLinks(
      String namespace, List<String> names, List<IpSession.Answer> answers)
      throws LinuxCallException {
    Map<String, Link> out = new LinkedHashMap<>();
    for (int i = 0; i < names.size(); i++) {
      IpSession.Answer a = answers.get(i);
      if (a.failure() == null) {
        for (Link l : parseLinks(namespace, a.document())) {
          if (!l.name().equals(names.get(i))) {
            return null;
          }
          out.put(l.name(), l);
        }
      } else if (!new LinuxCallException(a.command(), 1, a.failure()).notFound()) {
        a.orThrow();
      }
    }
    return out;
  }

  @Override
  public void addVethPair(String name, String peerName, String namespace)
      throws LinuxCallException {
    ipLink("", "link", "add", "name", name, "type", "veth", "peer", "name", peerName);
    if (!namespace.isEmpty()) {
      moveLink(name, namespace);
    }
  }

  /**
   * The request that makes a veth pair {@code name} and {@code peerName} in the agent's namespace,
   * the ends in the device groups {@code making} and {@code making + 1}.
   */
  private static String addVethCommand(String name, String peerName, int making) {
    // "name" spelled out: ip takes a bare word that begins a keyword ("b") as that keyword
    return BatchLine.of(
        "link",
        "add",
        "name",
        name,
        "group",
        Integer.toUnsignedString(making),
        "type",
        "veth",
        "peer",
        "name",
        peerName,
        "group",
        Integer.toUnsignedString(making + 1));
  }

  /**
   * Runs the requests {@code commands} that make a veth pair (the first) and configure it, followed
   * by {@code after}: throws the failure of the first request when the pair was not made, else
   * removes the pair again when a later request failed and throws that failure; returns the
   * answers.
   */
  private List<IpSession.Answer> makeVeth(String name, List<String> commands, List<String> after)
      throws LinuxCallException {
    List<String> all = new ArrayList<>(commands);
    all.addAll(after);
    List<IpSession.Answer> answers = session("", LINKS).runAll(all);
    answers.get(0).orThrow();
    for (IpSession.Answer a : answers.subList(1, commands.size())) {
      if (a.failure() != null) {
        LinuxCallException failed = new LinuxCallException(a.command(), 1, a.failure());
        try {
          deleteLink("", name); // not left half made: the next try creates it afresh
        } catch (LinuxCallException e) {
          failed.addSuppressed(e);
        }
        throw failed;
      }
    }
    return answers;
  }

  @Override
  public Link addVethPair(
      String name,
      String peerName,
      int making,
      String namespace,
      String newName,
      String alias,
      LinkSettings s)
      throws LinuxCallException {
    List<String> commands = List.of(addVethCommand(name, peerName, making));
    if (!namespace.isEmpty()) {
      List<IpSession.Answer> answers =
          makeVeth(
              name,
              commands,
              List.of(BatchLine.of("link", "set", "dev", name, "netns", namespace)));
      answers.get(answers.size() - 1).orThrow();
      return configureLink(namespace, name, newName, alias, s);
    }
    // a new link is down: it can be renamed and configured at once
    List<String> set = new ArrayList<>(List.of("link", "set", "dev", name));
    if (!name.equals(newName)) {
      set.addAll(List.of("name", newName));
    }
    set.addAll(settingArgs(alias == null ? s : s.withAlias(alias)));
    List<IpSession.Answer> answers =
        makeVeth(
            name,
            commands,
            List.of(
                BatchLine.of(set.toArray(String[]::new)),
                BatchLine.of("link", "show", "dev", newName)));
    answers.get(answers.size() - 2).orThrow();
    return shown("", newName, answers.get(answers.size() - 1));
  }

  /** The link {@code name} as {@code answer} (to {@code link show dev NAME}) shows it. */
  private Link shown(String namespace, String name, IpSession.Answer answer)
      throws LinuxCallException {
    Link l = parseLinks(namespace, answer.orThrow()).stream().findFirst().orElse(null);
    if (l != null && l.name().equals(name)) {
      return l;
    }
    return findLinks(namespace, List.of(name)).values().stream()
        .findFirst()
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "ip link show dev " + name, 1, "Device \"" + name + "\" does not exist."));
  }

  @Override
  public Link addVeth(String name, String peerName, int making, String alias, LinkSettings s)
      throws LinuxCallException {
    // the kernel ignores an alias given at creation, so the end is configured right after (where
    // a refused MTU or MAC gets the kernel's own words, not "Invalid argument")
    List<String> commands = new ArrayList<>(List.of(addVethCommand(name, peerName, making)));
    commands.addAll(settingCommands(name, name, alias, s));
    List<IpSession.Answer> answers =
        makeVeth(name, commands, List.of(BatchLine.of("link", "show", "dev", name)));
    return shown("", name, answers.get(answers.size() - 1));
  }

  /**
   * The requests that give the link {@code name} the name {@code newName}, {@code alias} (unless
   * null) and the attributes of {@code s}: the alias first, on its own. The kernel announces a
   * change of alias to the whole network stack (IPv6 then walks every route of the namespace) only
   * when the link is up: a link being made is still down then.
   */
  private static List<String> settingCommands(
      String name, String newName, String alias, LinkSettings s) {
    List<String> out = new ArrayList<>();
    String a = alias != null ? alias : s.alias();
    if (a != null) {
      out.add(BatchLine.of("link", "set", "dev", name, "alias", a));
    }
    // one request: the kernel applies MAC and MTU, then the name, and up/down last, so a link
    // that fails before its rename keeps its old name (and is found there next time)
    List<String> args = new ArrayList<>(List.of("link", "set", "dev", name));
    if (!name.equals(newName)) {
      args.addAll(List.of("name", newName));
    }
    args.addAll(settingArgs(s.withAlias(null)));
    if (args.size() > 4) {
      out.add(BatchLine.of(args.toArray(String[]::new)));
    }
    return out;
  }

  @Override
  public Link configureLink(
      String namespace, String name, String newName, String alias, LinkSettings s)
      throws LinuxCallException {
    List<String> commands = settingCommands(name, newName, alias, s);
    if (!commands.isEmpty()) { // the requests and the reading in one exchange
      List<String> all = new ArrayList<>(commands);
      all.add(BatchLine.of("link", "show", "dev", newName));
      List<IpSession.Answer> answers = session(namespace, LINKS).runAll(all);
      IpSession.Answer failed = null;
      for (IpSession.Answer a : answers.subList(0, commands.size())) {
        if (a.failure() != null) {
          failed = a;
          break;
        }
      }
      if (failed == null) {
        Link l =
            parseLinks(namespace, answers.get(commands.size()).orThrow()).stream()
                .findFirst()
                .orElse(null);
        if (l != null && l.name().equals(newName)) {
          return l;
        }
      } else {
        String last = commands.get(commands.size() - 1);
        if (name.equals(newName)
            || !failed.command().equals(last)
            || !failed.failure().contains("Device or resource busy")) {
          failed.orThrow();
        }
        // an up link cannot be renamed: down first, then the same request
        setLink(namespace, name, LinkSettings.none().withUp(false));
        session(namespace, LINKS).run(last);
      }
    }
    return findLinks(namespace, List.of(newName)).values().stream()
        .findFirst()
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "ip link show dev " + newName,
                    1,
                    "Device \"" + newName + "\" does not exist."));
  }

  @Override
  public void addLink(String namespace, String name, String kind, int making)
      throws LinuxCallException {
    ipLink(
        namespace,
        "link",
        "add",
        "name",
        name,
        "group",
        Integer.toUnsignedString(making),
        "type",
        kind);
  }

  @Override
  public Link createLink(
      String namespace, String name, List<String> addArgs, String alias, LinkSettings s)
      throws LinuxCallException {
    List<String> add = new ArrayList<>(List.of("link", "add"));
    add.addAll(addArgs);
    // the request alone first: ip runs every command of an exchange whatever became of those
    // before it, so the settings sent with it would reach a foreign link that holds the name
    session(namespace, LINKS).run(BatchLine.of(add.toArray(String[]::new)));
    List<String> commands = new ArrayList<>(settingCommands(name, name, alias, s));
    commands.add(BatchLine.of("link", "show", "dev", name));
    List<IpSession.Answer> answers = session(namespace, LINKS).runAll(commands);
    for (IpSession.Answer a : answers.subList(0, commands.size() - 1)) {
      if (a.failure() != null) {
        LinuxCallException failed = new LinuxCallException(a.command(), 1, a.failure());
        try {
          deleteLink(namespace, name); // not left half made: the next try creates it afresh
        } catch (LinuxCallException e) {
          failed.addSuppressed(e);
        }
        throw failed;
      }
    }
    return shown(namespace, name, answers.get(answers.size() - 1));
  }

  @Override
  public void linkRequests(String namespace, List<List<String>> requests)
      throws LinuxCallException {
    if (requests.isEmpty()) {
      return;
    }
    List<String> commands =
        requests.stream().map(r -> BatchLine.of(r.toArray(String[]::new))).toList();
    for (IpSession.Answer a : session(namespace, LINKS).runAll(commands)) {
      a.orThrow();
    }
  }

  @Override
  public List<LinkDetails> linkDetails(String namespace) throws LinuxCallException {
    List<LinkDetails> out = new ArrayList<>();
    JsonNode all = session(namespace, LINKS).query(BatchLine.of("link", "show"));
    List<Link> links = parseLinks(namespace, all);
    Map<Integer, String> names = new java.util.HashMap<>();
    links.forEach(l -> names.put(l.index(), l.name()));
    int i = 0;
    for (JsonNode n : all) {
      Link l = links.get(i++);
      JsonNode data = n.path("linkinfo").path("info_data");
      Map<String, String> info = new LinkedHashMap<>();
      data.fields()
          .forEachRemaining(
              f -> {
                if (f.getValue().isValueNode()) {
                  info.put(f.getKey(), f.getValue().asText());
                }
              });
      // a macvlan's or VLAN's parent is "link" (with "link_netnsid" when in another namespace);
      // a VXLAN's underlay device is "link" of its data
      String parent = n.has("link_netnsid") ? "" : n.path("link").asText("");
      if (l.kind().equals("vxlan")) {
        parent = data.path("link").asText("");
      } else if (l.kind().equals("veth")) {
        parent = "";
      }
      out.add(new LinkDetails(l, n.path("master").asText(""), parent, info));
    }
    return out;
  }

  @Override
  public void deleteLink(String namespace, String name) throws LinuxCallException {
    ipLink(namespace, "link", "del", "dev", name);
  }

  @Override
  public void moveLink(String name, String namespace) throws LinuxCallException {
    ipLink("", "link", "set", "dev", name, "netns", namespace);
  }

  @Override
  public void renameLink(String namespace, String name, String newName) throws LinuxCallException {
    ipLink(namespace, "link", "set", "dev", name, "name", newName);
  }

  @Override
  public void setLink(String namespace, String name, LinkSettings s) throws LinuxCallException {
    if (s.isEmpty()) {
      return;
    }
    List<String> args = new ArrayList<>(List.of("link", "set", "dev", name));
    args.addAll(settingArgs(s));
    ipLink(namespace, args.toArray(String[]::new));
  }

  /** The {@code ip link set} arguments of the attributes of {@code s} that are not null. */
  private static List<String> settingArgs(LinkSettings s) {
    List<String> args = new ArrayList<>();
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
    return args;
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
    for (String family : List.of(IPV4, IPV6)) {
      for (JsonNode n :
          session(namespace, family)
              .query(BatchLine.of("route", "show", "table", "all", "dev", device))) {
        String proto = n.path("protocol").asText("");
        String type = n.path("type").asText("unicast");
        String table = n.path("table").asText("main");
        if (proto.equals("kernel")
            || proto.equals("ra")
            || !type.equals("unicast")
            || table.equals("local")) {
          continue; // put there by an address or by the kernel itself
        }
        String dst = n.path("dst").asText();
        boolean v6 = family.equals(IPV6);
        if (dst.equals("default")) {
          dst = v6 ? "::/0" : "0.0.0.0/0";
        } else if (!dst.contains("/")) {
          dst = dst + (v6 ? "/128" : "/32");
        }
        if (v6 && (dst.startsWith("fe80:") || dst.startsWith("ff00:"))) {
          continue;
        }
        out.add(
            new RouteEntry(
                namespace,
                device,
                dst,
                n.path("gateway").asText(""),
                n.path("metric").asInt(0),
                n.path("scope").asText("global"),
                proto.equals(Integer.toString(ROUTE_PROTOCOL)),
                tableNumber(table)));
      }
    }
    return out;
  }

  /**
   * The number of a routing table as {@code ip -json} prints it: {@code main} is 0, {@code default}
   * 253, a number as such; -1 for a table the system knows by another name only.
   */
  static int tableNumber(String printed) {
    switch (printed) {
      case "main":
        return 0;
      case "default":
        return 253;
      case "local":
        return 255;
      default:
        try {
          return Integer.parseUnsignedInt(printed);
        } catch (NumberFormatException e) {
          return -1;
        }
    }
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
    if (r.table() != 0) {
      args.addAll(List.of("table", Integer.toUnsignedString(r.table())));
    }
    if (!r.scope().isEmpty() && !r.destination().contains(":")) {
      args.addAll(List.of("scope", r.scope()));
    }
    if (!verb.equals("del")) {
      args.addAll(List.of("proto", Integer.toString(ROUTE_PROTOCOL)));
    }
    return args;
  }

  @Override
  public void changeRoute(RouteEntry old, RouteEntry now) throws LinuxCallException {
    if (old.metric() == now.metric() && old.table() == now.table()) {
      replaceRoute(now);
      return;
    }
    // the new route first, then the old one gone, in one exchange with the kernel
    List<IpSession.Answer> answers =
        session(now.namespace(), ADDRESSES)
            .runAll(
                List.of(
                    BatchLine.of(routeArgs("replace", now).toArray(String[]::new)),
                    BatchLine.of(routeArgs("del", old).toArray(String[]::new))));
    answers.get(0).orThrow();
    try {
      answers.get(1).orThrow();
    } catch (LinuxCallException e) {
      if (!e.notFound()) {
        throw e;
      }
    }
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
    for (JsonNode n : json(namespace, "neigh", "show", "dev", device, "nud", "permanent")) {
      out.add(
          new Neighbour(
              namespace,
              device,
              n.path("dst").asText(),
              n.path("lladdr").asText("").toLowerCase(Locale.ROOT)));
    }
    return out;
  }

  @Override
  public void replaceNeighbour(Neighbour n) throws LinuxCallException {
    ip(
        n.namespace(),
        "neigh",
        "replace",
        n.ip(),
        "lladdr",
        n.mac(),
        "dev",
        n.device(),
        "nud",
        "permanent");
  }

  @Override
  public void deleteNeighbour(Neighbour n) throws LinuxCallException {
    ip(n.namespace(), "neigh", "del", n.ip(), "dev", n.device());
  }

  /** Ends the {@code ip} processes of the sessions. */
  @Override
  public void close() {
    sessions.values().forEach(IpSession::close);
    sessions.clear();
  }

  @Override
  public AutoCloseable watchLinks(Consumer<LinkEvent> onEvent) throws LinuxCallException {
    // with setpriv the monitor ends with this JVM even when the JVM is killed outright
    List<String> monitor = List.of("ip", "-o", "monitor", "link", "address");
    Process p =
        runner.start(
            SETPRIV
                ? Stream.concat(Stream.of("setpriv", "--pdeathsig", "KILL"), monitor.stream())
                    .toList()
                : monitor);
    AtomicBoolean closed = new AtomicBoolean();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  // a line of another shape (e.g. "netlink receive error ... No buffer space
                  // available": the kernel dropped events) is a Lost event
                  MonitorLines.parse(line).ifPresent(onEvent);
                }
              } catch (IOException e) {
                // the monitor was stopped, or ended
              }
              if (!closed.get()) {
                onEvent.accept(new LinkEvent.Lost("ip monitor ended", true));
              }
            },
            "linux-link-monitor");
    reader.setDaemon(true);
    reader.start();
    return () -> {
      closed.set(true);
      p.destroy();
      if (!p.waitFor(2, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      reader.join(2000);
    };
  }
}
