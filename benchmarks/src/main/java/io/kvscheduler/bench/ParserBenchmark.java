package io.kvscheduler.bench;

import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.MockModels;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of the agent's parsers up to their documented limits (docs/agent.md, "Input limits"):
 * one scalar of up to {@link ConfigDocument#MAX_SCALAR_CODE_POINTS} code points in each YAML scalar
 * style, in JSON and in a model's JSON (an etcd value), and keyed documents of 1,000, 10,000 and
 * 100,000 mock interfaces and of as many as fit in {@link ConfigDocument#MAX_CODE_POINTS}, parsed
 * and decoded into values as a config file is. The time per code point (per interface) should not
 * grow with the size: the parsers are linear.
 *
 * <p>Run (after {@code ./mvnw -B -q package -DskipTests}); the largest documents want a large heap:
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main ParserBenchmark
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main \
 *     'ParserBenchmark.document' -p values=1k,10k,100k          # documents below the limit
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main \
 *     'ParserBenchmark.scalar' -p length=65536 -p style=yaml-plain,json -wi 1 -i 1 -f 0
 *                                                        # a quick check that it runs
 * </pre>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx12g"})
public class ParserBenchmark {
  private static final String KEY = "config/mock/v1/interfaces/tap1";

  /** A document holding one long string, in one of the styles a user can write it. */
  @State(Scope.Benchmark)
  public static class Scalar {
    @Param({
      "yaml-plain",
      "yaml-double-quoted",
      "yaml-single-quoted",
      "yaml-block",
      "json",
      "model-json"
    })
    public String style;

    @Param({"65536", "262144", "1048576"})
    public int length;

    String text;
    ModelRegistry models;

    @Setup
    public void make() {
      String s = "x".repeat(length - 20);
      text =
          switch (style) {
            case "yaml-plain" -> "name: tap1\ntype: " + s + "\n";
            case "yaml-double-quoted" -> "name: tap1\ntype: \"" + s + "\"\n";
            case "yaml-single-quoted" -> "name: tap1\ntype: '" + s + "'\n";
            case "yaml-block" -> "name: tap1\ntype: |\n  " + s + "\n";
            case "json" -> "{\"name\": \"tap1\", \"type\": \"" + s + "\"}";
            // a string field of the model (its type is an enum, which a long string is not)
            case "model-json" -> "{\"name\": \"tap1\", \"phys_address\": \"" + s + "\"}";
            default -> throw new IllegalArgumentException(style);
          };
      models = new ModelRegistry();
      MockModels.registerAll(models);
    }
  }

  /**
   * A keyed document of mock interfaces (about 100 code points each), in YAML or JSON: 1,000,
   * 10,000 or 100,000 interfaces, or as many as fit in the document limit ({@code limit}, about 2.6
   * million).
   */
  @State(Scope.Benchmark)
  public static class Document {
    @Param({"yaml", "json"})
    public String format;

    @Param({"1k", "10k", "100k", "limit"})
    public String values;

    String text;

    /** The interfaces in {@link #text}. */
    int count;

    @Setup
    public void make() {
      boolean json = format.equals("json");
      int wanted =
          switch (values) {
            case "1k" -> 1_000;
            case "10k" -> 10_000;
            case "100k" -> 100_000;
            case "limit" -> Integer.MAX_VALUE;
            default -> throw new IllegalArgumentException(values);
          };
      // room for the last interface and the closing brace, all within the document limit
      int room = ConfigDocument.MAX_CODE_POINTS - 300;
      StringBuilder b = new StringBuilder(wanted == Integer.MAX_VALUE ? room : wanted * 110);
      b.append(json ? "{\n" : "");
      int i = 0;
      for (; i < wanted && b.length() < room; i++) {
        if (json) {
          b.append(i == 0 ? "" : ",\n")
              .append("\"config/mock/v1/interfaces/tap")
              .append(i)
              .append("\": {\"name\": \"tap")
              .append(i)
              .append("\", \"type\": \"TAP\", \"enabled\": true, \"phys_address\": \"aa:bb\"}");
        } else {
          b.append("config/mock/v1/interfaces/tap")
              .append(i)
              .append(":\n  name: tap")
              .append(i)
              .append("\n  type: TAP\n  enabled: true\n  phys_address: \"aa:bb:cc:00:00:01\"\n");
        }
      }
      count = i;
      text = b.append(json ? "\n}\n" : "").toString();
      System.out.printf(
          "%n%s document: %,d interfaces, %,d characters%n", format, count, text.length());
    }
  }

  @Benchmark
  public Object scalar(Scalar s) throws Exception {
    return switch (s.style) {
      case "json" -> ConfigDocument.parseJson(s.text);
      case "model-json" -> s.models.decode(KEY, s.text);
      default -> ConfigDocument.parseYaml(s.text);
    };
  }

  /** Parses the document and decodes every interface, as a config file is. */
  @Benchmark
  public Map<String, Object> document(Document d, Models m) throws Exception {
    ConfigDocument doc =
        d.format.equals("json")
            ? ConfigDocument.parseJson(d.text)
            : ConfigDocument.parseYaml(d.text);
    Map<String, Object> values = ConfigFormat.decodeAny(m.registry, doc);
    if (values.size() != d.count) {
      throw new IllegalStateException(values.size() + " values decoded, " + d.count + " given");
    }
    return values;
  }

  /** The mock models, as the agent registers them. */
  @State(Scope.Benchmark)
  public static class Models {
    final ModelRegistry registry = new ModelRegistry();

    @Setup
    public void register() {
      MockModels.registerAll(registry);
    }
  }
}
