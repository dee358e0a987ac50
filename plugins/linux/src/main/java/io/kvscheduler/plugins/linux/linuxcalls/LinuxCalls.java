package io.kvscheduler.plugins.linux.linuxcalls;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * What the Linux plugin asks of the kernel. A {@code namespace} argument is the name of a named
 * network namespace ({@code ip netns}), the absolute path of a file holding a namespace ({@code
 * /proc/<pid>/ns/net}, a bind-mounted namespace file), or "" for the namespace the agent runs in.
 * Every failure is a {@link LinuxCallException} carrying the kernel's message.
 *
 * <p>Implementations are thread-safe: the interface watcher reads while the engine writes.
 */
public interface LinuxCalls {
  /**
   * The routing protocol number routes made through these calls carry ({@code proto 200}), so that
   * a restarted agent tells them from routes someone else made. Not one of the numbers {@code
   * /etc/iproute2/rt_protos} reserves.
   */
  int ROUTE_PROTOCOL = 200;

  // ---- namespaces

  /** Names of the named namespaces. */
  List<String> namespaces() throws LinuxCallException;

  /** Creates the named namespace {@code name} unless it exists. */
  void ensureNamespace(String name) throws LinuxCallException;

  /**
   * The namespace files among {@code paths} (absolute paths) that exist now, each with the identity
   * (inode number) of the namespace it holds; a path that does not exist, or is not a namespace
   * file, is left out.
   */
  default Map<String, String> namespaceFiles(List<String> paths) throws LinuxCallException {
    throw new LinuxCallException("stat", 1, "Operation not supported");
  }

  /**
   * Ends whatever these calls keep open in {@code namespace} (the processes that serve it), so that
   * a namespace whose process ended is not kept alive by them; the next call in it starts afresh.
   */
  default void closeNamespace(String namespace) {}

  // ---- links

  /** Every link of {@code namespace}, with its addresses. */
  List<Link> links(String namespace) throws LinuxCallException;

  /** The link {@code name} of {@code namespace}, with its addresses, if it exists. */
  Optional<Link> link(String namespace, String name) throws LinuxCallException;

  /**
   * The links among {@code names} that exist in {@code namespace}, by name (one call for all),
   * without their addresses (reading a link's addresses costs as much as reading all links).
   */
  Map<String, Link> findLinks(String namespace, List<String> names) throws LinuxCallException;

  /**
   * Creates a veth pair in the agent's namespace, {@code name} and its peer {@code peerName}, and
   * moves {@code name} into {@code namespace} unless it is "".
   */
  void addVethPair(String name, String peerName, String namespace) throws LinuxCallException;

  /**
   * Creates a veth pair in the agent's namespace, {@code name} and its peer {@code peerName}, in
   * the device groups {@code making} and {@code making + 1} ({@link #addVeth}), moves {@code name}
   * into {@code namespace} unless it is "", and configures it as {@link #configureLink} does, in as
   * few exchanges with the kernel as it can; returns {@code name} as it is afterwards (named {@code
   * newName}), without its addresses.
   */
  Link addVethPair(
      String name,
      String peerName,
      int making,
      String namespace,
      String newName,
      String alias,
      LinkSettings settings)
      throws LinuxCallException;

  /**
   * Creates a veth pair in the agent's namespace in one exchange with the kernel: {@code name},
   * configured with {@code alias} and the attributes of {@code settings} as {@link #configureLink}
   * does, and its peer {@code peerName}, left down and unconfigured; returns {@code name}'s link,
   * without its addresses. Creates nothing when either name is taken ({@code File exists}); when
   * {@code name} cannot be configured, the pair is removed again.
   *
   * <p>The ends are created in the device groups {@code making} ({@code name}) and {@code making +
   * 1} ({@code peerName}), in the same request that creates them: a link of these groups without an
   * alias is one whose making was not finished (an agent killed before it gave the link its alias),
   * whatever point the making reached.
   */
  Link addVeth(String name, String peerName, int making, String alias, LinkSettings settings)
      throws LinuxCallException;

  /**
   * Configures the link {@code name} of {@code namespace} in one exchange: sets {@code alias}
   * unless null (first, on its own: a link being made is still down then, and the kernel announces
   * the alias of an up link to the whole network stack), then, in one request, renames it to {@code
   * newName} when that differs (setting it down first if the kernel refuses to rename it up) and
   * sets the attributes of {@code settings}; returns the link as it is afterwards, without its
   * addresses. The kernel applies MAC and MTU before the name, so a link whose configuration fails
   * that early keeps its old name.
   */
  Link configureLink(
      String namespace, String name, String newName, String alias, LinkSettings settings)
      throws LinuxCallException;

