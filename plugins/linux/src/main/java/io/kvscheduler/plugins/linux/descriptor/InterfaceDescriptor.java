package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.LinkDetails;
import io.kvscheduler.plugins.linux.linuxcalls.LinkSettings;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.interfaces.VethLink;
import io.kvscheduler.plugins.linux.model.interfaces.VrfDevLink;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import io.kvscheduler.plugins.linux.netalloc.AllocRef;
import io.kvscheduler.plugins.linux.netalloc.IpAllocations;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code linux-interface}: veth pairs, dummy links, the loopback, and existing links the agent only
 * adopts.
 *
 * <ul>
 *   <li>The ends of a veth pair depend on each other (a cycle the scheduler creates together): the
 *       first end created makes the pair. In the agent's namespace it creates its own end under its
 *       host name, configured, and the peer's end under the peer's interface name (the host name
 *       most interfaces have), so that the peer's Create usually only configures it; elsewhere (or
 *       when a name is taken) it uses temporary names ({@code veth-<hash of the logical name>}),
 *       moves its own end into its namespace and names it, and the other end finds its temporary
 *       link waiting and does the same. Deleting either end deletes the pair.
 *   <li>The request that creates a link puts it in a device group of this agent ({@link
 *       #makingGroup}; the peer's end in the next group), so a link of these groups without an
 *       alias is one whose making an agent did not finish (killed before it gave the link its
 *       alias): Retrieve returns it as {@code <host name>-UNFINISHED}, which the resync removes. A
 *       Create that finds its host name taken by such a link, or by a link marked as its own (an
 *       earlier try, or a pair a killed agent left half made), removes that link and makes the pair
 *       afresh.
 *   <li>An EXISTING interface waits for the watcher to report its link up, and is never changed.
 *   <li>Links the agent creates carry the alias {@code <agent prefix><name>[/<peer>]}; Retrieve
 *       returns only such links, plus the EXISTING links the configuration expects.
 *   <li>Name, up/down, MAC and MTU change in place; a new type, namespace, peer or {@code
 *       link_only} re-creates the link (a new interface index).
 * </ul>
 */
public final class InterfaceDescriptor {
  private static final Logger LOG = LoggerFactory.getLogger(InterfaceDescriptor.class);

  /** Descriptor name. */
  public static final String NAME = "linux-interface";

  private final LinuxCalls calls;
  private final String agentPrefix;
  private final NamespaceWatcherDescriptor namespaces;

  /** The allocations {@code alloc:} addresses name: Retrieve spells kernel addresses so. */
  private final IpAllocations allocations;

  /**
   * The kernel names of veth ends this descriptor made for a peer that was not created yet, by the
   * peer's interface name (a hint only: a name found here is tried first, and looked for when it is
   * not there).
   */
  private final Map<String, String> waitingEnds = new ConcurrentHashMap<>();

  /** The device group of the links this descriptor creates (a veth peer's end: the next one). */
  private final int making;

  private InterfaceDescriptor(
      LinuxCalls calls,
      String agentPrefix,
      NamespaceWatcherDescriptor namespaces,
      IpAllocations allocations) {
    this.calls = calls;
    this.agentPrefix = agentPrefix;
    this.namespaces = namespaces;
    this.allocations = allocations;
    this.making = makingGroup(agentPrefix);
  }

  /**
   * The device group of the links the agent with {@code agentPrefix} creates (the peer's end of a
   * veth pair: the next group), set by the request that creates them. Derived from the agent prefix
   * (an even number with the bits of {@code 0x6b76} above it), so that agents of different labels
   * do not take each other's unfinished links for their own.
   */
  public static int makingGroup(String agentPrefix) {
    int h = 0x811c9dc5;
    for (byte b : agentPrefix.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x01000193;
    }
    return 0x6b760000 | (h & 0xfffe);
  }

  /** Whether {@code l} is a link this agent began to make and did not finish (no alias yet). */
  private boolean unfinished(Link l) {
    return l != null
        && (l.group() == making || l.group() == making + 1)
        && l.alias().isEmpty()
        && (l.kind().equals("veth") || l.kind().equals("dummy"));
  }

  /**
   * The descriptor over {@code calls}; links it creates are marked with aliases starting with
   * {@code agentPrefix} ({@code /vnf-agent/<label>/}).
   */
  public static KVDescriptor<Interface, LinuxIfMetadata> create(
      LinuxCalls calls, String agentPrefix) {
    return create(
        calls, agentPrefix, new NamespaceWatcherDescriptor(calls), new IpAllocations(null));
  }

  /**
   * {@link #create(LinuxCalls, String)} with the namespaces referred to by process, file or
   * microservice label found and watched by {@code namespaces}, and with Retrieve reporting a
   * kernel address that an {@code alloc:} reference of the configuration names (through {@code
   * allocations}) as that reference.
   */
  public static KVDescriptor<Interface, LinuxIfMetadata> create(
      LinuxCalls calls,
      String agentPrefix,
      NamespaceWatcherDescriptor namespaces,
      IpAllocations allocations) {
    InterfaceDescriptor d = new InterfaceDescriptor(calls, agentPrefix, namespaces, allocations);
    return KVDescriptor.builder(NAME, Interface.class)
        .withMetadata(LinuxIfMetadata.class)
        .metadataIndex(LinuxIfIndex.BY_HOST_NAME, LinuxIfIndex::hostNameKeys)
        .valueTypeName(Interface.getDescriptor().getFullName())
        .nbKeyPrefix(LinuxKeys.INTERFACE_PREFIX)
        .keySelector(LinuxKeys::isInterfaceKey)
        .keyLabel(k -> k.substring(LinuxKeys.INTERFACE_PREFIX.length()))
        .equivalence(InterfaceDescriptor::equivalent)
        .validate((k, v) -> validate(agentPrefix, k, v))
        .dependencies(
            (k, v) -> {
              namespaces.want(ref(v));
              return dependencies(k, v);
            })
        .derivedValues(InterfaceDescriptor::derived)
        .create(d::create)
        .update(d::update)
        .updateWithRecreate(InterfaceDescriptor::needsRecreate)
        .delete(d::delete)
        .retrieve(d::retrieve)
        .retrieveDependencies(IpAllocationDescriptor.NAME)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: no, the two ends of a veth pair share one kernel link
        .build();
  }

  // ---- rules about values

  /** The kernel name of {@code i}: {@code lo} for the loopback, else host_if_name or name. */
  public static String hostName(Interface i) {
    if (i.getType() == Interface.Type.LOOPBACK) {
      return "lo";
    }
    return i.getHostIfName().isEmpty() ? i.getName() : i.getHostIfName();
  }

  /** The namespace reference of {@code i}, null for the agent's own. */
  private static NetNamespace ref(Interface i) {
    return i.hasNamespace() ? i.getNamespace() : null;
  }

  /**
   * The namespace reference of {@code i} as compared ({@link
   * NamespaceWatcherDescriptor#canonical}): the name of a named namespace, "" for the agent's own.
   */
  public static String namespace(Interface i) {
    return NamespaceWatcherDescriptor.canonical(ref(i));
  }

  /** The MTU the kernel gives {@code i} when none is configured. */
  static int defaultMtu(Interface i) {
    return i.getType() == Interface.Type.LOOPBACK ? 65536 : 1500;
  }

  static int effectiveMtu(Interface i) {
    return i.getMtu() == 0 ? defaultMtu(i) : i.getMtu();
  }

  private static String peer(Interface i) {
    return i.hasVeth() ? i.getVeth().getPeerIfName() : "";
  }

  /** The temporary kernel name of a veth end before it reaches its namespace and name. */
  static String tempName(String logicalName) {
    int h = 0x811c9dc5;
    for (byte b : logicalName.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x01000193;
    }
    return "veth-" + String.format("%08x", h);
  }

  /**
   * The name under which the first end of a pair creates the end of the interface {@code peerName}:
   * the interface's name when it is a valid link name (the host name most interfaces have, so that
   * the peer's Create has nothing to rename), else its temporary name.
   */
  static String provisionalName(String peerName) {
    return peerName.length() <= 15
            && peerName.matches("[-A-Za-z0-9_.]+")
            && !peerName.equals(".")
            && !peerName.equals("..")
        ? peerName
        : tempName(peerName);
  }

  private String alias(Interface i) {
    return alias(agentPrefix, i);
  }

  /** The alias the links of {@code i} carry: {@code <agent prefix><name>[/<peer>]}. */
  private static String alias(String agentPrefix, Interface i) {
    return agentPrefix + i.getName() + (i.getType() == Interface.Type.VETH ? "/" + peer(i) : "");
  }

  /**
   * Refuses {@code i} unless each of its fields that reaches an {@code ip} command is what the
   * kernel takes and what an {@code ip -batch} line carries: the host name a Linux link name, the
   * namespace a file name of /run/netns, the name and the peer's name text without control
   * characters that makes an alias (with {@code agentPrefix}) within the kernel's 255 bytes.
   */
  static void validate(String agentPrefix, String key, Interface i) {
    Invalid bad = new Invalid();
    if (i.getName().isEmpty()) {
      bad.add("the interface has no name", "name");
    } else if (!LinuxKeys.interfaceKey(i.getName()).equals(key)) {
      bad.add("name " + Invalid.quote(i.getName()) + " does not match the key", "name");
    }
    Invalid.textProblem(i.getName())
        .ifPresent(p -> bad.add("name " + Invalid.quote(i.getName()) + ": " + p, "name"));
    if (i.getName().indexOf('/') >= 0) {
      // the alias is <prefix><name>/<peer>: a '/' in a name would be read back as another pair
      bad.add(
          "name " + Invalid.quote(i.getName()) + " holds '/', which the link's alias cannot carry",
          "name");
    }
    if (i.hasNamespace()) {
      NamespaceWatcherDescriptor.validate(i.getNamespace(), bad, "namespace");
    }
    String host = hostName(i);
    Invalid.linkNameProblem(host)
        .ifPresent(
            p ->
                bad.add(
                    "host name "
                        + Invalid.quote(host)
                        + (i.getHostIfName().isEmpty()
                            ? " (the name, as host_if_name is empty)"
                            : "")
                        + " is not a valid Linux interface name: "
                        + p,
                    i.getHostIfName().isEmpty() ? "name" : "host_if_name"));
    if (!i.getPhysAddress().isEmpty() && !Invalid.isMac(i.getPhysAddress())) {
      bad.add(Invalid.quote(i.getPhysAddress()) + " is not a MAC address", "phys_address");
    }
    switch (i.getType()) {
      case UNDEFINED, UNRECOGNIZED -> bad.add("the interface type is not defined", "type");
      case TAP_TO_VPP ->
          bad.add("type " + i.getType() + " is not supported by this plugin", "type");
      case VRF_DEVICE -> {
        if (i.getLinkCase() != Interface.LinkCase.VRF_DEV
            && i.getLinkCase() != Interface.LinkCase.LINK_NOT_SET) {
          bad.add("a VRF_DEVICE interface takes a vrf_dev link", "link");
        }
        Invalid.vrfTableProblem(i.getVrfDev().getRoutingTable())
            .ifPresent(p -> bad.add(p, "routing_table"));
        if (!i.getVrfMasterInterface().isEmpty()) {
          bad.add("a VRF device cannot be a member of another VRF", "vrf_master_interface");
        }
      }
      case EXISTING -> {
        if (i.getLinkCase() != Interface.LinkCase.LINK_NOT_SET) {
          bad.add("an EXISTING interface takes no link", "link");
        }
        if (i.hasNamespace()) {
          bad.add("an EXISTING interface must be in the agent's namespace", "namespace");
        }
      }
      case LOOPBACK, DUMMY -> {
        if (i.getLinkCase() != Interface.LinkCase.LINK_NOT_SET) {
          bad.add("a " + i.getType() + " interface takes no link", "link");
        }
      }
      case VETH -> {
        if (i.getLinkCase() != Interface.LinkCase.VETH
            && i.getLinkCase() != Interface.LinkCase.LINK_NOT_SET) {
          bad.add("a VETH interface takes a veth link", "link");
        } else if (peer(i).isEmpty()) {
          bad.add("a VETH interface needs the name of its peer", "peer_if_name");
        } else if (peer(i).equals(i.getName())) {
          bad.add("a VETH interface cannot be its own peer", "peer_if_name");
        } else {
          Invalid.textProblem(peer(i))
              .ifPresent(
                  p ->
                      bad.add("peer_if_name " + Invalid.quote(peer(i)) + ": " + p, "peer_if_name"));
        }
      }
    }
    String vrf = i.getVrfMasterInterface();
    if (!vrf.isEmpty()) {
      if (vrf.equals(i.getName())) {
        bad.add("an interface cannot be its own VRF", "vrf_master_interface");
      } else if (vrf.indexOf('/') >= 0) {
        bad.add(
            "vrf_master_interface " + Invalid.quote(vrf) + " holds '/'", "vrf_master_interface");
      }
      Invalid.textProblem(vrf)
          .ifPresent(
              p ->
                  bad.add(
                      "vrf_master_interface " + Invalid.quote(vrf) + ": " + p,
                      "vrf_master_interface"));
    }
    if (i.getType() != Interface.Type.EXISTING
        && Invalid.textProblem(i.getName()).isEmpty()
        && Invalid.textProblem(peer(i)).isEmpty()) {
      String alias = alias(agentPrefix, i);
      Invalid.aliasProblem(alias)
          .ifPresent(
              p -> bad.add(p, aliasFields(i, Invalid.utf8Length(alias) > Invalid.ALIAS_BYTES)));
    }
    if (i.getType() == Interface.Type.EXISTING && i.getLinkOnly()) {
      for (String a : i.getIpAddressesList()) {
        if (AllocRef.isRef(a)) {
          // such an interface only waits for its addresses: nobody would put this one there
          bad.add(
              "an EXISTING interface with link_only only waits for its addresses, so it cannot"
                  + " take an allocated one ("
                  + Invalid.quote(a)
                  + ")",
              "type",
              "link_only",
              "ip_addresses");
          break;
        }
      }
    }
    bad.throwIfAny();
  }

  /**
   * The fields of {@code i} to blame for a problem of its alias: the name, or for a VETH the longer
   * of the name and the peer's name when it is {@code tooLong}, else those holding a quote.
   */
  private static String[] aliasFields(Interface i, boolean tooLong) {
    if (i.getType() != Interface.Type.VETH) {
      return new String[] {"name"};
    }
    String name = i.getName();
    String peer = peer(i);
    List<String> out = new ArrayList<>();
    if (tooLong) {
      int n = Invalid.utf8Length(name);
      int q = Invalid.utf8Length(peer);
      if (n >= q) {
        out.add("name");
      }
      if (q >= n) {
        out.add("peer_if_name");
      }
    } else {
      if (name.matches("(?s).*['\"].*")) {
        out.add("name");
      }
      if (peer.matches("(?s).*['\"].*")) {
        out.add("peer_if_name");
      }
      if (out.isEmpty()) {
        out.add("name");
      }
    }
    return out.toArray(String[]::new);
  }

  static List<Dependency> dependencies(String key, Interface i) {
    List<Dependency> out = new ArrayList<>();
    if (i.getType() == Interface.Type.EXISTING) {
      out.add(Dependency.onKey("host-interface-exists", LinuxKeys.hostNameKey(hostName(i))));
    }
    if (i.getType() == Interface.Type.VETH && !peer(i).isEmpty()) {
      out.add(Dependency.onKey("veth-peer-exists", LinuxKeys.interfaceKey(peer(i))));
    }
    NamespaceWatcherDescriptor.dependency(ref(i)).ifPresent(out::add);
    return out;
  }

  static List<KeyValuePair> derived(String key, Interface i) {
    List<KeyValuePair> out = new ArrayList<>();
    out.add(
        new KeyValuePair(
            LinuxKeys.stateKey(i.getName(), i.getEnabled()), Empty.getDefaultInstance()));
    if (!i.getVrfMasterInterface().isEmpty()) {
      out.add(
          new KeyValuePair(
              LinuxKeys.vrfKey(i.getName(), i.getVrfMasterInterface()),
              Interface.newBuilder()
                  .setName(i.getName())
                  .setHostIfName(hostName(i))
                  .setVrfMasterInterface(i.getVrfMasterInterface())
                  .build()));
    }
    boolean existing = i.getType() == Interface.Type.EXISTING;
    if (!i.getLinkOnly() || existing) {
      for (String a : new LinkedHashSet<>(i.getIpAddressesList())) {
        AddressSource src =
            a.startsWith("alloc:")
                ? AddressSource.ALLOC_REF
                : existing && i.getLinkOnly() ? AddressSource.EXISTING : AddressSource.STATIC;
        Interface v =
            Interface.newBuilder()
                .setName(i.getName())
                .setType(i.getType())
                .setHostIfName(hostName(i))
                .setVrfMasterInterface(i.getVrfMasterInterface())
                .addIpAddresses(a)
                .build();
        out.add(new KeyValuePair(LinuxKeys.addressKey(i.getName(), src, a), v));
      }
    }
    return out;
  }

  static boolean equivalent(String key, Interface a, Interface b) {
    if (a.getType() != b.getType()
        || !namespace(a).equals(namespace(b))
        || a.getLinkOnly() != b.getLinkOnly()
        || !peer(a).equals(peer(b))
        || !hostName(a).equals(hostName(b))) {
      return false;
    }
    if (b.getType() == Interface.Type.EXISTING) {
      return true; // never changed by the agent
    }
    if (a.getEnabled() != b.getEnabled() || effectiveMtu(a) != effectiveMtu(b)) {
      return false;
    }
    if (b.getType() == Interface.Type.VRF_DEVICE
        && a.getVrfDev().getRoutingTable() != b.getVrfDev().getRoutingTable()) {
      return false;
    }
    return b.getPhysAddress().isEmpty()
        || b.getLinkOnly()
        || b.getPhysAddress().equalsIgnoreCase(a.getPhysAddress());
  }

  static boolean needsRecreate(String key, Interface a, Interface b, LinuxIfMetadata m) {
    return a.getType() != b.getType()
        || a.getVrfDev().getRoutingTable() != b.getVrfDev().getRoutingTable()
        || !namespace(a).equals(namespace(b))
        || a.getLinkOnly() != b.getLinkOnly()
        || !peer(a).equals(peer(b));
  }

  /**
   * Whether a failure may succeed when tried again: not one the kernel refused as such, nor a call
   * refused before it reached {@code ip} (an argument no command line can carry).
   */
  static boolean isRetriable(Throwable e) {
    if (e instanceof IllegalArgumentException) {
      return false;
    }
    return !(e instanceof LinuxCallException l) || l.retriable();
  }

  // ---- operations

  private LinkSettings settings(Interface i) {
    LinkSettings s = LinkSettings.none();
    if (i.getMtu() != 0) {
      s = s.withMtu(i.getMtu());
    }
    if (!i.getPhysAddress().isEmpty() && !i.getLinkOnly()) {
      s = s.withMac(i.getPhysAddress());
    }
    return s.withUp(i.getEnabled());
  }

  LinuxIfMetadata create(String key, Interface i) throws LinuxCallException {
    String ns = namespaces.handle(ref(i));
    String host = hostName(i);
    if (i.getType() == Interface.Type.EXISTING) {
      return metadata(ns, host);
    }
    if (NamespaceWatcherDescriptor.named(ref(i))) {
      calls.ensureNamespace(ns);
    }
    switch (i.getType()) {
      case LOOPBACK -> {
        return metadata(calls.configureLink(ns, host, host, alias(i), settings(i)));
      }
      case DUMMY -> {
        Link found = calls.findLinks(ns, List.of(host)).get(host);
        if (unfinished(found)) { // a resync may be about to remove it as such: made afresh
          calls.deleteLink(ns, host);
          found = null;
        }
        if (!owned(found, i)) {
          calls.addLink(ns, host, "dummy", making);
        }
        return metadata(calls.configureLink(ns, host, host, alias(i), settings(i)));
      }
      case VETH -> {
        return createVeth(i, ns, host, true);
      }
      case VRF_DEVICE -> {
        List<String> add =
            List.of(
                "name",
                host,
                "type",
                "vrf",
                "table",
                Integer.toUnsignedString(i.getVrfDev().getRoutingTable()));
        try {
          return metadata(calls.createLink(ns, host, add, alias(i), settings(i)));
        } catch (LinuxCallException e) {
          if (!e.exists() || !owned(calls.findLinks(ns, List.of(host)).get(host), i)) {
            throw e;
          }
          calls.deleteLink(ns, host); // an earlier try: made afresh
          return metadata(calls.createLink(ns, host, add, alias(i), settings(i)));
        }
      }
      default -> throw new IllegalStateException("type " + i.getType() + " passed validation");
    }
  }

  private LinuxIfMetadata createVeth(Interface i, String ns, String host, boolean mayClear)
      throws LinuxCallException {
    String temp = tempName(i.getName());
    String hint = waitingEnds.get(i.getName());
    if (hint != null && ns.isEmpty()) {
      // the peer's Create made this end a moment ago: configure it without looking first
      try {
        Link l = calls.configureLink(ns, hint, host, alias(i), settings(i));
        waitingEnds.remove(i.getName());
        return metadata(l);
      } catch (LinuxCallException e) {
        if (!e.notFound()) {
          throw e; // the end still waits there for the next try
        }
        waitingEnds.remove(i.getName());
      }
    } else if (hint != null && !hint.equals(temp)) {
      // bound for another namespace: under its temporary name, as below expects
      try {
        calls.renameLink("", hint, temp);
      } catch (LinuxCallException e) {
        if (!e.notFound()) {
          throw e;
        }
      }
      waitingEnds.put(i.getName(), temp);
    } else if (hint == null && ns.isEmpty()) {
      // most likely nothing is there yet: make the pair at once, this end under its own name
      // and the peer's end under the name it most likely gets
      String peerWaits = provisionalName(peer(i));
      if (peerWaits.equals(host)) {
        peerWaits = tempName(peer(i));
      }
      try {
        Link made = calls.addVeth(host, peerWaits, making, alias(i), settings(i));
        waitingEnds.put(peer(i), peerWaits);
        return metadata(made);
      } catch (LinuxCallException e) {
        if (!e.exists()) {
          throw e;
        }
        // a name is taken (by an earlier try, by a foreign link): look at what is there
      }
    }
    Map<String, Link> there = calls.findLinks(ns, List.of(host, temp));
    if (mayClear && (owned(there.get(host), i) || unfinished(there.get(host)))) {
      // marked as this interface's, yet not made by this Create, or left unfinished: an earlier
      // try, or a pair a killed agent left half made (a resync may be about to remove it as
      // such); its other end cannot be trusted, so the pair is made afresh
      LOG.info("veth {} in namespace '{}' is made afresh", host, ns);
      try {
        calls.deleteLink(ns, host);
      } catch (LinuxCallException e) {
        if (!e.notFound()) {
          throw e;
        }
      }
      waitingEnds.remove(i.getName());
      return createVeth(i, ns, host, false);
    }
    if (!there.containsKey(temp)) { // not waiting in its namespace yet
      if (!ns.isEmpty() && calls.findLinks("", List.of(temp)).containsKey(temp)) {
        calls.moveLink(temp, ns); // made by the peer's Create
      } else {
        Link made =
            calls.addVethPair(temp, tempName(peer(i)), making, ns, host, alias(i), settings(i));
        waitingEnds.put(peer(i), tempName(peer(i)));
        return metadata(made);
      }
    }
    Link l = calls.configureLink(ns, temp, host, alias(i), settings(i));
    waitingEnds.remove(i.getName());
    return metadata(l);
  }

  /** Whether {@code link} exists marked as {@code i}'s (made by an earlier try). */
  private boolean owned(Link link, Interface i) {
    return link != null && link.alias().equals(alias(i));
  }

  private static LinuxIfMetadata metadata(Link l) {
    return new LinuxIfMetadata(l.index(), l.namespace(), l.name());
  }

  private LinuxIfMetadata metadata(String ns, String host) throws LinuxCallException {
    Link l =
        Optional.ofNullable(calls.findLinks(ns, List.of(host)).get(host))
            .orElseThrow(
                () ->
                    new LinuxCallException(
                        "ip link show " + host,
                        1,
                        "Cannot find device \""
                            + host
                            + "\""
                            + (ns.isEmpty() ? "" : " in namespace " + ns)));
    return new LinuxIfMetadata(l.index(), ns, host);
  }

  LinuxIfMetadata update(String key, Interface a, Interface b, LinuxIfMetadata m)
      throws LinuxCallException {
    String ns = m != null ? m.namespace() : namespaces.handle(ref(b));
    if (b.getType() == Interface.Type.EXISTING) {
      return metadata(ns, hostName(b));
    }
    LinkSettings s = LinkSettings.none().withUp(b.getEnabled());
    if (effectiveMtu(a) != effectiveMtu(b)) {
      s = s.withMtu(effectiveMtu(b));
    }
    if (!b.getPhysAddress().isEmpty()
        && !b.getLinkOnly()
        && !b.getPhysAddress().equalsIgnoreCase(a.getPhysAddress())) {
      s = s.withMac(b.getPhysAddress());
    }
    // a new host name: the link is set down for the rename, then up again as configured
    return metadata(calls.configureLink(ns, hostName(a), hostName(b), null, s));
  }

  void delete(String key, Interface i, LinuxIfMetadata m) throws LinuxCallException {
    // where it was made: a microservice's process may have gone since
    String ns = m != null ? m.namespace() : namespaces.handle(ref(i));
    String host = hostName(i);
    if (m != null && isFoundAmiss(i.getName())) {
      // the link Retrieve found: not one made under its name since (by a Create of the resync)
      Link l = calls.findLinks(ns, List.of(host)).get(host);
      if (l == null || l.index() != m.ifIndex()) {
        return;
      }
    }
    try {
      switch (i.getType()) {
        case EXISTING -> {} // not ours
        case LOOPBACK -> calls.setLink(ns, host, LinkSettings.none().withAlias(""));
        default -> calls.deleteLink(ns, host);
      }
    } catch (LinuxCallException e) {
      if (!e.notFound()) { // gone already (the peer end took the pair along)
        throw e;
      }
    }
  }

  /** Suffix of the name under which Retrieve returns a veth end whose peer it did not find. */
  static final String MISSING_PEER = "-MISSING_PEER";

  /** Suffix (followed by a number) of the names of further links claiming one interface. */
  static final String DUPLICATE = "-DUPLICATE";

  /** Suffix of the name under which Retrieve returns a link an unfinished exchange left. */
  static final String UNFINISHED = "-UNFINISHED";

  /** Whether {@code name} is one Retrieve gives a link it found amiss. */
  static boolean isFoundAmiss(String name) {
    return name.endsWith(MISSING_PEER)
        || name.matches(".*" + DUPLICATE + "[0-9]+")
        || name.matches(".*" + UNFINISHED + "[0-9]*");
  }

  /** A link carrying this agent's alias: which interface it claims to be. */
  private record Claim(
      String name, String peer, Interface.Type type, String ns, Link link, int vrfTable) {
    Claim(String name, String peer, Interface.Type type, String ns, Link link) {
      this(name, peer, type, ns, link, 0);
    }
  }

  /**
   * The links of every namespace that carry this agent's alias, plus the EXISTING links the
   * configuration expects. A link that claims an interface another link already stands for (the one
   * that matches the configuration, else the first found) is returned as {@code
   * <name>-DUPLICATE<n>}; a veth end whose peer end was not found the same way is returned as
   * {@code <name>-MISSING_PEER}. A link of this agent's device groups without an alias (its making
   * not finished: {@link #makingGroup}) is returned as {@code <host name>-UNFINISHED}. No
   * configuration has these names, so the resync deletes such links, and creates the interfaces
   * they claimed afresh.
   */
  List<KVWithMetadata<Interface, LinuxIfMetadata>> retrieve(
      List<KVWithMetadata<Interface, LinuxIfMetadata>> correlate) throws LinuxCallException {
    Map<String, Interface> expected = new HashMap<>();
    Set<String> namespaces = new LinkedHashSet<>();
    namespaces.add("");
    for (KVWithMetadata<Interface, LinuxIfMetadata> kv : correlate) {
      expected.put(kv.value().getName(), kv.value());
    }
    namespaces.addAll(calls.namespaces());
    // the namespaces referred to by process, file or label that exist now: by their file
    ReferredNamespaces referred =
        new ReferredNamespaces(
            calls,
            this.namespaces,
            expected.values(),
            Interface::getName,
            InterfaceDescriptor::ref);
    namespaces.addAll(referred.files());
    Map<String, List<Claim>> claims = new LinkedHashMap<>();
    List<Link> unfinished = new ArrayList<>();
    for (String ns : namespaces) {
      Map<String, Integer> vrfTables = null; // read once per namespace that has VRF devices
      List<Link> there;
      try {
        there = calls.links(ns);
      } catch (LinuxCallException e) {
        if (!referred.has(ns) || !e.notFound()) {
          throw e;
        }
        continue; // the process or file is gone: its values wait for it
      }
      for (Link l : there) {
        if (unfinished(l)) {
          unfinished.add(l);
          continue;
        }
        if (!l.alias().startsWith(agentPrefix)) {
          continue;
        }
        String rest = l.alias().substring(agentPrefix.length());
        int slash = rest.indexOf('/');
        String name = slash < 0 ? rest : rest.substring(0, slash);
        Interface.Type type =
            switch (l.kind()) {
              case "veth" -> Interface.Type.VETH;
              case "dummy" -> Interface.Type.DUMMY;
              case "loopback" -> Interface.Type.LOOPBACK;
              case "vrf" -> Interface.Type.VRF_DEVICE;
              default -> Interface.Type.UNDEFINED;
            };
        if (name.isEmpty() || type == Interface.Type.UNDEFINED) {
          continue;
        }
        int table = 0;
        if (type == Interface.Type.VRF_DEVICE) {
          if (vrfTables == null) {
            vrfTables = new HashMap<>();
            for (LinkDetails d : calls.linkDetails(ns)) {
              try {
                vrfTables.put(
                    d.link().name(), Integer.parseUnsignedInt(d.info().getOrDefault("table", "0")));
              } catch (NumberFormatException e) {
                vrfTables.put(d.link().name(), 0);
              }
            }
          }
          table = vrfTables.getOrDefault(l.name(), 0);
        }
        claims
            .computeIfAbsent(name, n -> new ArrayList<>())
            .add(new Claim(name, slash < 0 ? "" : rest.substring(slash + 1), type, ns, l, table));
      }
    }
    // one link per interface: the one as configured (namespace, host name), else the first
    Map<String, Claim> primary = new LinkedHashMap<>();
    List<Claim> duplicates = new ArrayList<>();
    claims.forEach(
        (name, all) -> {
          Interface exp = expected.get(name);
          Claim chosen =
              all.stream()
                  .filter(
                      c ->
                          exp != null
                              && c.ns().equals(referred.file(name, namespace(exp)))
                              && c.link().name().equals(hostName(exp)))
                  .findFirst()
                  .orElse(all.get(0));
          primary.put(name, chosen);
          all.stream().filter(c -> c != chosen).forEach(duplicates::add);
        });
    Map<String, KVWithMetadata<Interface, LinuxIfMetadata>> found = new LinkedHashMap<>();
    for (Claim c : primary.values()) {
      Claim peer = primary.get(c.peer());
      boolean orphan =
          c.type() == Interface.Type.VETH
              && (peer == null
                  || peer.type() != Interface.Type.VETH
                  || !peer.peer().equals(c.name()));
      if (orphan) {
        LOG.warn(
            "veth {} in namespace '{}' is interface {}, whose peer {} was not found: {}",
            c.link().name(),
            c.ns(),
            c.name(),
            c.peer(),
            "it is removed and made again");
      }
      String name = orphan ? c.name() + MISSING_PEER : c.name();
      found.put(name, retrieved(name, c, orphan ? null : expected.get(name), referred));
    }
    Map<String, Integer> seen = new HashMap<>();
    for (Claim c : duplicates) {
      String name;
      do {
        name = c.name() + DUPLICATE + seen.merge(c.name(), 1, Integer::sum);
      } while (found.containsKey(name));
      LOG.warn(
          "link {} in namespace '{}' carries the alias of interface {}, found already: {}",
          c.link().name(),
          c.ns(),
          c.name(),
          "it is removed");
      found.put(name, retrieved(name, c, null, referred));
    }
    for (Link l : unfinished) {
      String name = l.name() + UNFINISHED;
      for (int n = 2; found.containsKey(name); n++) {
        name = l.name() + UNFINISHED + n;
      }
      LOG.warn(
          "{} {} in namespace '{}' was left half made by an agent that stopped: {}",
          l.kind(),
          l.name(),
          l.namespace(),
          "it is removed");
      Interface.Type type = l.kind().equals("veth") ? Interface.Type.VETH : Interface.Type.DUMMY;
      found.put(name, retrieved(name, new Claim(name, "", type, l.namespace(), l), null, referred));
    }
    for (Interface exp : expected.values()) {
      if (exp.getType() != Interface.Type.EXISTING || found.containsKey(exp.getName())) {
        continue;
      }
      Optional<Link> l = calls.link("", hostName(exp));
      if (l.isPresent()) {
        List<String> addresses = new ArrayList<>();
        if (exp.getLinkOnly()) { // only waits for its addresses: others are not its business
          for (String a : exp.getIpAddressesList()) {
            if (l.get().addresses().stream().anyMatch(x -> sameNet(x, a))) {
              addresses.add(a);
            }
          }
        } else { // the link's addresses are the configuration's: others are removed
          addresses.addAll(spelledAsExpected(l.get().addresses(), exp));
        }
        Interface v = exp.toBuilder().clearIpAddresses().addAllIpAddresses(addresses).build();
        found.put(
            exp.getName(),
            new KVWithMetadata<>(
                LinuxKeys.interfaceKey(exp.getName()),
                v,
                new LinuxIfMetadata(l.get().index(), "", l.get().name()),
                ValueOrigin.FROM_NB));
      }
    }
    return new ArrayList<>(found.values());
  }

  /**
   * The value of the link of {@code c}, named {@code name}, as configured when it is, in the
   * namespace {@code referred} places it.
   */
  private KVWithMetadata<Interface, LinuxIfMetadata> retrieved(
      String name, Claim c, Interface exp, ReferredNamespaces referred) {
    Link l = c.link();
    Interface.Builder b =
        Interface.newBuilder()
            .setName(name)
            .setType(c.type())
            .setHostIfName(l.name())
            .setEnabled(l.up())
            .setMtu(l.mtu())
            .setPhysAddress(l.mac());
    ReferredNamespaces.Place place = referred.place(name, exp != null, c.ns());
    if (place.reference() != null) {
      b.setNamespace(place.reference());
    }
    String ns = place.file();
    if (c.type() == Interface.Type.VETH) {
      b.setVeth(VethLink.newBuilder().setPeerIfName(c.peer()));
    }
    if (c.type() == Interface.Type.VRF_DEVICE) {
      b.setVrfDev(VrfDevLink.newBuilder().setRoutingTable(c.vrfTable()));
    }
    Interface v = b.addAllIpAddresses(spelledAsExpected(l.addresses(), exp)).build();
    if (exp != null && equivalent(LinuxKeys.interfaceKey(name), v, exp)) {
      // as configured, with the addresses the kernel holds
      v = exp.toBuilder().clearIpAddresses().addAllIpAddresses(v.getIpAddressesList()).build();
    }
    return new KVWithMetadata<>(
        LinuxKeys.interfaceKey(name),
        v,
        new LinuxIfMetadata(l.index(), ns, l.name()),
        ValueOrigin.FROM_NB);
  }

  /**
   * The kernel's addresses, each written as the expected value writes it when it is there: as an
   * {@code alloc:} reference when the allocation it names holds that address now.
   */
  private List<String> spelledAsExpected(List<String> kernel, Interface exp) {
    if (exp == null) {
      return spelledAsExpected(kernel, List.of());
    }
    List<String> out = new ArrayList<>();
    for (String k : spelledAsExpected(kernel, exp.getIpAddressesList())) {
      Optional<IpNet> a = IpNet.parse(k);
      String spelled = k;
      for (String e : exp.getIpAddressesList()) {
        if (a.isPresent() && AllocRef.isRef(e) && a.equals(allocated(e, exp.getName()))) {
          spelled = e;
          break;
        }
      }
      out.add(spelled);
    }
    return out;
  }

  /** The address the reference {@code ref} of interface {@code iface} names now. */
  private Optional<IpNet> allocated(String ref, String iface) {
    try {
      return AllocRef.parse(ref, iface).filter(r -> !r.gw()).flatMap(allocations::resolve);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The addresses {@code kernel}, each spelled as in {@code expected} where it is there. */
  static List<String> spelledAsExpected(List<String> kernel, List<String> expected) {
    List<String> out = new ArrayList<>();
    for (String k : kernel) {
      String spelled = k;
      for (String e : expected) {
        if (sameNet(k, e)) {
          spelled = e;
          break;
        }
      }
      out.add(spelled);
    }
    return out;
  }

  private static boolean sameNet(String x, String y) {
    Optional<IpNet> a = IpNet.parse(x);
    return a.isPresent() && a.equals(IpNet.parse(y));
  }
}
