package io.kvscheduler.agent.internal.northbound;

import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.spi.ModelRegistry;

/**
 * What a northbound source reports besides its deliveries: values it rejected and reconnects after
 * an outage. {@link AgentMetrics} counts them; {@link #NONE} ignores them.
 */
public interface SourceEvents {
  /** Ignores every event. */
  SourceEvents NONE =
      new SourceEvents() {
        @Override
        public void valueRejected(String source, String reason) {}

        @Override
        public void reconnected(String source) {}
      };

  /**
   * {@code source} rejected a value or a document; {@code reason} is one short word: {@code
   * malformed}, {@code unknown-model}, {@code duplicate}, {@code unreadable}, {@code too-large} (a
   * file larger than a document may be) or {@code outside-directory} (a link leading out of the
   * config directory).
   */
  void valueRejected(String source, String reason);

  /** {@code source} is connected again after an outage. */
  void reconnected(String source);

  /**
   * The reason a value given under {@code key} was rejected: {@code unknown-model} when the key is
   * under no model's key prefix, else {@code malformed} (the value, or the name in the key).
   */
  static String reasonFor(ModelRegistry models, String key) {
    if (key == null || key.isEmpty() || models.forKey(key).isPresent()) {
      return "malformed";
    }
    return models.models().stream().anyMatch(m -> key.startsWith(m.keyPrefix()))
        ? "malformed"
        : "unknown-model";
  }
}
