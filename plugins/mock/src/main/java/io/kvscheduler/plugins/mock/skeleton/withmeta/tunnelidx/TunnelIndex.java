package io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx;

import io.kvscheduler.api.NamedMapping;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Read-only, typed view of the tunnel metadata map: the API other plugins use to find a tunnel's SB
 * handle by name, or a tunnel by handle or VNI. Labels are tunnel names (the descriptor's key
 * label). The scheduler updates the map as operations succeed; reads are safe from any thread.
 *
 * <p>The secondary indexes are declared on the descriptor with {@code metadataIndex(name,
 * extractor)}; the extractors live here, next to the lookups that use them.
 */
public final class TunnelIndex {
  /** Secondary index: SB handle (decimal) → tunnel name. */
  public static final String BY_HANDLE = "handle";

  /** Secondary index: VNI (decimal) → names of the tunnels using it. */
  public static final String BY_VNI = "vni";

  private final NamedMapping<TunnelMetadata> mapping;

  public TunnelIndex(NamedMapping<TunnelMetadata> mapping) {
    this.mapping = mapping;
  }

  /** Index values of {@code meta} in {@link #BY_HANDLE}. */
  public static List<String> handleKeys(TunnelMetadata meta) {
    return List.of(Integer.toString(meta.handle()));
  }

  /** Index values of {@code meta} in {@link #BY_VNI}. */
  public static List<String> vniKeys(TunnelMetadata meta) {
    return List.of(Integer.toString(meta.vni()));
  }

  /** Metadata of the configured tunnel {@code name}. */
  public Optional<TunnelMetadata> lookupByName(String name) {
    return mapping.lookup(name);
  }

  /** Name of the configured tunnel with SB handle {@code handle}. */
  public Optional<String> lookupByHandle(int handle) {
    return mapping.lookupByIndex(BY_HANDLE, Integer.toString(handle)).stream().findFirst();
  }

  /** Names of the configured tunnels with VNI {@code vni}, sorted. */
  public Set<String> lookupByVni(int vni) {
    return mapping.lookupByIndex(BY_VNI, Integer.toString(vni));
  }

  /** Names of every configured tunnel, sorted. */
  public Set<String> names() {
    return mapping.labels();
  }

  /** The underlying read-only map (e.g. to watch changes). */
  public NamedMapping<TunnelMetadata> mapping() {
    return mapping;
  }
}
