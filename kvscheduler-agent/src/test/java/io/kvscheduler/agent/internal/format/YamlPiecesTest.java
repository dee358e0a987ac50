package io.kvscheduler.agent.internal.format;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A large YAML document read in pieces on several threads ({@link ConfigDocument.YamlPieces}) gives
 * exactly what reading it whole gives, values and lines, or declines (and it is read whole): never
 * a document the whole reading would refuse, never another value or line.
 */
class YamlPiecesTest {
  /** Lines of top-level entries, some plain and some that tie a line to the next ones. */
  private static final List<String> ENTRIES =
      List.of(
          "k%d: v%d\n",
          "k%d:\n  name: n%d\n  type: TAP\n",
          "k%d:\n  list:\n  - a%d\n  - b\n",
          "k%d:\n  - x%d\n  - y\n",
          "k%d: [1, %d,\n  3]\n",
          "k%d: {a: %d}\n",
          "k%d: \"two %d\n  lines\"\n",
          "k%d: 'single %d\n  quoted'\n",
          "k%d: |\n  block %d\n  text\n",
          "k%d: >-\n  folded %d\n",
          "# comment %d %d\n",
          "\n",
          "k%d: plain %d\ncontinued at column 0\n",
          "k%d: [open %d,\nclosed]\n",
          "? complex%d\n: value%d\n",
          "k%d: \"open %d\nq: x\"\n",
          "\"quoted key %d\": %d\n",
          "k%d:\n  deep:\n    deeper: %d\n",
          "k%d: null%d\n",
          "k%d:\n",
          "- item%d %d\n",
          "k0: duplicate %d %d\n",
          "k%d: &a%d x\n",
          "k%d: text with a # hash %d\n",
          "  indented%d: %d\n");

  @Provide
  Arbitrary<String> documents() {
    return Arbitraries.longs()
        .map(
            seed -> {
              Random r = new Random(seed);
              StringBuilder b = new StringBuilder();
              int entries = 1 + r.nextInt(40);
              for (int i = 0; i < entries; i++) {
                String entry =
                    r.nextInt(4) == 0
                        ? ENTRIES.get(r.nextInt(ENTRIES.size()))
                        : ENTRIES.get(r.nextInt(3));
                b.append(String.format(entry, i + 1, r.nextInt(1000)));
              }
              String doc = b.toString();
              if (r.nextInt(3) == 0 && !doc.isEmpty()) { // a random edit
                int at = r.nextInt(doc.length());
                String what =
                    List.of("\n", " ", ":", "\"", "'", "[", "#", "\t", "x").get(r.nextInt(9));
                doc =
                    r.nextBoolean()
                        ? doc.substring(0, at) + what + doc.substring(at)
                        : doc.substring(0, at) + doc.substring(Math.min(doc.length(), at + 1));
              }
              return doc;
            });
  }

  @Property(tries = 3000)
  @Label("read in pieces: the same values and lines as read whole, or read whole")
  void sameAsWhole(@ForAll("documents") String text, @ForAll @IntRange(min = 2, max = 6) int pieces)
      throws Exception {
    ConfigDocument inPieces = ConfigDocument.YamlPieces.parse(text, pieces, 0);
    Statistics.collect(inPieces != null ? "in pieces" : "whole");
    Statistics.coverage(c -> c.check("in pieces").percentage(p -> p > 20));
    ConfigDocument whole;
    try {
      whole = ConfigDocument.parseYaml(text, Integer.MAX_VALUE);
    } catch (ConfigDocument.SyntaxException e) {
      assertThat(inPieces).as("a document read whole is refused: " + e.getMessage()).isNull();
      return;
    }
    if (inPieces == null) {
      return;
    }
    assertThat(inPieces.root()).isEqualTo(whole.root());
    assertSameLines(whole, whole.root(), inPieces, inPieces.root());
  }

  @Test
  @DisplayName("a large plain document is read in pieces, the same as whole")
  void largeDocument() throws Exception {
    StringBuilder b = new StringBuilder("# interfaces\n");
    for (int i = 0; i < 2000; i++) {
      b.append("config/mock/v1/interfaces/if")
          .append(i)
          .append(":\n  name: if")
          .append(i)
          .append("\n  enabled: true\n");
    }
    String text = b.toString();
    ConfigDocument inPieces = ConfigDocument.YamlPieces.parse(text, 3, 0);
    assertThat(inPieces).isNotNull();
    ConfigDocument whole = ConfigDocument.parseYaml(text, Integer.MAX_VALUE);
    assertThat(inPieces.root()).isEqualTo(whole.root());
    assertSameLines(whole, whole.root(), inPieces, inPieces.root());
    assertThat(inPieces.lineOf(inPieces.root(), List.of("config/mock/v1/interfaces/if1999"), 0))
        .isEqualTo(2 + 3 * 1999);
  }

  private static void assertSameLines(
      ConfigDocument a, JsonNode an, ConfigDocument b, JsonNode bn) {
    assertThat(b.lineOf(bn)).isEqualTo(a.lineOf(an));
    if (an.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = an.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        assertThat(b.lineOf(bn, List.of(e.getKey()), -1))
            .as(e.getKey())
            .isEqualTo(a.lineOf(an, List.of(e.getKey()), -1));
        assertSameLines(a, e.getValue(), b, bn.get(e.getKey()));
      }
    } else if (an.isArray()) {
      List<Object> path = new ArrayList<>(List.of(0));
      for (int i = 0; i < an.size(); i++) {
        path.set(0, i);
        assertThat(b.lineOf(bn, path, -1)).isEqualTo(a.lineOf(an, path, -1));
        assertSameLines(a, an.get(i), b, bn.get(i));
      }
    }
  }
}
