package io.kvscheduler.plugins.linux.ifaceidx;

import io.kvscheduler.api.NamedMapping;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Read-only, typed view of the interface metadata map: labels are logical interface names; the
 * secondary index {@link #BY_HOST_NAME} finds interfaces by their kernel name. The scheduler
 * updates the map as operations succeed; reads are safe from any thread.
 */
public final class LinuxIfIndex {
  /** Secondary index: kernel (host) name → logical names (several namespaces may reuse one). */
  public static final String BY_HOST_NAME = "host-iface-name";

  private final NamedMapping<LinuxIfMetadata> mapping;

  public LinuxIfIndex(NamedMapping<LinuxIfMetadata> mapping) {
    this.mapping = mapping;
  }

  /** Index values of {@code meta} in {@link #BY_HOST_NAME}. */
  public static List<String> hostNameKeys(LinuxIfMetadata meta) {
    return List.of(meta.hostIfName());
  }

  /** Metadata of the configured interface {@code name}. */
  public Optional<LinuxIfMetadata> lookup(String name) {
    return mapping.lookup(name);
  }

  /** Logical names of the configured interfaces whose kernel name is {@code hostName}. */
  public Set<String> lookupByHostName(String hostName) {
    return mapping.lookupByIndex(BY_HOST_NAME, hostName);
  }

  /** Logical names of every configured interface. */
  public Set<String> names() {
    return mapping.labels();
  }

  /** The underlying read-only map. */
  public NamedMapping<LinuxIfMetadata> mapping() {
    return mapping;
  }
}
