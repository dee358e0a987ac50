package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinkDetails;
import io.kvscheduler.plugins.linux.linuxcalls.LinkSettings;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.links.BondLink;
import io.kvscheduler.plugins.linux.model.links.BridgeLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.MacvlanLink;
import io.kvscheduler.plugins.linux.model.links.VlanLink;
import io.kvscheduler.plugins.linux.model.links.VrfLink;
import io.kvscheduler.plugins.linux.model.links.VxlanLink;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code linux-link}: the links of our extension package ({@code kvscheduler.linux.links.Link}):
 * bridges, VXLAN tunnels, macvlan links, VLAN sub-interfaces, bonds and VRF devices, in the agent's
 * namespace, a named one, or one referred to by process, file or microservice label (waited for
 * through {@link NamespaceWatcherDescriptor}, as interfaces are). Each is made with one {@code ip
 * link add} and configured (alias, MTU, MAC, up) in the same exchange; it derives the same state
 * and address values as an interface, so addresses, routes and ARP entries use it by its logical
 * name. A macvlan or VLAN waits for its parent, a VXLAN for its underlay device (interfaces or
 * links, by logical name, in the link's namespace). In place: host name, up/down, MTU, MAC, a
 * bridge's STP, a macvlan's mode, a VXLAN's unicast remote. Everything else (kind, namespace, VNI,
 * local address, group, port, underlay, parent, VLAN id, bond mode, VRF table) re-creates the link.
 * Links carry the alias {@code <agent prefix without its last '/'>+links/<name>}, which the
 * interface descriptor does not take for its own; Retrieve returns the links with this prefix in
 * the agent's, every named namespace and every namespace a configured link refers to. They are made
 * in a device group of their own ({@link #makingGroup}): a Create that finds its name taken by a
 * link of that group without an alias (an agent was killed while making it) makes it afresh.
 */
public final class LinkDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-link";

  /** The UDP port of a VXLAN without one (IANA's). */
  static final int VXLAN_PORT = 4789;

  private final LinuxCalls calls;
  private final String aliasPrefix;
  private final Supplier<LinuxIfIndex> interfaces;
  private final NamespaceWatcherDescriptor namespaces;
  private final int making;

  private LinkDescriptor(
      LinuxCalls calls,
      String aliasPrefix,
      Supplier<LinuxIfIndex> interfaces,
      NamespaceWatcherDescriptor namespaces) {
    this.calls = calls;
    this.aliasPrefix = aliasPrefix;
    this.interfaces = interfaces;
    this.namespaces = namespaces;
    this.making = makingGroup(aliasPrefix);
  }

  /**
   * The device group of the links made with the alias prefix {@code aliasPrefix}, set by the
   * request that creates them (the kernel takes no alias at creation): a link of this group without
   * an alias is one an agent killed between the two began to make. Derived from the prefix, with
   * the bits of {@code 0x6b77} above (the interface descriptor's groups have {@code 0x6b76}).
   */
  public static int makingGroup(String aliasPrefix) {
    int h = 0x811c9dc5;
    for (byte b : aliasPrefix.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x01000193;
    }
    return 0x6b770000 | (h & 0xffff);
  }

  /**
   * The alias prefix of links for an agent whose interfaces carry {@code agentPrefix} ({@code
   * /vnf-agent/<label>/}): {@code /vnf-agent/<label>+links/}, which does not begin with it.
   */
  public static String aliasPrefix(String agentPrefix) {
    String p =
        agentPrefix.endsWith("/")
            ? agentPrefix.substring(0, agentPrefix.length() - 1)
            : agentPrefix;
    return p + "+links/";
  }

  /**
   * The descriptor over {@code calls}; {@code interfaces} finds parents and underlay devices
   * (interfaces and links) by logical name once the plugin has registered both descriptors.
   */
  public static KVDescriptor<Link, LinuxIfMetadata> create(
      LinuxCalls calls, String agentPrefix, Supplier<LinuxIfIndex> interfaces) {
    return create(calls, agentPrefix, interfaces, new NamespaceWatcherDescriptor(calls));
  }

  /**
   * {@link #create(LinuxCalls, String, Supplier)} with the namespaces referred to by process, file
   * or microservice label found and watched by {@code namespaces}.
   */
  public static KVDescriptor<Link, LinuxIfMetadata> create(
      LinuxCalls calls,
      String agentPrefix,
      Supplier<LinuxIfIndex> interfaces,
      NamespaceWatcherDescriptor namespaces) {
    String prefix = aliasPrefix(agentPrefix);
    LinkDescriptor d = new LinkDescriptor(calls, prefix, interfaces, namespaces);
    return KVDescriptor.builder(NAME, Link.class)
        .withMetadata(LinuxIfMetadata.class)
        .metadataIndex(LinuxIfIndex.BY_HOST_NAME, LinuxIfIndex::hostNameKeys)
        .valueTypeName(Link.getDescriptor().getFullName())
        .nbKeyPrefix(LinuxKeys.LINK_PREFIX)
        .keyLabel(k -> k.substring(LinuxKeys.LINK_PREFIX.length()))
        .equivalence(LinkDescriptor::equivalent)
        .validate((k, v) -> validate(prefix, k, v))
        .dependencies(
            (k, v) -> {
              namespaces.want(ref(v));
              return dependencies(k, v);
            })
        .derivedValues(LinkDescriptor::derived)
        .create(d::create)
        .update(d::update)
        .updateWithRecreate((k, a, b, m) -> needsRecreate(a, b))
        .delete(d::delete)
        .retrieve(d::retrieve)
        .retrieveDependencies(InterfaceDescriptor.NAME)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: no, a link may be the parent or underlay of another
        .build();
  }

  // ---- rules about values

  /** The kernel name of {@code l}: host_if_name or name. */
  public static String hostName(Link l) {
    return l.getHostIfName().isEmpty() ? l.getName() : l.getHostIfName();
  }

  /** The namespace reference of {@code l}, null for the agent's own. */
  private static NetNamespace ref(Link l) {
    return l.hasNamespace() ? l.getNamespace() : null;
  }

  /**
   * The namespace reference of {@code l} as compared ({@link
   * NamespaceWatcherDescriptor#canonical}): the name of a named namespace, "" for the agent's own.
   */
  public static String namespace(Link l) {
    return NamespaceWatcherDescriptor.canonical(ref(l));
  }

  /** The logical name of the link {@code l} sits on (parent, underlay), "" when none. */
  static String lower(Link l) {
    return switch (l.getKindCase()) {
      case MACVLAN -> l.getMacvlan().getParent();
      case VLAN -> l.getVlan().getParent();
      case VXLAN -> l.getVxlan().getUnderlay();
      default -> "";
    };
  }

  /** Whether {@code a} and {@code b} are the same address, or both empty. */
  private static boolean sameAddress(String a, String b) {
    return a.equals(b) || IpNet.sameAddress(a, b);
  }

  static int port(VxlanLink v) {
    return v.getDstPort() == 0 ? VXLAN_PORT : v.getDstPort();
  }

  private static boolean multicast(byte[] a) {
    return a.length == 4 ? (a[0] & 0xf0) == 0xe0 : (a[0] & 0xff) == 0xff;
  }

  /** Checks an address field of a VXLAN; returns its bytes when it is one. */
  private static Optional<byte[]> address(Invalid bad, String text, String field) {
    if (text.isEmpty()) {
      return Optional.empty();
    }
    Optional<byte[]> a = IpNet.parseAddress(text);
    if (a.isEmpty()) {
      bad.add(field + " " + Invalid.quote(text) + " is not an IP address", field);
    }
    return a;
  }

  private static void logicalName(Invalid bad, String name, String field, String what) {
    if (name.isEmpty()) {
      bad.add("a " + what + " needs its " + field, field);
    } else {
      Invalid.textProblem(name)
          .ifPresent(p -> bad.add(field + " " + Invalid.quote(name) + ": " + p, field));
    }
  }

  /**
   * Refuses {@code l} unless each field that reaches an {@code ip} command is what the kernel takes
   * (as for interfaces: see {@link Invalid}) and the attributes of its kind are in range.
   */
  static void validate(String aliasPrefix, String key, Link l) {
    Invalid bad = new Invalid();
    if (l.getName().isEmpty()) {
      bad.add("the link has no name", "name");
    } else if (!LinuxKeys.linkKey(l.getName()).equals(key)) {
      bad.add("name " + Invalid.quote(l.getName()) + " does not match the key", "name");
    }
    Invalid.textProblem(l.getName())
        .ifPresent(p -> bad.add("name " + Invalid.quote(l.getName()) + ": " + p, "name"));
    if (l.getName().indexOf('/') >= 0) {
      bad.add("name " + Invalid.quote(l.getName()) + " holds '/'", "name");
    }
    if (l.hasNamespace()) {
      NamespaceWatcherDescriptor.validate(l.getNamespace(), bad, "namespace");
    }
    String host = hostName(l);
    Invalid.linkNameProblem(host)
        .ifPresent(
            p ->
                bad.add(
                    "host name "
                        + Invalid.quote(host)
                        + " is not a valid Linux interface name: "
                        + p,
                    l.getHostIfName().isEmpty() ? "name" : "host_if_name"));
    if (!l.getPhysAddress().isEmpty() && !Invalid.isMac(l.getPhysAddress())) {
      bad.add(Invalid.quote(l.getPhysAddress()) + " is not a MAC address", "phys_address");
    }
    for (String a : l.getIpAddressesList()) {
      if (IpNet.parse(a).isEmpty()) {
        bad.add(
            Invalid.quote(a) + " is not an IP address with a prefix length (e.g. 10.0.0.1/24)",
            "ip_addresses");
      }
    }
    switch (l.getKindCase()) {
      case KIND_NOT_SET ->
          bad.add("a link needs its kind: bridge, vxlan, macvlan, vlan, bond or vrf", "kind");
      case BRIDGE -> {}
      case VXLAN -> {
        VxlanLink v = l.getVxlan();
        if (v.getVni() < 1 || v.getVni() > 0xffffff) {
          bad.add("vni " + Integer.toUnsignedString(v.getVni()) + " is not 1 to 16777215", "vni");
        }
        if (Integer.compareUnsigned(v.getDstPort(), 65535) > 0) {
          bad.add(
              "dst_port " + Integer.toUnsignedString(v.getDstPort()) + " is not a UDP port",
              "dst_port");
        }
        Optional<byte[]> local = address(bad, v.getLocal(), "local");
        Optional<byte[]> remote = address(bad, v.getRemote(), "remote");
        Optional<byte[]> group = address(bad, v.getGroup(), "group");
        if (!v.getRemote().isEmpty() && !v.getGroup().isEmpty()) {
          bad.add("a VXLAN has a remote or a group, not both", "remote", "group");
        }
        if (remote.isPresent() && multicast(remote.get())) {
          bad.add("remote " + Invalid.quote(v.getRemote()) + " is a multicast address", "remote");
        }
        if (group.isPresent() && !multicast(group.get())) {
          bad.add("group " + Invalid.quote(v.getGroup()) + " is not a multicast address", "group");
        }
        if (!v.getGroup().isEmpty() && v.getUnderlay().isEmpty()) {
          bad.add("a multicast group needs the underlay device", "underlay");
        }
        Optional<byte[]> peer = remote.isPresent() ? remote : group;
        if (local.isPresent() && peer.isPresent() && local.get().length != peer.get().length) {
          bad.add("local and remote/group are of different IP versions", "local");
        }
        if (!v.getUnderlay().isEmpty()) {
          logicalName(bad, v.getUnderlay(), "underlay", "VXLAN");
        }
      }
      case MACVLAN -> {
        logicalName(bad, l.getMacvlan().getParent(), "parent", "macvlan link");
        if (l.getMacvlan().getMode() == MacvlanLink.Mode.UNRECOGNIZED) {
          bad.add("unknown macvlan mode", "mode");
        }
      }
      case VLAN -> {
        logicalName(bad, l.getVlan().getParent(), "parent", "VLAN sub-interface");
        if (l.getVlan().getId() < 1 || l.getVlan().getId() > 4094) {
          bad.add(
              "VLAN id " + Integer.toUnsignedString(l.getVlan().getId()) + " is not 1 to 4094",
              "id");
        }
      }
      case BOND -> {
        if (l.getBond().getMode() == BondLink.Mode.UNRECOGNIZED) {
          bad.add("unknown bond mode", "mode");
        }
      }
      case VRF -> {
        Invalid.vrfTableProblem(l.getVrf().getRoutingTable())
            .ifPresent(p -> bad.add(p, "routing_table"));
      }
    }
    if (Invalid.textProblem(l.getName()).isEmpty()) {
      Invalid.aliasProblem(aliasPrefix + l.getName()).ifPresent(p -> bad.add(p, "name"));
    }
    bad.throwIfAny();
  }

  static List<Dependency> dependencies(String key, Link l) {
    List<Dependency> out = new ArrayList<>();
    NamespaceWatcherDescriptor.dependency(ref(l)).ifPresent(out::add);
    String lower = lower(l);
    if (!lower.isEmpty()) {
      String label = l.getKindCase() == Link.KindCase.VXLAN ? "underlay-exists" : "parent-exists";
      // an interface or a link of that name, up or down
      out.add(Dependency.anyOfPrefixes(label, LinuxKeys.STATE_PREFIX + lower + "/"));
    }
    return out;
  }

  static List<KeyValuePair> derived(String key, Link l) {
    List<KeyValuePair> out = new ArrayList<>();
    out.add(
        new KeyValuePair(
            LinuxKeys.stateKey(l.getName(), l.getEnabled()), Empty.getDefaultInstance()));
    for (String a : new LinkedHashSet<>(l.getIpAddressesList())) {
      // the address descriptor's value type: what it needs to know of the link
      Interface v =
          Interface.newBuilder()
              .setName(l.getName())
              .setHostIfName(hostName(l))
              .addIpAddresses(a)
              .build();
      out.add(new KeyValuePair(LinuxKeys.addressKey(l.getName(), AddressSource.STATIC, a), v));
    }
    return out;
  }

  /** Whether {@code a} (as the kernel has it) is {@code b} (as configured) in every field set. */
  static boolean equivalent(String key, Link a, Link b) {
    if (!namespace(a).equals(namespace(b))
        || !hostName(a).equals(hostName(b))
        || a.getEnabled() != b.getEnabled()
        || (b.getMtu() != 0 && a.getMtu() != b.getMtu())
        || (!b.getPhysAddress().isEmpty()
            && !b.getPhysAddress().equalsIgnoreCase(a.getPhysAddress()))) {
      return false;
    }
    return sameKind(a, b);
  }

  private static boolean sameKind(Link a, Link b) {
    if (a.getKindCase() != b.getKindCase()) {
      return false;
    }
    return switch (b.getKindCase()) {
      case BRIDGE -> a.getBridge().getStp() == b.getBridge().getStp();
      case VXLAN -> {
        VxlanLink x = a.getVxlan();
        VxlanLink y = b.getVxlan();
        yield x.getVni() == y.getVni()
            && port(x) == port(y)
            && sameAddress(x.getLocal(), y.getLocal())
            && sameAddress(x.getRemote(), y.getRemote())
            && sameAddress(x.getGroup(), y.getGroup())
            && x.getUnderlay().equals(y.getUnderlay());
      }
      default -> kindOf(a).equals(kindOf(b));
    };
  }

  /** The attributes of {@code l}'s kind alone. */
  private static Object kindOf(Link l) {
    return switch (l.getKindCase()) {
      case MACVLAN -> l.getMacvlan();
      case VLAN -> l.getVlan();
      case BOND -> l.getBond();
      case VRF -> l.getVrf();
      case BRIDGE -> l.getBridge();
      case VXLAN -> l.getVxlan();
      default -> "";
    };
  }

  /** Whether the kernel cannot change {@code a} into {@code b} in place. */
  static boolean needsRecreate(Link a, Link b) {
    if (a.getKindCase() != b.getKindCase() || !namespace(a).equals(namespace(b))) {
      return true;
    }
    return switch (b.getKindCase()) {
      case VXLAN -> {
        VxlanLink x = a.getVxlan();
        VxlanLink y = b.getVxlan();
        yield x.getVni() != y.getVni()
            || port(x) != port(y)
            || !sameAddress(x.getLocal(), y.getLocal())
            || !sameAddress(x.getGroup(), y.getGroup())
            || !x.getUnderlay().equals(y.getUnderlay())
            || x.getRemote().isEmpty() != y.getRemote().isEmpty();
      }
      case MACVLAN -> !a.getMacvlan().getParent().equals(b.getMacvlan().getParent());
      case VLAN -> !a.getVlan().equals(b.getVlan());
      case BOND -> !a.getBond().equals(b.getBond());
      case VRF -> !a.getVrf().equals(b.getVrf());
      default -> false;
    };
  }

  // ---- operations

  private String alias(Link l) {
    return aliasPrefix + l.getName();
  }

  private static LinkSettings settings(Link l) {
    LinkSettings s = LinkSettings.none();
    if (l.getMtu() != 0) {
      s = s.withMtu(l.getMtu());
    }
    if (!l.getPhysAddress().isEmpty()) {
      s = s.withMac(l.getPhysAddress());
    }
    return s.withUp(l.getEnabled());
  }

  /** The host name of the interface or link {@code name}, which must be in namespace {@code ns}. */
  private String lowerHost(Link l, String name, String field) throws LinuxCallException {
    LinuxIfMetadata m =
        interfaces
            .get()
            .lookup(name)
            .orElseThrow(
                () ->
                    new LinuxCallException(
                        "link " + Invalid.quote(l.getName()),
                        1,
                        field + " " + Invalid.quote(name) + " is not configured"));
    if (!m.namespace().equals(namespaces.handle(ref(l)))) {
      throw new LinuxCallException(
          "link " + Invalid.quote(l.getName()),
          1,
          field
              + " "
              + Invalid.quote(name)
              + " is in namespace '"
              + m.namespace()
              + "', the link in '"
              + namespaces.handle(ref(l))
              + "': they must share one");
    }
    return m.hostIfName();
  }

  private static String lower(MacvlanLink.Mode m) {
    return m.name().toLowerCase(Locale.ROOT);
  }

  private static String bondMode(BondLink.Mode m) {
    return m == BondLink.Mode.LACP
        ? "802.3ad"
        : m.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The words after {@code ip link add} that make {@code l}. */
  List<String> addArgs(Link l) throws LinuxCallException {
    String host = hostName(l);
    List<String> a = new ArrayList<>();
    switch (l.getKindCase()) {
      case BRIDGE -> {
        a.addAll(List.of("name", host, "type", "bridge"));
        a.addAll(List.of("stp_state", l.getBridge().getStp() ? "1" : "0"));
      }
      case VXLAN -> {
        VxlanLink v = l.getVxlan();
        a.addAll(List.of("name", host, "type", "vxlan", "id", Integer.toString(v.getVni())));
        if (!v.getLocal().isEmpty()) {
          a.addAll(List.of("local", v.getLocal()));
        }
        if (!v.getRemote().isEmpty()) {
          a.addAll(List.of("remote", v.getRemote()));
        }
        if (!v.getGroup().isEmpty()) {
          a.addAll(List.of("group", v.getGroup()));
        }
        if (!v.getUnderlay().isEmpty()) {
          a.addAll(List.of("dev", lowerHost(l, v.getUnderlay(), "underlay")));
        }
        a.addAll(List.of("dstport", Integer.toString(port(v))));
      }
      case MACVLAN -> {
        a.addAll(List.of("link", lowerHost(l, l.getMacvlan().getParent(), "parent")));
        a.addAll(List.of("name", host, "type", "macvlan", "mode", lower(l.getMacvlan().getMode())));
      }
      case VLAN -> {
        a.addAll(List.of("link", lowerHost(l, l.getVlan().getParent(), "parent")));
        a.addAll(
            List.of("name", host, "type", "vlan", "id", Integer.toString(l.getVlan().getId())));
      }
      case BOND ->
          a.addAll(List.of("name", host, "type", "bond", "mode", bondMode(l.getBond().getMode())));
      case VRF ->
          a.addAll(
              List.of(
                  "name",
                  host,
                  "type",
                  "vrf",
                  "table",
                  Integer.toUnsignedString(l.getVrf().getRoutingTable())));
      default -> throw new IllegalStateException("kind " + l.getKindCase() + " passed validation");
    }
    // after "name NAME" (after "link PARENT name NAME" for macvlan and VLAN)
    int at =
        l.getKindCase() == Link.KindCase.MACVLAN || l.getKindCase() == Link.KindCase.VLAN ? 4 : 2;
    a.addAll(at, List.of("group", Integer.toUnsignedString(making)));
    return a;
  }

  private static LinuxIfMetadata metadata(io.kvscheduler.plugins.linux.linuxcalls.Link k) {
    return new LinuxIfMetadata(k.index(), k.namespace(), k.name());
  }

  LinuxIfMetadata create(String key, Link l) throws LinuxCallException {
    String ns = namespaces.handle(ref(l));
    String host = hostName(l);
    if (NamespaceWatcherDescriptor.named(ref(l))) {
      calls.ensureNamespace(ns);
    }
    List<String> add = addArgs(l);
    try {
      return metadata(calls.createLink(ns, host, add, alias(l), settings(l)));
    } catch (LinuxCallException e) {
      if (!e.exists()) {
        throw e;
      }
      // an earlier try made it (the alias says so), or an agent killed while making it left it
      // (its group without an alias): made afresh; a foreign link stays
      io.kvscheduler.plugins.linux.linuxcalls.Link there =
          calls.findLinks(ns, List.of(host)).get(host);
      boolean ours =
          there != null
              && (there.alias().equals(alias(l))
                  || (there.group() == making && there.alias().isEmpty()));
      if (!ours) {
        throw e;
      }
      calls.deleteLink(ns, host);
      return metadata(calls.createLink(ns, host, add, alias(l), settings(l)));
    }
  }

  LinuxIfMetadata update(String key, Link a, Link b, LinuxIfMetadata m) throws LinuxCallException {
    String ns = m.namespace();
    String host = hostName(b);
    List<List<String>> kind = new ArrayList<>();
    switch (b.getKindCase()) {
      case BRIDGE -> {
        if (a.getBridge().getStp() != b.getBridge().getStp()) {
          kind.add(
              List.of(
                  "link",
                  "set",
                  "dev",
                  m.hostIfName(),
                  "type",
                  "bridge",
                  "stp_state",
                  b.getBridge().getStp() ? "1" : "0"));
        }
      }
      case MACVLAN -> {
        if (a.getMacvlan().getMode() != b.getMacvlan().getMode()) {
          kind.add(
              List.of(
                  "link",
                  "set",
                  "dev",
                  m.hostIfName(),
                  "type",
                  "macvlan",
                  "mode",
                  lower(b.getMacvlan().getMode())));
        }
      }
      case VXLAN -> {
        if (!sameAddress(a.getVxlan().getRemote(), b.getVxlan().getRemote())) {
          kind.add(
              List.of(
                  "link",
                  "set",
                  "dev",
                  m.hostIfName(),
                  "type",
                  "vxlan",
                  "remote",
                  b.getVxlan().getRemote()));
        }
      }
      default -> {}
    }
    calls.linkRequests(ns, kind);
    LinkSettings s = LinkSettings.none().withUp(b.getEnabled());
    if (b.getMtu() != 0 && a.getMtu() != b.getMtu()) {
      s = s.withMtu(b.getMtu());
    }
    if (!b.getPhysAddress().isEmpty() && !b.getPhysAddress().equalsIgnoreCase(a.getPhysAddress())) {
      s = s.withMac(b.getPhysAddress());
    }
    return metadata(calls.configureLink(ns, m.hostIfName(), host, null, s));
  }

  void delete(String key, Link l, LinuxIfMetadata m) throws LinuxCallException {
    String host = m != null ? m.hostIfName() : hostName(l);
    // where it was made: a microservice's process may have gone since
    String ns = m != null ? m.namespace() : namespaces.handle(ref(l));
    try {
      calls.deleteLink(ns, host);
    } catch (LinuxCallException e) {
      if (!e.notFound()) {
        throw e;
      }
    }
  }

  // ---- reading the kernel

  List<KVWithMetadata<Link, LinuxIfMetadata>> retrieve(
      List<KVWithMetadata<Link, LinuxIfMetadata>> correlate) throws LinuxCallException {
    Map<String, Link> expected = new HashMap<>();
    correlate.forEach(kv -> expected.put(kv.value().getName(), kv.value()));
    Set<String> places = new LinkedHashSet<>(List.of(""));
    places.addAll(calls.namespaces());
    // the namespaces referred to by process, file or label that exist now: by their file
    ReferredNamespaces referred =
        new ReferredNamespaces(
            calls, namespaces, expected.values(), Link::getName, LinkDescriptor::ref);
    places.addAll(referred.files());
    List<KVWithMetadata<Link, LinuxIfMetadata>> out = new ArrayList<>();
    for (String ns : places) {
      List<LinkDetails> ours;
      try {
        ours =
            calls.linkDetails(ns).stream()
                .filter(d -> d.link().alias().startsWith(aliasPrefix))
                .toList();
      } catch (LinuxCallException e) {
        if (!referred.has(ns) || !e.notFound()) {
          throw e;
        }
        continue; // the process or file is gone: its values wait for it
      }
      if (ours.isEmpty()) {
        continue;
      }
      Map<String, List<String>> addresses = new HashMap<>();
      for (io.kvscheduler.plugins.linux.linuxcalls.Link k : calls.links(ns)) {
        addresses.put(k.name(), k.addresses());
      }
      Map<String, String> logical = logicalNames(ns);
      for (LinkDetails d : ours) {
        String name = d.link().alias().substring(aliasPrefix.length());
        Link exp = expected.get(name);
        ReferredNamespaces.Place place = referred.place(name, exp != null, ns);
        NetNamespace reference = place.reference();
        String file = place.file();
        Link found = found(name, reference, d, logical, exp);
        List<String> addrs =
            InterfaceDescriptor.spelledAsExpected(
                addresses.getOrDefault(d.link().name(), List.of()),
                exp == null ? List.of() : exp.getIpAddressesList());
        found = found.toBuilder().addAllIpAddresses(addrs).build();
        if (exp != null && equivalent(LinuxKeys.linkKey(name), found, exp)) {
          found = exp.toBuilder().clearIpAddresses().addAllIpAddresses(addrs).build();
        }
        out.add(
            new KVWithMetadata<>(
                LinuxKeys.linkKey(name),
                found,
                new LinuxIfMetadata(d.link().index(), file, d.link().name()),
                ValueOrigin.FROM_NB));
      }
    }
    return out;
  }

  /** Logical names of the configured interfaces and links of {@code ns}, by host name. */
  private Map<String, String> logicalNames(String ns) {
    Map<String, String> out = new HashMap<>();
    LinuxIfIndex index = interfaces.get();
    for (String n : index.names()) {
      index
          .lookup(n)
          .filter(m -> m.namespace().equals(ns))
          .ifPresent(m -> out.put(m.hostIfName(), n));
    }
    return out;
  }

  /** The value the kernel's link {@code d} stands for. */
  private static Link found(
      String name, NetNamespace ns, LinkDetails d, Map<String, String> logical, Link exp) {
    io.kvscheduler.plugins.linux.linuxcalls.Link k = d.link();
    Link.Builder b =
        Link.newBuilder().setName(name).setEnabled(k.up()).setMtu(k.mtu()).setPhysAddress(k.mac());
    if (!k.name().equals(name)) {
      b.setHostIfName(k.name());
    }
    if (ns != null) {
      b.setNamespace(ns);
    }
    Map<String, String> info = d.info();
    // the logical name of the lower link: the expected one when it is that link
    String lower = logical.getOrDefault(d.parent(), d.parent().isEmpty() ? "" : "?" + d.parent());
    switch (k.kind()) {
      case "bridge" ->
          b.setBridge(
              BridgeLink.newBuilder().setStp(!"0".equals(info.getOrDefault("stp_state", "0"))));
      case "vxlan" -> {
        VxlanLink.Builder v =
            VxlanLink.newBuilder()
                .setVni(parseInt(info.get("id")))
                .setLocal(info.getOrDefault("local", info.getOrDefault("local6", "")))
                .setDstPort(parseInt(info.get("port")))
                .setUnderlay(lower);
        String remote = info.getOrDefault("remote", info.getOrDefault("remote6", ""));
        String group = info.getOrDefault("group", info.getOrDefault("group6", ""));
        v.setRemote(remote).setGroup(group);
        if (exp != null
            && exp.hasVxlan()
            && exp.getVxlan().getDstPort() == 0
            && port(v.build()) == VXLAN_PORT) {
          v.setDstPort(0);
        }
        b.setVxlan(v);
      }
      case "macvlan" ->
          b.setMacvlan(
              MacvlanLink.newBuilder()
                  .setParent(lower)
                  .setModeValue(macvlanMode(info.getOrDefault("mode", "bridge"))));
      case "vlan" ->
          b.setVlan(VlanLink.newBuilder().setParent(lower).setId(parseInt(info.get("id"))));
      case "bond" ->
          b.setBond(BondLink.newBuilder().setModeValue(bondMode(info.getOrDefault("mode", ""))));
      case "vrf" -> b.setVrf(VrfLink.newBuilder().setRoutingTable(parseInt(info.get("table"))));
      default -> {} // a kind this model does not make: no kind, so never equal to a value
    }
    return b.build();
  }

  private static int parseInt(String s) {
    try {
      return s == null ? 0 : Integer.parseUnsignedInt(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** A mode number no configured value has, for a mode this model does not know. */
  private static final int UNKNOWN_MODE = 99;

  private static int macvlanMode(String s) {
    for (MacvlanLink.Mode m : MacvlanLink.Mode.values()) {
      if (m != MacvlanLink.Mode.UNRECOGNIZED && lower(m).equals(s)) {
        return m.getNumber();
      }
    }
    return UNKNOWN_MODE;
  }

  private static int bondMode(String s) {
    for (BondLink.Mode m : BondLink.Mode.values()) {
      if (m != BondLink.Mode.UNRECOGNIZED && bondMode(m).equals(s)) {
        return m.getNumber();
      }
    }
    return UNKNOWN_MODE;
  }
}
