package io.kvscheduler.agent.internal.northbound;

/** What the etcd tests read of an {@link EtcdNorthbound} besides its public state. */
public final class EtcdNorthboundProbe {
  private EtcdNorthboundProbe() {}

  /** The etcd revision of the source's last full resync (0 before the first). */
  public static long resyncRevision(EtcdNorthbound nb) {
    return nb.resyncRevision();
  }

  /** How many times the source probed its connection to etcd with a read. */
  public static long probeCount(EtcdNorthbound nb) {
    return nb.probeCount();
  }
}
