package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.internal.format.ConfigFormat.ConfigException;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import io.kvscheduler.plugins.mock.MockModels;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterProperty;
import org.slf4j.LoggerFactory;

/**
 * Fuzzing of every parser a user or a peer reaches, {@value #TRIES} generated inputs each: config
 * files (keyed and vpp-agent YAML formats, JSON) through the file northbound, REST bodies as the
 * REST API parses them, etcd values, and every model's JSON. Properties: no exception escapes but
 * the parsers' own rejection, every rejection names its place (file and line, line, key), and
 * values applied before stay applied. Each property prints how many inputs it tried, accepted and
 * rejected.
 */
class ParserFuzzTest {
  static final int TRIES = 10_000;
  private static final Duration SETTLE = Duration.ofSeconds(2);
  private static final String BASE =
      """
      config/mock/v1/interfaces/base0:
        name: base0
        type: TAP
      config/mock/v1/interfaces/base1:
        name: base1
      """;

  private final ModelRegistry models = new ModelRegistry();
  private String label;
  private long accepted;
  private long rejected;

  // the file northbound's state, set up by the first input of a file property
  private Path dir;
  private FileNorthbound files;
  private FileNorthboundSettleTest.ManualClock clock;
  private FileNorthboundSettleTest.Recording nb;
  private Map<String, Object> base;
  private Map<String, Object> fuzzedBefore = Map.of();

  ParserFuzzTest() {
    MockModels.registerAll(models);
    LinuxModels.registerAll(models);
  }

