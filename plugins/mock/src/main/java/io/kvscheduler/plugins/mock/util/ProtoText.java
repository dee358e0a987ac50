package io.kvscheduler.plugins.mock.util;

/**
 * Builds the compact one-line text form of a value (the protobuf text format the reference's logs
 * show), e.g. {@code name:"tap1" type:TAP enabled:true}: fields in declaration order, fields
 * holding their default value left out, nested messages in braces.
 */
public final class ProtoText {
  private final StringBuilder sb = new StringBuilder();

  /** Appends a string field unless it is empty. */
  public ProtoText str(String name, String value) {
    if (value != null && !value.isEmpty()) {
      field(name).append('"').append(value.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    return this;
  }

  /** Appends a boolean field unless it is false. */
  public ProtoText bool(String name, boolean value) {
    if (value) {
      field(name).append("true");
    }
    return this;
  }

  /** Appends an enum field unless it holds its first (default) constant. */
  public ProtoText enumeration(String name, Enum<?> value) {
    if (value != null && value.ordinal() != 0) {
      field(name).append(value.name());
    }
    return this;
  }

  /** Appends a nested message field (repeated fields call this once per element). */
  public ProtoText message(String name, Object value) {
    field(name).append('{').append(value).append('}');
    return this;
  }

  private StringBuilder field(String name) {
    if (sb.length() > 0) {
      sb.append(' ');
    }
    return sb.append(name).append(':');
  }

  @Override
  public String toString() {
    return sb.toString();
  }
}
