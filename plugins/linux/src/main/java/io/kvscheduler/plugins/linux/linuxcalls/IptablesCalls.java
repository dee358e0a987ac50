package io.kvscheduler.plugins.linux.linuxcalls;

/**
 * What the iptables rule chains ask of the kernel: the text {@code iptables-save} prints and {@code
 * iptables-restore} reads. A {@code namespace} argument is the name of a named network namespace,
 * the absolute path of a namespace file, or "" for the namespace the agent runs in; {@code v6}
 * picks {@code ip6tables}. Every failure is a {@link LinuxCallException} whose message is what
 * iptables printed.
 */
public interface IptablesCalls {
  /** What {@code iptables-save} prints for every table of {@code namespace}. */
  String save(String namespace, boolean v6) throws LinuxCallException;

  /**
   * Feeds {@code input} to one {@code iptables-restore --noflush} in {@code namespace}: each {@code
   * COMMIT} applies its table block on its own, so the blocks before a rejected one stay applied.
   */
  void restore(String namespace, boolean v6, String input) throws LinuxCallException;

  /**
   * What {@code iptables-save} prints after {@code input} is restored into a fresh, empty network
   * namespace made for the purpose and gone afterwards: the kernel's own spelling of the rules
   * ({@code -p tcp --dport 80} comes back as {@code -p tcp -m tcp --dport 80}).
   */
  String canonical(boolean v6, String input) throws LinuxCallException;

  /** How many {@code iptables-restore} processes these calls started (for tests and benchmarks). */
  long restores();

  /**
   * Ends the processes these calls keep running in {@code namespace}, so that a namespace whose
   * process ended is not kept alive by them; the next call in it starts afresh.
   */
  default void closeNamespace(String namespace) {}
}
