package io.kvscheduler.api;

import java.util.List;

/**
 * Thrown by a descriptor's Validate to reject a value, naming the invalid fields. The fields become
 * the details of the INVALID status. Message: the cause alone without fields, {@code field f is
 * invalid: cause} for one field, {@code fields [f1 f2] are invalid: cause} for several.
 */
public final class InvalidValueException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final List<String> invalidFields;
  private final String reason;

  /** Rejects a value; {@code fields} may be empty. */
  public InvalidValueException(String reason, String... fields) {
    this(reason, List.of(fields));
  }

  /** Rejects a value; {@code fields} may be empty. */
  public InvalidValueException(String reason, List<String> fields) {
    super(Excerpt.message(format(Excerpt.message(reason), fields)));
    this.reason = Excerpt.message(reason);
    this.invalidFields = List.copyOf(fields);
  }

  private static String format(String reason, List<String> fields) {
    if (fields.isEmpty()) {
      return reason;
    }
    if (fields.size() == 1) {
      return "field " + Excerpt.quote(fields.get(0)) + " is invalid: " + reason;
    }
    return "fields [" + Excerpt.quote(String.join(" ", fields)) + "] are invalid: " + reason;
  }

  /** The invalid fields (possibly empty). */
  public List<String> invalidFields() {
    return invalidFields;
  }

  /** The cause without the field prefix. */
  public String reason() {
    return reason;
  }
}
