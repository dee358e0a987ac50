package io.kvscheduler.agent.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ModelRegistryTest {
  enum Kind {
    UNDEFINED_KIND,
    LOOPBACK,
    TAP
  }

  record Iface(String name, Kind type, boolean enabled, String physAddress) {}

  record Member(String name, boolean bridgedVirtualInterface) {}

  record Bd(String name, List<Member> interfaces) {}

  record Fib(String physAddress, String bridgeDomain) {}

  record Global(boolean forwarding) {}

  record Link(String name, int mtu, long speed, Kind kind) {}

  record Labelled(String name, Map<String, String> labels, List<Member> members) {}

  static final Model<Iface> IFACE =
      Model.builder("mock", "v1", "interfaces", Iface.class)
          .protoName("mock.interfaces.Interface")
          .name(Iface::name, "{{.Name}}")
          .build();
  static final Model<Bd> BD =
      Model.builder("mock", "v1", "bridge-domain", Bd.class)
          .protoName("mock.l2.BridgeDomain")
          .name(Bd::name, "{{.Name}}")
          .build();
  static final Model<Fib> FIB =
      Model.builder("mock", "v1", "fib", Fib.class)
          .protoName("mock.l2.FIBEntry")
          .name(
              f -> f.bridgeDomain() + "/mac/" + f.physAddress(),
              "{{.BridgeDomain}}/mac/{{.PhysAddress}}")
          .build();
  static final Model<Link> LINK =
      Model.builder("mock", "v1", "links", Link.class)
          .protoName("mock.links.Link")
          .name(Link::name, "{{.Name}}")
          .build();
  static final Model<Labelled> LABELLED =
      Model.builder("mock", "v1", "labelled", Labelled.class)
          .protoName("mock.Labelled")
          .name(Labelled::name, "{{.Name}}")
          .build();
  static final Model<Global> GLOBAL =
      Model.builder("mock.nat", "v2", "global", Global.class).protoName("mock.nat.Global").build();

  private final ModelRegistry reg = new ModelRegistry();

  ModelRegistryTest() {
    reg.register(IFACE);
    reg.register(BD);
    reg.register(FIB);
    reg.register(GLOBAL);
    reg.register(LINK);
    reg.register(LABELLED);
  }

  @Test
  void keysFollowTheVppAgentLayout() {
    assertThat(IFACE.name()).isEqualTo("mock.interfaces");
    assertThat(IFACE.keyPrefix()).isEqualTo("config/mock/v1/interfaces/");
    assertThat(FIB.key(new Fib("aa:bb:cc:dd:ee:ff", "bd1")))
        .isEqualTo("config/mock/v1/fib/bd1/mac/aa:bb:cc:dd:ee:ff");
    assertThat(GLOBAL.keyPrefix()).isEqualTo("config/mock/nat/v2/global");
    assertThat(GLOBAL.named()).isFalse();
    assertThat(IFACE.yamlGroup()).isEqualTo("mockConfig");
    assertThat(IFACE.yamlField()).isEqualTo("Interface_list");
    assertThat(GLOBAL.yamlField()).isEqualTo("Global");
    assertThat(reg.forKey("config/mock/v1/interfaces/tap1")).contains(IFACE);
    assertThat(reg.forKey("config/mock/v1/interfaces/")).isEmpty();
    assertThat(reg.forKey("config/mock/nat/v2/global")).contains(GLOBAL);
    assertThat(reg.forKey("check/status/v1/agent")).isEmpty();
  }

  @Test
  void invalidSpecsAndOverlappingPrefixesAreRejected() {
    assertThatThrownBy(() -> Model.builder("Mock", "v1", "x", Iface.class))
        .hasMessageContaining("model module 'Mock'");
    assertThatThrownBy(() -> Model.builder("mock", "1", "x", Iface.class))
        .hasMessageContaining("model version '1'");
    assertThatThrownBy(() -> reg.register(IFACE)).hasMessageContaining("already registered");
    Model<Iface> overlapping =
        Model.builder("mock", "v1", "interfaces.sub", Iface.class)
            .name(Iface::name, "{{.Name}}")
            .build();
    assertThatThrownBy(() -> reg.register(overlapping)).hasMessageContaining("overlaps");
  }

  @Test
  void decodesSnakeOrCamelNamesAndEnumNamesOrNumbers() throws Exception {
    Object a =
        reg.decode(
            "config/mock/v1/interfaces/tap1",
            "{\"name\":\"tap1\",\"type\":\"TAP\",\"enabled\":true,\"phys_address\":\"aa:bb:cc:dd:ee:ff\"}");
    Object b =
        reg.decode(
            "config/mock/v1/interfaces/tap1",
            "{\"name\":\"tap1\",\"type\":2,\"enabled\":true,\"physAddress\":\"aa:bb:cc:dd:ee:ff\"}");
    assertThat(a).isEqualTo(new Iface("tap1", Kind.TAP, true, "aa:bb:cc:dd:ee:ff")).isEqualTo(b);
    Object bd =
        reg.decode(
            "config/mock/v1/bridge-domain/bd1",
            "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"tap1\",\"bridgedVirtualInterface\":true}]}");
    assertThat(bd).isEqualTo(new Bd("bd1", List.of(new Member("tap1", true))));
  }

  @Test
  void encodesSnakeCaseWithoutDefaults() {
    assertThat(reg.encode(new Iface("tap1", Kind.TAP, true, "")))
        .isEqualTo("{\"name\":\"tap1\",\"type\":\"TAP\",\"enabled\":true}");
    assertThat(reg.toTree(new Bd("bd1", List.of(new Member("a", true))), true).toString())
        .isEqualTo(
            "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"a\",\"bridgedVirtualInterface\":true}]}");
  }

  @Test
  void badInputIsRejectedNamingKeyAndCause() {
    String key = "config/mock/v1/interfaces/tap1";
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"colour\":\"red\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageStartingWith(key + ": unknown field 'colour' in mock.interfaces.Interface")
        .hasMessageContaining("known fields:");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\n\"type\":"))
        .hasMessageStartingWith(key + ": malformed JSON at line 2");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"type\":\"VETH\"}"))
        .hasMessageContaining("invalid value VETH for field 'type'");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap2\"}"))
        .hasMessage(
            key
                + ": key does not match the key computed from the value:"
                + " config/mock/v1/interfaces/tap2");
    assertThatThrownBy(() -> reg.decode("config/other/v1/x/y", "{}"))
        .hasMessageContaining("no registered model has this key");
    assertThatThrownBy(() -> reg.decode(key, "[1,2]"))
        .hasMessageContaining("must be a JSON object");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"enabled\":\"yes\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("enabled");
  }

  @Test
  void scalarsOfTheWrongJsonTypeAreRejectedAsProtobufJsonDoes() {
    String key = "config/mock/v1/interfaces/tap1";
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"enabled\":5}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'enabled'");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"enabled\":\"true\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'enabled'");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"enabled\":2.5}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'enabled'");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"phys_address\":12}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'phys_address'");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"phys_address\":true}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'phys_address'");
    String link = "config/mock/v1/links/l1";
    assertThatThrownBy(() -> reg.decode(link, "{\"name\":\"l1\",\"mtu\":1500.5}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'mtu'");
    assertThatThrownBy(() -> reg.decode(link, "{\"name\":\"l1\",\"mtu\":true}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'mtu'");
    for (String bad : List.of("\"\"", "\" \"", "\"null\"", "\" 1500 \"", "\"15x\"")) {
      assertThatThrownBy(() -> reg.decode(link, "{\"name\":\"l1\",\"mtu\":" + bad + "}"))
          .as(bad)
          .isInstanceOf(ModelException.class)
          .hasMessageContaining("'mtu'");
    }
    for (String bad : List.of("\"\"", "\" \"")) {
      assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"enabled\":" + bad + "}"))
          .as(bad)
          .isInstanceOf(ModelException.class)
          .hasMessageContaining("'enabled'");
    }
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"name\":\"tap1\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("Duplicate field 'name'");
  }

  @Test
  void numbersMayBeGivenAsStringsAsProtobufJsonWritesLargeIntegers() throws Exception {
    assertThat(
            reg.decode(
                "config/mock/v1/links/l1",
                "{\"name\":\"l1\",\"mtu\":\"1500\",\"speed\":\"10000000000\"}"))
        .isEqualTo(new Link("l1", 1500, 10_000_000_000L, Kind.UNDEFINED_KIND));
    assertThat(
            reg.decode(
                "config/mock/v1/links/l1", "{\"name\":\"l1\",\"mtu\":1500.0,\"speed\":1e10}"))
        .isEqualTo(new Link("l1", 1500, 10_000_000_000L, Kind.UNDEFINED_KIND));
    assertThat(reg.decode("config/mock/v1/links/l1", "{\"name\":\"l1\",\"mtu\":null}"))
        .isEqualTo(new Link("l1", 0, 0, Kind.UNDEFINED_KIND));
  }

  @Test
  void aFieldGivenUnderBothSpellingsIsRejected() {
    String key = "config/mock/v1/interfaces/tap1";
    assertThatThrownBy(
            () ->
                reg.decode(
                    key,
                    "{\"name\":\"tap1\",\"phys_address\":\"aa:aa:aa:aa:aa:aa\","
                        + "\"physAddress\":\"bb:bb:bb:bb:bb:bb\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessage(
            key
                + ": field 'phys_address' is given twice in mock.interfaces.Interface"
                + " (as 'phys_address' and as 'physAddress')");
  }

  @Test
  void defaultsAreLeftOutAndAbsentOrNullFieldsReadAsProto3Defaults() throws Exception {
    Iface undefined = new Iface("tap1", Kind.UNDEFINED_KIND, true, "");
    assertThat(reg.encode(undefined)).isEqualTo("{\"name\":\"tap1\",\"enabled\":true}");
    assertThat(reg.toTree(undefined, true).toString())
        .isEqualTo("{\"name\":\"tap1\",\"enabled\":true}");
    assertThat(reg.decode("config/mock/v1/interfaces/tap1", reg.encode(undefined)))
        .isEqualTo(undefined);
    assertThat(reg.decode("config/mock/v1/interfaces/tap1", "{\"name\":\"tap1\",\"type\":null}"))
        .isEqualTo(new Iface("tap1", Kind.UNDEFINED_KIND, false, ""));
    assertThat(
            reg.decode(
                "config/mock/v1/interfaces/tap1", "{\"name\":\"tap1\",\"physAddress\":null}"))
        .isEqualTo(new Iface("tap1", Kind.UNDEFINED_KIND, false, ""));
    assertThat(reg.decode("config/mock/v1/bridge-domain/bd1", "{\"name\":\"bd1\"}"))
        .isEqualTo(new Bd("bd1", List.of()));
    assertThat(reg.encode(new Link("l1", 0, 0, Kind.TAP)))
        .isEqualTo("{\"name\":\"l1\",\"kind\":\"TAP\"}");
  }

  @Test
  void aWrongTypeIsNamedInWordsWithThePathOfTheField() {
    String key = "config/mock/v1/interfaces/tap1";
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"enabled\":\"yes\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessage(
            key
                + ": wrong type for field 'enabled' of mock.interfaces.Interface:"
                + " expected true or false, got the string 'yes'")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("enabled"));
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":[\"tap1\"]}"))
        .hasMessage(
            key
                + ": wrong type for field 'name' of mock.interfaces.Interface:"
                + " expected a string, got a list");
    assertThatThrownBy(
            () -> reg.decode("config/mock/v1/links/l1", "{\"name\":\"l1\",\"mtu\":3000000000}"))
        .hasMessage(
            "config/mock/v1/links/l1: wrong type for field 'mtu' of mock.links.Link:"
                + " expected an integer, got the number 3000000000")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("mtu"));
    String bd = "config/mock/v1/bridge-domain/bd1";
    assertThatThrownBy(
            () ->
                reg.decode(
                    bd,
                    "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"a\"},{\"name\":\"b\","
                        + "\"bridgedVirtualInterface\":1}]}"))
        .hasMessageContaining("field 'interfaces[1].bridged_virtual_interface'")
        .hasMessageEndingWith("expected true or false, got the number 1")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("interfaces", 1, "bridged_virtual_interface"));
    assertThatThrownBy(
            () ->
                reg.decode(bd, "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"a\",\"colour\":1}]}"))
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("interfaces", 0, "colour"));
    assertThatThrownBy(
            () ->
                reg.decode(
                    bd,
                    "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"a\",\"bridgedVirtualInterface\":true,"
                        + "\"bridged_virtual_interface\":false}]}"))
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("interfaces", 0, "bridged_virtual_interface"));
  }

  @Test
  void theKeysOfAMapFieldAreDataAndKeepTheirSpelling() throws Exception {
    String key = "config/mock/v1/labelled/x";
    Object v =
        reg.decode(
            key,
            "{\"name\":\"x\",\"labels\":{\"myKey\":\"a\",\"my_key\":\"b\"},"
                + "\"members\":[{\"name\":\"m\",\"bridged_virtual_interface\":true}]}");
    assertThat(v)
        .isEqualTo(
            new Labelled("x", Map.of("myKey", "a", "my_key", "b"), List.of(new Member("m", true))));
    assertThat(reg.toTree(v, true).toString())
        .isEqualTo(
            "{\"name\":\"x\","
                + "\"labels\":{\"myKey\":\"a\",\"my_key\":\"b\"},"
                + "\"members\":[{\"name\":\"m\",\"bridgedVirtualInterface\":true}]}");
    assertThat(reg.encode(v))
        .contains("\"labels\":{\"myKey\":\"a\",\"my_key\":\"b\"}")
        .contains("\"bridged_virtual_interface\":true");
  }

  @Test
  void trailingTextNullItemsAndFailingConstructorsAreReportedAtTheirField() {
    String key = "config/mock/v1/interfaces/tap1";
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\"} trailing"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("malformed JSON");
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\"}{\"x\":1}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("malformed JSON");
    String bd = "config/mock/v1/bridge-domain/bd1";
    assertThatThrownBy(
            () -> reg.decode(bd, "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"a\"},null]}"))
        .hasMessage(
            bd
                + ": field 'interfaces[1]' of mock.l2.BridgeDomain is null"
                + " (a list holds no null items)")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("interfaces", 1));
    assertThatThrownBy(() -> reg.decode(key, "{\"name\":\"tap1\",\"type\":99999999999}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'type'")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("type"));
  }

  @Test
  void anUnknownFieldIsNamedAsTypedWithItsPath() {
    assertThatThrownBy(
            () ->
                reg.decode(
                    "config/mock/v1/interfaces/tap1", "{\"name\":\"tap1\",\"colourName\":\"red\"}"))
        .hasMessageStartingWith(
            "config/mock/v1/interfaces/tap1: unknown field 'colourName' in"
                + " mock.interfaces.Interface (known fields: ");
    assertThatThrownBy(
            () ->
                reg.decode(
                    "config/mock/v1/bridge-domain/bd1",
                    "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"a\"},{\"name\":\"b\",\"color\":1}]}"))
        .hasMessageStartingWith(
            "config/mock/v1/bridge-domain/bd1: unknown field"
                + " 'interfaces[1].color' in mock.l2.BridgeDomain (known fields there: ")
        .extracting(e -> ((ModelException) e).path())
        .isEqualTo(List.of("interfaces", 1, "color"));
  }
}