  /**
   * Creates a link of {@code kind} ({@code dummy}) named {@code name} in {@code namespace}, in the
   * device group {@code making} (see {@link #addVeth}).
   */
  void addLink(String namespace, String name, String kind, int making) throws LinuxCallException;

  /**
   * Creates a link with the request {@code ip link add ADD_ARGS} in {@code namespace} (the
   * arguments name it {@code name} and give its kind), then, in a second exchange (so that nothing
   * reaches a foreign link holding the name when the first fails), gives it {@code alias} and the
   * attributes of {@code settings} and reads it back; removes it again when it cannot be
   * configured. Returns the link, without its addresses.
   */
  default Link createLink(
      String namespace, String name, List<String> addArgs, String alias, LinkSettings settings)
      throws LinuxCallException {
    throw new LinuxCallException("ip link add", 1, "Operation not supported");
  }

  /**
   * Sends the {@code ip link} requests {@code requests} (each the words after {@code ip}) to {@code
   * namespace} in one exchange, in order, stopping at the first that fails.
   */
  default void linkRequests(String namespace, List<List<String>> requests)
      throws LinuxCallException {
    throw new LinuxCallException("ip link", 1, "Operation not supported");
  }

  /** Every link of {@code namespace} with its master and the attributes of its kind. */
  default List<LinkDetails> linkDetails(String namespace) throws LinuxCallException {
    throw new LinuxCallException("ip -d link show", 1, "Operation not supported");
  }

  /** Deletes the link {@code name} of {@code namespace} (a veth takes its peer along). */
  void deleteLink(String namespace, String name) throws LinuxCallException;

  /** Moves the link {@code name} from the agent's namespace into {@code namespace}. */
  void moveLink(String name, String namespace) throws LinuxCallException;

  /** Renames a link; the link must be down. */
  void renameLink(String namespace, String name, String newName) throws LinuxCallException;

  /** Sets the attributes of {@code settings} that are not null, in one call. */
  void setLink(String namespace, String name, LinkSettings settings) throws LinuxCallException;

  // ---- addresses

  /** Adds {@code address} ({@code ip/prefix}) to the link {@code device}. */
  void addAddress(String namespace, String device, String address) throws LinuxCallException;

  /** Removes {@code address} from the link {@code device}. */
  void deleteAddress(String namespace, String device, String address) throws LinuxCallException;

  // ---- routes

  /**
   * The routes through {@code device} that no address put there, of every routing table but the
   * kernel's own {@code local} table.
   */
  List<RouteEntry> routes(String namespace, String device) throws LinuxCallException;

  /** Adds a route, marked with {@link #ROUTE_PROTOCOL}; fails if an equal one exists. */
  void addRoute(RouteEntry route) throws LinuxCallException;

  /** Adds or replaces a route, marked with {@link #ROUTE_PROTOCOL}. */
  void replaceRoute(RouteEntry route) throws LinuxCallException;

  /** Deletes a route. */
  void deleteRoute(RouteEntry route) throws LinuxCallException;

  /**
   * Changes route {@code old} into {@code now} (same destination and device): a replace, which
   * changes the route in place when table and metric stay; otherwise the kernel keys the new route
   * apart, so {@code now} is added (replacing an equal one) and then {@code old} deleted, in one
   * exchange, never leaving both behind nor a moment without a route.
   */
  default void changeRoute(RouteEntry old, RouteEntry now) throws LinuxCallException {
    replaceRoute(now);
    if (old.metric() != now.metric() || old.table() != now.table()) {
      try {
        deleteRoute(old);
      } catch (LinuxCallException e) {
        if (!e.notFound()) {
          throw e;
        }
      }
    }
  }

  // ---- neighbours

  /** The permanent neighbour entries of {@code device}. */
  List<Neighbour> neighbours(String namespace, String device) throws LinuxCallException;

  /** Adds or replaces a permanent neighbour entry. */
  void replaceNeighbour(Neighbour n) throws LinuxCallException;

  /** Deletes a neighbour entry. */
  void deleteNeighbour(Neighbour n) throws LinuxCallException;

  // ---- events

  /**
   * Whether these calls asked the kernel for a change within the last {@code d} (one being under
   * way counts): the interface watcher holds back the kernel's events while the agent makes changes
   * itself, so that a burst of them is read once at its end.
   */
  default boolean changedWithin(Duration d) {
    return false;
  }

  /**
   * Calls {@code onEvent} (on a thread of its own, in the kernel's order) with each change of the
   * links and addresses of the agent's namespace, until the returned handle is closed. The
   * monitoring may end with the thread that called this method: call it from a thread that lives as
   * long as the watch.
   */
  AutoCloseable watchLinks(Consumer<LinkEvent> onEvent) throws LinuxCallException;
}
