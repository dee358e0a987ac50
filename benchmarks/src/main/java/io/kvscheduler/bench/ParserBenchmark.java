package io.kvscheduler.bench;

import io.kvscheduler.agent.internal.ConfigDocument;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.MockModels;
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
 * The cost of the agent's parsers up to their documented limits (README, "Input limits"): one
 * scalar of up to {@link ConfigDocument#MAX_SCALAR_CODE_POINTS} code points in each YAML scalar
 * style, in JSON and in a model's JSON (an etcd value), and whole documents of mock interfaces up
 * to {@link ConfigDocument#MAX_CODE_POINTS}. The time per code point should not grow with the
 * length: the parsers are linear.
 *
 * <p>Run (after {@code ./mvnw -B -q package -DskipTests}); the largest documents want a large
 * heap:
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main ParserBenchmark
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main ParserBenchmark \
 *     -p length=65536 -wi 1 -i 1 -f 0          # a quick check that it runs
 * </pre>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xmx12g"})
public class ParserBenchmark {
  private static final String KEY = "config/mock/v1/interfaces/tap1";

  /** A document holding one long string, in one of the styles a user can write it. */
  @State(Scope.Benchmark)
  public static class Scalar {
    @Param({"yaml-plain", "yaml-double-quoted", "yaml-single-quoted", "yaml-block", "json",
        "model-json"})
    public String style;

    @Param({"65536", "262144", "1048576"})
    public int length;

    String text;
    ModelRegistry models;

    @Setup
    public void make() {
      String s = "x".repeat(length - 20);
      text = switch (style) {
        case "yaml-plain" -> "name: tap1\ntype: " + s + "\n";
        case "yaml-double-quoted" -> "name: tap1\ntype: \"" + s + "\"\n";
        case "yaml-single-quoted" -> "name: tap1\ntype: '" + s + "'\n";
        case "yaml-block" -> "name: tap1\ntype: |\n  " + s + "\n";
        case "json", "model-json" -> "{\"name\": \"tap1\", \"type\": \"" + s + "\"}";
        default -> throw new IllegalArgumentException(style);
      };
      models = new ModelRegistry();
      MockModels.registerAll(models);
    }
  }

  /** A keyed document of mock interfaces, about 100 code points each. */
  @State(Scope.Benchmark)
  public static class Document {
    @Param({"yaml", "json"})
    public String format;

    /** Code points: 1 Mi, 16 Mi, 256 Mi (the document limit). */
    @Param({"1048576", "16777216", "268435456"})
    public int length;

    String text;

    @Setup
    public void make() {
      boolean json = format.equals("json");
      StringBuilder b = new StringBuilder(length);
      b.append(json ? "{\n" : "");
      for (int i = 0; b.length() < length - 200; i++) {
        if (json) {
          b.append(i == 0 ? "" : ",\n").append("\"config/mock/v1/interfaces/tap").append(i)
              .append("\": {\"name\": \"tap").append(i)
              .append("\", \"type\": \"TAP\", \"enabled\": true, \"phys_address\": \"aa:bb\"}");
        } else {
          b.append("config/mock/v1/interfaces/tap").append(i).append(":\n  name: tap").append(i)
              .append("\n  type: TAP\n  enabled: true\n  phys_address: \"aa:bb:cc:00:00:01\"\n");
        }
      }
      text = b.append(json ? "\n}\n" : "").toString();
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

  @Benchmark
  public ConfigDocument document(Document d) throws Exception {
    return d.format.equals("json")
        ? ConfigDocument.parseJson(d.text) : ConfigDocument.parseYaml(d.text);
  }
}
