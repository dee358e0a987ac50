package io.kvscheduler.plugins.linux.ifaceidx;

import io.kvscheduler.api.NamedMapping;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Read-only, typed view of the interface metadata map: labels are logical interface names; the
 * secondary index {@link #BY_HOST_NAME} finds interfaces by their kernel name. The scheduler
 * updates the map as operations succeed; reads are safe from any thread. With a second map, that of
 * the links of the extension package (bridges, VXLAN, ...), it finds those too: addresses, routes,
 * ARP entries and ports name interfaces and links alike (an interface wins a name both have).
 */
public final class LinuxIfIndex {
  /** Secondary index: kernel (host) name → logical names (several namespaces may reuse one). */
  public static final String BY_HOST_NAME = "host-iface-name";

  private final NamedMapping<LinuxIfMetadata> mapping;
  private final NamedMapping<LinuxIfMetadata> links;

  public LinuxIfIndex(NamedMapping<LinuxIfMetadata> mapping) {
    this(mapping, null);
  }

  /** The interfaces of {@code mapping} and the links of {@code links} (null: none). */
  public LinuxIfIndex(NamedMapping<LinuxIfMetadata> mapping, NamedMapping<LinuxIfMetadata> links) {
    this.mapping = mapping;
    this.links = links;
  }

  /** Whether {@code name} is a configured link of the extension package (not an interface). */
  public boolean isLink(String name) {
    return links != null && mapping.lookup(name).isEmpty() && links.lookup(name).isPresent();
  }

  /** Index values of {@code meta} in {@link #BY_HOST_NAME}. */
  public static List<String> hostNameKeys(LinuxIfMetadata meta) {
    return List.of(meta.hostIfName());
  }

  /** Metadata of the configured interface {@code name}. */
  public Optional<LinuxIfMetadata> lookup(String name) {
    Optional<LinuxIfMetadata> m = mapping.lookup(name);
    return m.isPresent() || links == null ? m : links.lookup(name);
  }

  /** Logical names of the configured interfaces whose kernel name is {@code hostName}. */
  public Set<String> lookupByHostName(String hostName) {
    if (links == null) {
      return mapping.lookupByIndex(BY_HOST_NAME, hostName);
    }
    Set<String> out = new LinkedHashSet<>(mapping.lookupByIndex(BY_HOST_NAME, hostName));
    out.addAll(links.lookupByIndex(BY_HOST_NAME, hostName));
    return out;
  }

  /** Logical names of every configured interface (and link). */
  public Set<String> names() {
    if (links == null) {
      return mapping.labels();
    }
    Set<String> out = new LinkedHashSet<>(mapping.labels());
    out.addAll(links.labels());
    return out;
  }

  /** The underlying read-only map. */
  public NamedMapping<LinuxIfMetadata> mapping() {
    return mapping;
  }
}
