package io.kvscheduler.agent.spi;

import com.google.protobuf.Descriptors.Descriptor;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A plugin's domain in the configurator's whole configuration ({@code ligato.configurator.Config}):
 * one field, beside ligato's own domains ({@code vpp_config = 1}, {@code linux_config = 2}, {@code
 * netalloc_config = 3}), whose message holds the plugin's values, one repeated (or single) field
 * per model. The mock plugins' domain, for example, is {@code mock.ConfigData mock_config = 100}.
 *
 * <p>The wire contract does not declare these fields: a transport reads field {@code fieldNumber}
 * of a request's Config with {@code configData} and writes the domain back at the same number, so
 * clients that know the field (from the plugin's .proto file) see it as a declared field and
 * clients that do not see an unknown field. The messages of {@code configData}'s fields are the
 * plugin's models' messages (by their full proto name); the file of {@code configData} should be
 * among {@link AgentPlugin#protoFiles}.
 *
 * @param fieldName the field's name in Config (such as {@code mock_config}), for error messages and
 *     for the Config a reflection client sees
 * @param fieldNumber the field's number in Config: above ligato's domains, not in protobuf's
 *     reserved range 19000-19999
 * @param configData the message of the field
 */
public record ConfigDomain(String fieldName, int fieldNumber, Descriptor configData) {
  /** The highest field number protobuf allows. */
  public static final int MAX_FIELD_NUMBER = (1 << 29) - 1;

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /**
   * @throws IllegalArgumentException when the name is not a proto field name or the number is not
   *     one a field may have
   * @throws NullPointerException when the name or the message is null
   */
  public ConfigDomain {
    Objects.requireNonNull(fieldName, "fieldName");
    Objects.requireNonNull(configData, "configData");
    if (!NAME.matcher(fieldName).matches()) {
      throw new IllegalArgumentException(
          "config domain field name '" + fieldName + "' is not a proto field name");
    }
    if (fieldNumber < 1
        || fieldNumber > MAX_FIELD_NUMBER
        || (fieldNumber >= 19000 && fieldNumber <= 19999)) {
      throw new IllegalArgumentException(
          "config domain "
              + fieldName
              + ": field number "
              + fieldNumber
              + " is not one a field may have (1 to "
              + MAX_FIELD_NUMBER
              + ", not 19000-19999)");
    }
  }
}
