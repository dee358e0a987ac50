package io.kvscheduler.agent.spi;

/**
 * A value that cannot be decoded or does not fit its key: malformed JSON, an unknown field, a key
 * of no model, or a key that differs from the key computed from the value. The message names the
 * key and the cause.
 */
public final class ModelException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String key;

  public ModelException(String key, String message) {
    super(key + ": " + message);
    this.key = key;
  }

  public ModelException(String key, String message, Throwable cause) {
    super(key + ": " + message, cause);
    this.key = key;
  }

  /** The key whose value was rejected. */
  public String key() {
    return key;
  }
}
