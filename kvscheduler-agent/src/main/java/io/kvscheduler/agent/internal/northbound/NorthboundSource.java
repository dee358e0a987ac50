package io.kvscheduler.agent.internal.northbound;

/**
 * A source of NB configuration run by the agent (file directory, etcd, REST). Started after every
 * plugin is initialised; closed on shutdown before the plugins.
 */
public interface NorthboundSource extends AutoCloseable {

  /** Short name for logs, e.g. {@code file}, {@code etcd}, {@code rest}. */
  String name();

  /** Starts: the first full resync and the watching. */
  void start() throws Exception;

  @Override
  void close();
}