  @AfterProperty
  void report() throws IOException {
    System.out.printf(
        "fuzz %s: %d inputs, %d accepted, %d rejected%n",
        label, accepted + rejected, accepted, rejected);
    if (files != null) {
      files.close();
      logger().setLevel(null);
      try (Stream<Path> s = Files.walk(dir)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  // --- config files, through the file northbound ---

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void configFileYaml(@ForAll("documents") String text) throws IOException {
    configFile("fuzzed.yaml", text);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void configFileJson(@ForAll("documents") String text) throws IOException {
    configFile("fuzzed.json", text);
  }

  @Provide
  Arbitrary<String> documents() {
    return Arbitraries.frequencyOf(
        Tuple.of(
            6,
            FuzzInputs.mutationsOf(
                FuzzInputs.KEYED_YAML,
                FuzzInputs.VPP_YAML,
                FuzzInputs.KEYED_JSON,
                FuzzInputs.VPP_JSON)),
        Tuple.of(2, FuzzInputs.randomText()),
        Tuple.of(2, FuzzInputs.randomTreeText()));
  }

  /**
   * Writes {@code text} as the file {@code name} next to a good file, lets the file northbound read
   * it (twice, the settle time apart), and checks: the good file's values stay applied; the fuzzed
   * file either applies (its values are now desired) or is rejected naming file and line, and then
   * the values it gave before stay applied.
   */
  private void configFile(String name, String text) throws IOException {
    if (files == null) {
      label = "config file " + name;
      logger().setLevel(Level.OFF); // thousands of rejected files
      dir = Files.createTempDirectory("kvs-fuzz");
      Files.writeString(dir.resolve("base.yaml"), BASE);
      clock = new FileNorthboundSettleTest.ManualClock();
      nb = new FileNorthboundSettleTest.Recording();
      files =
          new FileNorthbound(dir, models, nb, Duration.ZERO, Duration.ofHours(1), SETTLE, clock);
      files.resyncAtStart();
      base = Map.copyOf(nb.desired);
      assertThat(base).hasSize(2);
    }
    Path file = dir.resolve(name);
    Files.write(file, text.getBytes(StandardCharsets.UTF_8));
    files.scanNow();
    clock.advance(SETTLE);
    files.scanNow();

    Map<String, Object> desired = new TreeMap<>(nb.desired);
    base.forEach((k, v) -> assertThat(desired).containsEntry(k, v));
    Map<String, Object> fuzzed = new HashMap<>(desired);
    fuzzed.keySet().removeAll(base.keySet());
    String error = files.errors().get(file);
    if (error == null) {
      accepted++;
      fuzzedBefore = fuzzed;
    } else {
      rejected++;
      assertThat(error)
          .as("rejection of %s", text)
          .matches(Pattern.quote(file.toString()) + ":[1-9][0-9]*: (?s).+");
      assertThat(fuzzed).as("values given before stay applied").isEqualTo(fuzzedBefore);
    }
  }

  private static Logger logger() {
    return (Logger) LoggerFactory.getLogger(FileNorthbound.class);
  }

  // --- REST bodies, parsed as the REST API parses them ---

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void restBodyYaml(@ForAll("documents") String body) {
    restBody(body, false);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void restBodyJson(@ForAll("documents") String body) {
    restBody(body, true);
  }

  private void restBody(String body, boolean json) {
    label = "REST body " + (json ? "JSON" : "YAML");
    try {
      ConfigDocument doc = json ? ConfigDocument.parseJson(body) : ConfigDocument.parseYaml(body);
      ConfigFormat.decodeYamlConfig(models, doc);
      accepted++;
    } catch (ConfigDocument.SyntaxException e) {
      rejected++;
      assertThat(e.getMessage()).isNotBlank();
      assertThat(e.line()).as("line of: %s, for %s", e.getMessage(), body).isPositive();
    } catch (ConfigException e) {
      rejected++;
      assertThat(e.getMessage()).isNotBlank();
      assertThat(e.line()).as("line of: %s, for %s", e.getMessage(), body).isPositive();
    }
  }

  // --- etcd values: a model's JSON text under a key ---

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void etcdValueInterface(@ForAll("interfaceValues") String value) {
    etcdValue(FuzzInputs.MODEL_VALUES.get(0)[0], value);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void etcdValueBridgeDomain(@ForAll("bridgeDomainValues") String value) {
    etcdValue(FuzzInputs.MODEL_VALUES.get(1)[0], value);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void etcdValueFib(@ForAll("fibValues") String value) {
    etcdValue(FuzzInputs.MODEL_VALUES.get(2)[0], value);
  }

  @Provide
  Arbitrary<String> interfaceValues() {
    return values(0);
  }

  @Provide
  Arbitrary<String> bridgeDomainValues() {
    return values(1);
  }

  @Provide
  Arbitrary<String> fibValues() {
    return values(2);
  }

  private static Arbitrary<String> values(int model) {
    return Arbitraries.frequencyOf(
        Tuple.of(7, FuzzInputs.mutationsOf(FuzzInputs.MODEL_VALUES.get(model)[1])),
        Tuple.of(3, FuzzInputs.randomTreeText()));
  }

  /** As the etcd northbound decodes a value (a leading byte order mark skipped). */
  private void etcdValue(String key, String value) {
    label = "etcd value of " + key.substring(0, key.indexOf('/', "config/mock/v1/".length()));
    try {
      Object v = models.decode(key, ConfigDocument.withoutBom(value));
      assertThat(models.keyOf(v)).isEqualTo(key);
      accepted++;
    } catch (ModelException e) {
      rejected++;
      assertThat(e.key()).isEqualTo(key);
      assertThat(e.getMessage()).startsWith(key + ": ").hasSizeGreaterThan(key.length() + 2);
    }
  }

  // --- every model's JSON, as a tree (values in config files and REST bodies) ---

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonInterface(@ForAll("trees") JsonNode tree) {
    modelJson(MockModels.INTERFACE, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonBridgeDomain(@ForAll("trees") JsonNode tree) {
    modelJson(MockModels.BRIDGE_DOMAIN, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonFib(@ForAll("trees") JsonNode tree) {
    modelJson(MockModels.FIB, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonLinuxInterface(@ForAll("trees") JsonNode tree) {
    modelJson(LinuxModels.INTERFACE, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonLinuxRoute(@ForAll("trees") JsonNode tree) {
    modelJson(LinuxModels.ROUTE, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonLinuxArp(@ForAll("trees") JsonNode tree) {
    modelJson(LinuxModels.ARP, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonLinuxRuleChain(@ForAll("ruleChainTrees") JsonNode tree) {
    modelJson(LinuxModels.RULE_CHAIN, tree);
  }

  @Provide
  Arbitrary<JsonNode> ruleChainTrees() {
    return FuzzInputs.randomTrees(FuzzInputs.RULE_CHAIN_NAMES);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonLinuxLink(@ForAll("trees") JsonNode tree) {
    modelJson(LinuxModels.LINK, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonLinuxPort(@ForAll("trees") JsonNode tree) {
    modelJson(LinuxModels.PORT, tree);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void modelJsonIpAllocation(@ForAll("ipAllocationTrees") JsonNode tree) {
    modelJson(LinuxModels.IP_ALLOCATION, tree);
  }

  @Provide
  Arbitrary<JsonNode> ipAllocationTrees() {
    return FuzzInputs.randomTrees(FuzzInputs.IP_ALLOCATION_NAMES);
  }

  @Provide
  Arbitrary<JsonNode> trees() {
    return FuzzInputs.randomTrees();
  }

  /**
   * Decodes {@code tree} as a value of {@code model}: rejected naming the key, or accepted, and
   * then written and read back the same.
   */
  private void modelJson(Model<?> model, JsonNode tree) {
    label = "model JSON of " + model.name();
    String key = model.keyPrefix() + "…";
    try {
      Object v = models.decodeTree(model, tree);
      accepted++;
      String k = models.keyOf(v);
      if (model.isKey(k)) {
        assertThat(models.decode(k, models.encode(v))).isEqualTo(v);
      }
    } catch (ModelException e) {
      rejected++;
      assertThat(e.key()).isEqualTo(key);
      assertThat(e.getMessage()).startsWith(key + ": ");
    }
  }
}
