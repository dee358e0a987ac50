package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.descriptor.ArpDescriptor;
import io.kvscheduler.plugins.linux.descriptor.InterfaceAddressDescriptor;
import io.kvscheduler.plugins.linux.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.linux.descriptor.RouteDescriptor;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.Route;
import org.junit.jupiter.api.Test;

/**
 * Values whose fields would reach an {@code ip} command as something else than what they say
 * (options, comments, paths, names the kernel reads as patterns) are INVALID, naming the field; the
 * message shows the value short and escaped, never raw.
 */
class HostileValuesTest {
  static final KVDescriptor.Validator<Interface> INTERFACES =
      InterfaceDescriptor.create(null, KernelFixture.AGENT_PREFIX).validate().orElseThrow();

  static Interface loopback(String name) {
    return Interface.newBuilder().setName(name).setType(Interface.Type.LOOPBACK).build();
  }

  /** The refusal of {@code i}, checked to name exactly {@code fields}. */
  static InvalidValueException refused(Interface i, String... fields) {
    InvalidValueException e =
        catchThrowableOfType(
            () -> INTERFACES.validate(Values.key(i), i), InvalidValueException.class);
    assertThat(e).as("%s is refused", i).isNotNull();
    assertThat(e.invalidFields()).containsExactlyInAnyOrder(fields);
    assertNothingRaw(e.getMessage());
    return e;
  }

  static void assertNothingRaw(String message) {
    assertThat(message.codePoints().noneMatch(Character::isISOControl)).as(message).isTrue();
    assertThat(message.chars().noneMatch(c -> Character.isSurrogate((char) c))).isTrue();
  }

  static void accepted(Interface i) {
    assertThatCode(() -> INTERFACES.validate(Values.key(i), i)).doesNotThrowAnyException();
  }

  @Test
  void namesThatWouldAddOptionsToTheAliasCommandAreInvalid() {
    assertThat(refused(loopback("lb\tmtu\t1300"), "name").getMessage())
        .contains("'lb\\tmtu\\t1300'")
        .contains("control character");
    refused(loopback("lb\tname\tpwn0"), "name");
    refused(loopback("lb\rmtu\r1300"), "name");
    refused(loopback("lb\nlink del lo"), "name");
    refused(loopback("lb\0"), "name");
    assertThat(refused(loopback("lb # mtu 1300"), "name").getMessage()).contains("'#'");
    assertThat(refused(loopback("lb ' mtu 1300 \""), "name").getMessage())
        .contains("both ' and \"");
    refused(Values.veth("v1", "p\tmtu\t1300", "").build(), "peer_if_name");
    refused(Values.veth("v1", "p#", "").build(), "peer_if_name");
  }

  @Test
  void aNameWithASlashIsInvalidAsTheAliasCouldNotBeReadBackAsThatName() {
    assertThat(refused(loopback("a/b"), "name").getMessage()).contains("'/'");
    accepted(Values.veth("v1", "peer/with/slashes", "").setHostIfName("v1").build());
  }

  @Test
  void oddButWritableAliasTextIsValid() {
    accepted(loopback("lb\" mtu 1300 \""));
    accepted(loopback("it's"));
    accepted(loopback("ends with a backslash\\"));
    accepted(loopback("\"starts with a quote"));
    accepted(loopback("日本語 ünïcödé 😀"));
    accepted(Values.veth("v1", "peer with spaces", "").setHostIfName("v1").build());
  }

  @Test
  void theAliasMustFitTheKernelsLimit() {
    String prefix = KernelFixture.AGENT_PREFIX;
    accepted(loopback("a".repeat(255 - prefix.length())));
    assertThat(refused(loopback("a".repeat(256 - prefix.length())), "name").getMessage())
        .contains("255 bytes");
    refused(loopback("é".repeat(128 - prefix.length() / 2)), "name");
    refused(Values.veth("v", "p".repeat(250), "").setHostIfName("v").build(), "peer_if_name");
  }

