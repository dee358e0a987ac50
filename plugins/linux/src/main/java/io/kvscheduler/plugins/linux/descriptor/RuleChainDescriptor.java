package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IptablesCalls;
import io.kvscheduler.plugins.linux.linuxcalls.IptablesSave;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code linux-ipt-rulechain}: one iptables chain of one table in one namespace, with its rules in
 * order. The chain is the value's own: applying it flushes the chain and adds its rules again, in
 * one table block of {@code iptables-restore --noflush} (atomic: the chain is never seen half
 * written); a chain of its own (CUSTOM) is created first and removed on delete, a built-in chain is
 * flushed on delete and its policy, when the value set one, set back to ACCEPT. Changes of the same
 * namespace asked for at the same time share one restore ({@link RestoreBatcher}).
 *
 * <p>A chain waits for the interfaces it lists, and for the CUSTOM chains its rules jump or go to
 * ({@code -j NAME}, {@code -g NAME} with a name that is not one of iptables' targets): each CUSTOM
 * chain derives the property {@code linux/iptables/chain/<namespace>/<ipv4|ipv6>/<table>/<chain>}.
 * Its named namespace is created when missing (as interfaces do). Retrieve reads {@code
 * iptables-save} of each namespace that holds a configured chain and compares the rules in the
 * kernel's spelling, which it learns by restoring the configured rules into a throwaway namespace
 * ({@link IptablesCalls#canonical}): a chain as configured is adopted, one changed behind the
 * agent's back is returned as found and rewritten. Chains nobody configured are left alone.
 */
public final class RuleChainDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-ipt-rulechain";

  /** The longest chain name iptables takes (XT_EXTENSION_MAXNAMELEN less its NUL). */
  static final int CHAIN_NAME_CHARS = 28;

  private final LinuxCalls calls;
  private final IptablesCalls iptables;
  private final RestoreBatcher batcher;

  /** Named namespaces made sure of (made when missing) since this descriptor started. */
  private final Set<String> ensured = ConcurrentHashMap.newKeySet();

  /** The kernel's spelling of configured rules: family, table and rules to saved rules. */
  private final Map<List<Object>, List<String>> canonical = new ConcurrentHashMap<>();

  private final NamespaceWatcherDescriptor namespaces;

  private RuleChainDescriptor(
      LinuxCalls calls, IptablesCalls iptables, NamespaceWatcherDescriptor namespaces) {
    this.calls = calls;
    this.iptables = iptables;
    this.namespaces = namespaces;
    this.batcher = new RestoreBatcher(iptables);
  }

  /** The descriptor over {@code iptables}, creating named namespaces through {@code calls}. */
  public static KVDescriptor<RuleChain, Void> create(LinuxCalls calls, IptablesCalls iptables) {
    return create(calls, iptables, new NamespaceWatcherDescriptor(calls));
  }

  /**
   * {@link #create(LinuxCalls, IptablesCalls)} with the namespaces referred to by process, file or
   * microservice label found and watched by {@code namespaces}.
   */
  public static KVDescriptor<RuleChain, Void> create(
      LinuxCalls calls, IptablesCalls iptables, NamespaceWatcherDescriptor namespaces) {
    RuleChainDescriptor d = new RuleChainDescriptor(calls, iptables, namespaces);
    return KVDescriptor.builder(NAME, RuleChain.class)
        .maxConcurrency(LinuxPlugin.MAX_CONCURRENCY)
        .valueTypeName(RuleChain.getDescriptor().getFullName())
        .nbKeyPrefix(LinuxKeys.RULE_CHAIN_PREFIX)
        .keyLabel(k -> k.substring(LinuxKeys.RULE_CHAIN_PREFIX.length()))
        .validate(RuleChainDescriptor::validate)
        .dependencies(
            (k, v) -> {
              namespaces.want(ref(v));
              return dependencies(k, v);
            })
        .derivedValues(RuleChainDescriptor::derived)
        .createWithoutMetadata(d::create)
        .updateWithoutMetadata(d::update)
        .updateWithRecreate((k, a, b, m) -> !sameChain(a, b))
        .delete((k, v, m) -> d.delete(v))
        .retrieve(d::retrieve)
        .retrieveDependencies(InterfaceDescriptor.NAME)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: yes, each chain is its own table block, namespaces apart
        .build();
  }

  // ---- rules about values

  /** The built-in chains of each table. */
  private static final Map<RuleChain.Table, Set<RuleChain.ChainType>> BUILT_IN =
      Map.of(
          RuleChain.Table.FILTER,
          Set.of(
              RuleChain.ChainType.INPUT, RuleChain.ChainType.FORWARD, RuleChain.ChainType.OUTPUT),
          RuleChain.Table.NAT,
          Set.of(
              RuleChain.ChainType.PREROUTING,
              RuleChain.ChainType.INPUT,
              RuleChain.ChainType.OUTPUT,
              RuleChain.ChainType.POSTROUTING),
          RuleChain.Table.MANGLE,
          Set.of(
              RuleChain.ChainType.PREROUTING,
              RuleChain.ChainType.INPUT,
              RuleChain.ChainType.FORWARD,
              RuleChain.ChainType.OUTPUT,
              RuleChain.ChainType.POSTROUTING),
          RuleChain.Table.RAW,
          Set.of(RuleChain.ChainType.PREROUTING, RuleChain.ChainType.OUTPUT),
          RuleChain.Table.SECURITY,
          Set.of(
              RuleChain.ChainType.INPUT, RuleChain.ChainType.FORWARD, RuleChain.ChainType.OUTPUT));

  /** The namespace reference of {@code c}, null for the agent's own. */
  private static NetNamespace ref(RuleChain c) {
    return c.hasNamespace() ? c.getNamespace() : null;
  }

  /**
   * The namespace reference of {@code c} as compared ({@link
   * NamespaceWatcherDescriptor#canonical}): the name of a named namespace, "" for the agent's own.
   */
  static String namespace(RuleChain c) {
    return NamespaceWatcherDescriptor.canonical(ref(c));
  }

  static boolean v6(RuleChain c) {
    return c.getProtocol() == RuleChain.Protocol.IPV6;
  }

  /** The table as iptables names it ({@code filter}). */
  static String table(RuleChain c) {
    return c.getTable().name().toLowerCase(Locale.ROOT);
  }

  /** The chain as iptables names it: chain_name for CUSTOM, else the built-in chain's name. */
  static String chain(RuleChain c) {
    return c.getChainType() == RuleChain.ChainType.CUSTOM
        ? c.getChainName()
        : c.getChainType().name();
  }

  /** Whether {@code a} and {@code b} are the same kernel chain. */
  static boolean sameChain(RuleChain a, RuleChain b) {
    return namespace(a).equals(namespace(b))
        && a.getProtocol() == b.getProtocol()
        && a.getTable() == b.getTable()
        && chain(a).equals(chain(b));
  }

  static void validate(String key, RuleChain c) {
    Invalid bad = new Invalid();
    if (c.getName().isEmpty()) {
      bad.add("a rule chain needs a name", "name");
    }
    if (c.hasNamespace()) {
      NamespaceWatcherDescriptor.validate(c.getNamespace(), bad, "namespace");
    }
    if (c.getProtocol() == RuleChain.Protocol.UNRECOGNIZED) {
      bad.add("unknown protocol (IPV4 or IPV6)", "protocol");
    }
    boolean knownTable = c.getTable() != RuleChain.Table.UNRECOGNIZED;
    if (!knownTable) {
      bad.add("unknown table (FILTER, NAT, MANGLE, RAW or SECURITY)", "table");
    }
    RuleChain.ChainType type = c.getChainType();
    if (type == RuleChain.ChainType.UNRECOGNIZED) {
      bad.add(
          "unknown chain type (CUSTOM, INPUT, OUTPUT, FORWARD, PREROUTING or POSTROUTING)",
          "chain_type");
    } else if (type == RuleChain.ChainType.CUSTOM) {
      chainNameProblem(c.getChainName())
          .ifPresent(
              p ->
                  bad.add(
                      "chain name " + Invalid.quote(c.getChainName()) + ": " + p, "chain_name"));
      if (c.getDefaultPolicy() != RuleChain.Policy.NONE) {
        bad.add("only a built-in chain has a default policy", "default_policy");
      }
    } else {
      if (knownTable && !BUILT_IN.get(c.getTable()).contains(type)) {
        bad.add("table " + c.getTable() + " has no built-in chain " + type, "chain_type");
      }
      if (!c.getChainName().isEmpty() && !c.getChainName().equals(type.name())) {
        bad.add("chain_name names CUSTOM chains only", "chain_name");
      }
    }
    switch (c.getDefaultPolicy()) {
      case NONE, ACCEPT, DROP -> {}
      case UNRECOGNIZED -> bad.add("unknown default policy", "default_policy");
      default -> bad.add("iptables takes only ACCEPT or DROP as a policy", "default_policy");
    }
    for (int i = 0; i < c.getRulesCount(); i++) {
      String r = c.getRules(i);
      if (r.isBlank()) {
        bad.add("rule " + i + " is empty", "rules[" + i + "]");
      } else if (Invalid.hasControl(r)) {
        bad.add(
            "rule " + i + " holds a control character (one rule is one line of iptables-restore)",
            "rules[" + i + "]");
      }
    }
    for (int i = 0; i < c.getInterfacesCount(); i++) {
      if (c.getInterfaces(i).isEmpty()) {
        bad.add("interface " + i + " is empty", "interfaces[" + i + "]");
      }
    }
    bad.throwIfAny();
  }

  /** Why iptables would not take {@code name} as a chain's name, or empty when it would. */
  static Optional<String> chainNameProblem(String name) {
    if (name.isEmpty()) {
      return Optional.of("a CUSTOM chain needs a name");
    }
    if (name.length() > CHAIN_NAME_CHARS) {
      return Optional.of(
          "it is "
              + name.length()
              + " characters long, iptables takes at most "
              + CHAIN_NAME_CHARS);
    }
    if (name.startsWith("-") || name.startsWith("!")) {
      return Optional.of("iptables would read a leading '-' or '!' as an option");
    }
    for (int i = 0; i < name.length(); i++) {
      if (name.charAt(i) <= 0x20 || name.charAt(i) >= 0x7f) {
        return Optional.of("it may hold printable ASCII characters without spaces only");
      }
    }
    return Optional.empty();
  }

  /**
   * iptables' standard targets and the target extensions of iptables 1.8: a jump to any other name
   * is a jump to a chain.
   */
  static final Set<String> TARGETS =
      Set.of(
          "ACCEPT",
          "DROP",
          "RETURN",
          "QUEUE",
          "REJECT",
          "LOG",
          "NFLOG",
          "NFQUEUE",
          "ULOG",
          "MASQUERADE",
          "SNAT",
          "DNAT",
          "REDIRECT",
          "NETMAP",
          "TPROXY",
          "MARK",
          "CONNMARK",
          "CT",
          "NOTRACK",
          "TRACE",
          "TCPMSS",
          "TCPOPTSTRIP",
          "CLASSIFY",
          "DSCP",
          "TOS",
          "TTL",
          "HL",
          "ECN",
          "AUDIT",
          "CHECKSUM",
          "SECMARK",
          "CONNSECMARK",
          "SET",
          "LED",
          "IDLETIMER",
          "HMARK",
          "SYNPROXY",
          "TEE",
          "CLUSTERIP",
          "RATEEST",
          "DNPT",
          "SNPT");

  /**
   * The chains the rules of {@code c} jump or go to (names that are not targets): the word after a
   * {@code -j}, {@code --jump}, {@code -g} or {@code --goto} word, quotes removed. Words are split
   * at the whitespace of iptables-restore's own reading (space, tab, line and page breaks). A scan
   * from one word starting with '-' to the next rather than a pattern: it reads every rule, mostly
   * before the JIT has compiled anything (W11).
   */
  static Set<String> jumps(RuleChain c) {
    Set<String> out = new LinkedHashSet<>();
    String own = chain(c);
    for (String r : c.getRulesList()) {
      int n = r.length();
      for (int at = r.indexOf('-'); at >= 0; at = r.indexOf('-', at + 1)) {
        if (at > 0 && !isSpace(r.charAt(at - 1))) {
          continue; // inside a word
        }
        int end = wordEnd(r, at);
        if (!isJumpOption(r, at, end)) {
          at = end;
          continue;
        }
        int start = end;
        while (start < n && isSpace(r.charAt(start))) {
          start++;
        }
        if (start == n) {
          break;
        }
        at = wordEnd(r, start); // the target, whatever it starts with, is no option
        String to = r.substring(start, at).replace("\"", "").replace("'", "");
        if (!TARGETS.contains(to) && !to.equals(own)) {
          out.add(to);
        }
      }
    }
    return out;
  }

  private static int wordEnd(String r, int from) {
    int i = from;
    while (i < r.length() && !isSpace(r.charAt(i))) {
      i++;
    }
    return i;
  }

  private static boolean isSpace(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\u000b' || ch == '\f' || ch == '\r';
  }

  private static boolean isJumpOption(String r, int from, int to) {
    return switch (to - from) {
      case 2 -> r.charAt(from + 1) == 'j' || r.charAt(from + 1) == 'g';
      case 6 -> r.startsWith("--jump", from) || r.startsWith("--goto", from);
      default -> false;
    };
  }

  /** The property a configured chain derives, on which the chains jumping to it depend. */
  static String chainKey(RuleChain c, String chain) {
    String ns = namespace(c).isEmpty() ? "<default>" : namespace(c);
    return LinuxKeys.ruleChainExistsKey(ns, v6(c) ? "ipv6" : "ipv4", table(c), chain);
  }

  static List<Dependency> dependencies(String key, RuleChain c) {
    List<Dependency> out = new ArrayList<>();
    for (String iface : c.getInterfacesList()) {
      // an interface or a link (bridge, VXLAN, ...) of that logical name
      String asInterface = LinuxKeys.interfaceKey(iface);
      String asLink = LinuxKeys.linkKey(iface);
      out.add(
          Dependency.anyOf(
              "interface-exists-" + iface,
              List.of(asInterface, asLink),
              k -> k.equals(asInterface) || k.equals(asLink)));
    }
    for (String to : jumps(c)) {
      out.add(Dependency.onKey("chain-exists-" + to, chainKey(c, to)));
    }
    NamespaceWatcherDescriptor.dependency(ref(c)).ifPresent(out::add);
    return out;
  }

  static List<KeyValuePair> derived(String key, RuleChain c) {
    if (c.getChainType() != RuleChain.ChainType.CUSTOM || c.getChainName().isEmpty()) {
      return List.of();
    }
    return List.of(new KeyValuePair(chainKey(c, chain(c)), Empty.getDefaultInstance()));
  }

  // ---- the restore lines of a chain

  /** The lines that make the chain as {@code c} configures it. */
  static List<String> applyLines(RuleChain c) {
    String chain = chain(c);
    List<String> lines = new ArrayList<>();
    if (c.getChainType() == RuleChain.ChainType.CUSTOM) {
      lines.add(":" + chain + " - [0:0]");
    } else if (c.getDefaultPolicy() != RuleChain.Policy.NONE) {
      lines.add(":" + chain + " " + c.getDefaultPolicy().name() + " [0:0]");
    }
    lines.add("-F " + chain);
    for (String r : c.getRulesList()) {
      lines.add("-A " + chain + " " + r.strip());
    }
    return lines;
  }

  /** The lines that undo {@code c}. */
  static List<String> deleteLines(RuleChain c) {
    String chain = chain(c);
    List<String> lines = new ArrayList<>();
    if (c.getChainType() == RuleChain.ChainType.CUSTOM) {
      lines.add("-F " + chain);
      lines.add("-X " + chain);
    } else {
      if (c.getDefaultPolicy() != RuleChain.Policy.NONE) {
        lines.add(":" + chain + " ACCEPT [0:0]");
      }
      lines.add("-F " + chain);
    }
    return lines;
  }

  /**
   * Applies {@code lines} to the chain of {@code c}; a named namespace that is not there is created
   * first (asked of the kernel only when the restore could not enter it).
   */
  private void apply(RuleChain c, List<String> lines, boolean deleting) throws LinuxCallException {
    RestoreBatcher.Change change = new RestoreBatcher.Change(table(c), lines, deleting);
    if (NamespaceWatcherDescriptor.byReference(ref(c))) {
      // a namespace of a process or a file: never created by the agent, waited for
      String ns = namespaces.handle(ref(c));
      try {
        batcher.apply(ns, v6(c), change);
      } catch (LinuxCallException e) {
        if (!deleting || !e.notFound()) {
          throw e;
        }
        // gone with its namespace
      }
      return;
    }
    String ns = namespace(c);
    if (!deleting && !ns.isEmpty() && !ensured.contains(ns)) {
      ensured.addAll(calls.namespaces()); // one look for every namespace there
      if (!ensured.contains(ns)) {
        calls.ensureNamespace(ns);
        ensured.add(ns);
      }
    }
    try {
      batcher.apply(namespace(c), v6(c), change);
    } catch (LinuxCallException e) {
      if (namespace(c).isEmpty() || !noNamespace(e)) {
        throw e;
      }
      ensured.remove(ns);
      if (deleting) {
        return; // gone with its namespace
      }
      calls.ensureNamespace(ns);
      ensured.add(ns);
      batcher.apply(namespace(c), v6(c), change);
    }
  }

  /** Whether {@code e} says the named namespace could not be entered (its file is missing). */
  static boolean noNamespace(LinuxCallException e) {
    String m = String.valueOf(e.getMessage());
    return m.contains("cannot open /run/netns/");
  }

  void create(String key, RuleChain c) throws LinuxCallException {
    apply(c, applyLines(c), false);
  }

  void update(String key, RuleChain a, RuleChain b) throws LinuxCallException {
    if (a.getRulesList().equals(b.getRulesList()) && a.getDefaultPolicy() == b.getDefaultPolicy()) {
      return; // only the interfaces changed: nothing in the kernel does
    }
    List<String> lines = new ArrayList<>();
    if (b.getDefaultPolicy() == RuleChain.Policy.NONE
        && a.getDefaultPolicy() != RuleChain.Policy.NONE) {
      lines.add(":" + chain(b) + " ACCEPT [0:0]"); // the policy the chain had before
    }
    lines.addAll(applyLines(b));
    apply(b, lines, false);
  }

  void delete(RuleChain c) throws LinuxCallException {
    apply(c, deleteLines(c), true);
  }

  // ---- reading back

  List<KVWithMetadata<RuleChain, Void>> retrieve(List<KVWithMetadata<RuleChain, Void>> correlate)
      throws LinuxCallException {
    Map<List<Object>, List<KVWithMetadata<RuleChain, Void>>> groups = new LinkedHashMap<>();
    for (KVWithMetadata<RuleChain, Void> kv : correlate) {
      RuleChain c = kv.value();
      groups.computeIfAbsent(List.of(namespace(c), v6(c)), g -> new ArrayList<>()).add(kv);
    }
    List<String> namedOnes = null;
    List<KVWithMetadata<RuleChain, Void>> out = new ArrayList<>();
    for (var group : groups.entrySet()) {
      String ns = (String) group.getKey().get(0);
      boolean v6 = (Boolean) group.getKey().get(1);
      RuleChain first = group.getValue().get(0).value();
      String savedNs = ns;
      if (NamespaceWatcherDescriptor.byReference(ref(first))) {
        namespaces.want(first.getNamespace());
        try {
          savedNs = namespaces.handle(ref(first));
        } catch (LinuxCallException e) {
          continue; // no process carries the label: nothing of it is there
        }
      } else if (!ns.isEmpty()) {
        if (namedOnes == null) {
          namedOnes = calls.namespaces();
        }
        if (!namedOnes.contains(ns)) {
          continue; // nothing of it is there
        }
      }
      String text;
      try {
        text = iptables.save(savedNs, v6);
      } catch (LinuxCallException e) {
        if (savedNs.equals(ns) || !e.notFound()) {
          throw e;
        }
        continue; // the process or file is gone: its chains wait for it
      }
      IptablesSave saved = IptablesSave.parse(text);
      learnSpelling(v6, group.getValue().stream().map(KVWithMetadata::value).toList());
      for (KVWithMetadata<RuleChain, Void> kv : group.getValue()) {
        found(kv.key(), kv.value(), saved).ifPresent(out::add);
      }
    }
    return out;
  }

  /** What the kernel holds of the chain {@code exp} configures, if anything. */
  private Optional<KVWithMetadata<RuleChain, Void>> found(
      String key, RuleChain exp, IptablesSave saved) {
    boolean custom = exp.getChainType() == RuleChain.ChainType.CUSTOM;
    Optional<IptablesSave.Chain> there = saved.chain(table(exp), chain(exp));
    if (there.isEmpty() && custom) {
      return Optional.empty();
    }
    IptablesSave.Chain chain = there.orElse(new IptablesSave.Chain("ACCEPT", List.of()));
    List<String> want = canonical.getOrDefault(spellingKey(v6(exp), exp), exp.getRulesList());
    boolean samePolicy =
        exp.getDefaultPolicy() == RuleChain.Policy.NONE
            || chain.policy().equals(exp.getDefaultPolicy().name());
    if (samePolicy && chain.rules().equals(want)) {
      return Optional.of(new KVWithMetadata<>(key, exp, null, ValueOrigin.FROM_NB));
    }
    RuleChain.Builder b = exp.toBuilder().clearRules().addAllRules(chain.rules());
    if (!samePolicy) {
      b.setDefaultPolicy(
          chain.policy().equals("DROP") ? RuleChain.Policy.DROP : RuleChain.Policy.ACCEPT);
    }
    return Optional.of(new KVWithMetadata<>(key, b.build(), null, ValueOrigin.FROM_NB));
  }

  private static List<Object> spellingKey(boolean v6, RuleChain c) {
    return List.of(v6, table(c), c.getRulesList());
  }

  /**
   * Learns how the kernel spells the rules of {@code chains} (one family, one namespace) not known
   * yet: all of them restored together into a throwaway namespace (so that their jumps to each
   * other resolve), else each on its own; a chain iptables rejects keeps its own spelling.
   */
  private void learnSpelling(boolean v6, List<RuleChain> chains) {
    List<RuleChain> unknown =
        chains.stream().filter(c -> !canonical.containsKey(spellingKey(v6, c))).toList();
    if (unknown.isEmpty()) {
      return;
    }
    try {
      learn(v6, unknown);
    } catch (LinuxCallException e) {
      for (RuleChain c : unknown) {
        try {
          learn(v6, List.of(c));
        } catch (LinuxCallException alone) {
          // iptables rejects it: applying it fails with iptables' message
        }
      }
    }
  }

  private void learn(boolean v6, List<RuleChain> chains) throws LinuxCallException {
    StringBuilder in = new StringBuilder();
    for (RuleChain.Table t : RuleChain.Table.values()) {
      if (t == RuleChain.Table.UNRECOGNIZED) {
        continue;
      }
      List<RuleChain> of = chains.stream().filter(c -> c.getTable() == t).toList();
      if (of.isEmpty()) {
        continue;
      }
      in.append('*').append(t.name().toLowerCase(Locale.ROOT)).append('\n');
      of.stream()
          .filter(c -> c.getChainType() == RuleChain.ChainType.CUSTOM)
          .forEach(c -> in.append(':').append(chain(c)).append(" - [0:0]\n"));
      for (RuleChain c : of) {
        for (String r : c.getRulesList()) {
          in.append("-A ").append(chain(c)).append(' ').append(r.strip()).append('\n');
        }
      }
      in.append("COMMIT\n");
    }
    IptablesSave saved = IptablesSave.parse(iptables.canonical(v6, in.toString()));
    for (RuleChain c : chains) {
      canonical.put(
          spellingKey(v6, c),
          List.copyOf(
              saved.chain(table(c), chain(c)).map(IptablesSave.Chain::rules).orElse(List.of())));
    }
  }
}
