package io.kvscheduler.agent.spi;

import io.kvscheduler.api.Excerpt;
import java.util.List;

/**
 * A value that cannot be decoded or does not fit its key: malformed JSON, an unknown field, a
 * scalar of the wrong type, a key of no model, or a key that differs from the key computed from the
 * value. The message names the key and the cause; {@link #path()} locates the field at fault inside
 * the value, when there is one. The message quotes the key to {@link Excerpt#MAX_QUOTED_CHARS}
 * characters and the cause to {@link Excerpt#MAX_MESSAGE_CHARS}, whatever they quote of the input.
 */
public final class ModelException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String key;
  private final List<Object> path;

  public ModelException(String key, String message) {
    this(key, message, null, List.of());
  }

  public ModelException(String key, String message, Throwable cause) {
    this(key, message, cause, List.of());
  }

  /**
   * @param path the field at fault inside the value: field names (as given or in snake_case) and
   *     list indexes ({@link Integer}), outermost first; empty when the value as a whole is at
   *     fault
   */
  public ModelException(String key, String message, Throwable cause, List<Object> path) {
    super(Excerpt.quote(key) + ": " + Excerpt.message(message), cause);
    this.key = key;
    this.path = List.copyOf(path);
  }

  /** The key whose value was rejected. */
  public String key() {
    return key;
  }

  /** Where inside the value the fault is (field names and list indexes), or empty. */
  public List<Object> path() {
    return path;
  }
}