  @Test
  void linkNamesFollowTheKernelsRules() {
    for (String bad :
        new String[] {
          "eth:0",
          "a/b",
          ".",
          "..",
          "a b",
          "a\tb",
          "x%d",
          "à",
          "a\u0001b",
          "a\u007fb",
          "ü12345678901234",
          "1234567890123456",
          "a#b"
        }) {
      refused(Values.veth("v1", "v2", "").setHostIfName(bad).build(), "host_if_name");
    }
    // without host_if_name the name is the link's name
    refused(Values.veth("a-name-longer-than-15", "v2", "").build(), "name");
    refused(Values.veth("x%d", "v2", "").build(), "name");
    for (String good : new String[] {"a@b", "-x", "é", "ääää", "123456789012345", "veth_1.0"}) {
      accepted(Values.veth("v1", "v2", "").setHostIfName(good).build());
    }
  }

  @Test
  void namespaceReferencesAreFileNamesOfTheirDirectory() {
    for (String bad :
        new String[] {
          "..", ".", "a/b", "/proc/1/ns/net", "-x", "\tx", "a\u0001", "n".repeat(256)
        }) {
      refused(Values.veth("v1", "v2", bad).build(), "namespace");
    }
    for (String good : new String[] {"ns1", "my ns", "ü", "a:b", "n".repeat(255)}) {
      accepted(Values.veth("v1", "v2", good).build());
    }
  }

  @Test
  void messagesShowValuesShortAndEscaped() {
    String message = refused(loopback("x".repeat(300) + "\0\t"), "name").getMessage();
    assertThat(message).contains("xxx...'").doesNotContain("x".repeat(70));
    assertThat(message.length()).isLessThan(400);
    assertThat(refused(loopback("\u202e\ud800"), "name").getMessage()).contains("'\\u202e\\ud800'");
  }

  @Test
  void aCallRefusedBeforeReachingIpIsNotRetried() {
    var retriable =
        InterfaceDescriptor.create(null, KernelFixture.AGENT_PREFIX).isRetriableFailure().get();
    assertThat(retriable.isRetriable(new IllegalArgumentException("no line carries it"))).isFalse();
    assertThat(retriable.isRetriable(new IllegalStateException("anything else"))).isTrue();
  }

  @Test
  void otherDescriptorsShowValuesEscapedToo() {
    KVDescriptor.Validator<Route> routes = RouteDescriptor.create(null, null).validate().get();
    Route r =
        Route.newBuilder()
            .setOutgoingInterface("v1")
            .setDstNetwork("10.0.0.0/24\tmtu")
            .setGwAddr("10.0.0.1\tmtu 1300")
            .build();
    InvalidValueException e =
        catchThrowableOfType(() -> routes.validate(Values.key(r), r), InvalidValueException.class);
    assertThat(e.invalidFields()).containsExactlyInAnyOrder("dst_network", "gw_addr");
    assertThat(e.getMessage()).contains("'10.0.0.1\\tmtu 1300'");
    assertNothingRaw(e.getMessage());

    var arps = ArpDescriptor.create(null, null).validate().get();
    var a = Values.arp("v1", "10.0.0.1\r", "02:00:00:00:00:01\n");
    e = catchThrowableOfType(() -> arps.validate(Values.key(a), a), InvalidValueException.class);
    assertThat(e.invalidFields()).containsExactlyInAnyOrder("ip_address", "hw_address");
    assertNothingRaw(e.getMessage());

    var addresses = InterfaceAddressDescriptor.create(null, null).validate().get();
    String key = LinuxKeys.addressKey("v1", AddressSource.STATIC, "10.0.0.1/24\u0007");
    e =
        catchThrowableOfType(
            () -> addresses.validate(key, loopback("v1")), InvalidValueException.class);
    assertThat(e.invalidFields()).containsExactly("ip_addresses");
    assertNothingRaw(e.getMessage());
  }
}
