package io.kvscheduler.agent.internal.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.MockModels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The parsers' bounds: linear cost in YAML (the reader's window), and the limits on a string's
 * length, nesting depth and characters, each refused naming the limit and the line.
 */
class ParserLimitsTest {
  private static final int LIMIT = ConfigDocument.MAX_SCALAR_CODE_POINTS;

  @Test
  @DisplayName(
      "the YAML reader moves each code point a bounded number of times, however long"
          + " the token the scanner measures")
  void yamlReaderIsLinear() {
    for (int n : new int[] {10_000, 100_000, 1_000_000}) {
      LinearYamlReader r = new LinearYamlReader("x".repeat(n) + "\n", LIMIT);
      // as SnakeYAML's scanner measures a plain scalar: one code point further at a time
      int length = 0;
      while (r.peek(length) == 'x') {
        length++;
      }
      assertThat(length).isEqualTo(n);
      assertThat(r.prefixForward(length)).hasSize(n);
      assertThat(r.peek()).isEqualTo('\n');
      // SnakeYAML's own window, grown by 1,024 characters a time, moves n²/2,048 of them
      assertThat(r.moved()).as("code points moved for a token of %d", n).isLessThan(2L * n);
    }
  }

  @Test
  @DisplayName("a string of the limit's length is read, in YAML (plain, quoted, block) and JSON")
  void stringAtTheLimitIsRead() throws Exception {
    String s = "x".repeat(LIMIT);
    for (String yaml :
        new String[] {
          "k: " + s + "\n", "k: \"" + s + "\"\n", "k: '" + s + "'\n", "k: |-\n  " + s + "\n"
        }) {
      assertThat(ConfigDocument.parseYaml(yaml).root().get("k").asText()).isEqualTo(s);
    }
    assertThat(ConfigDocument.parseJson("{\"k\": \"" + s + "\"}").root().get("k").asText())
        .isEqualTo(s);
  }

  @Test
  @DisplayName(
      "a YAML token over the limit is refused before it is read whole, naming the line"
          + " and the limit")
  void yamlTokenOverTheLimitIsRefused() {
    // (a token just over the limit may already be in the window: the string's check refuses it)
    String over = "x".repeat(3 * LIMIT);
    for (String yaml :
        new String[] {
          "a: 1\nk: " + over + "\n",
          "a: 1\nk: \"" + over + "\"\n",
          "a: 1\n# " + over + "\n",
          "a: 1\nk: |\n  " + over + "\n"
        }) {
      assertThatThrownBy(() -> ConfigDocument.parseYaml(yaml))
          .isInstanceOf(ConfigDocument.SyntaxException.class)
          .hasMessageStartingWith("too large: more than " + LIMIT + " characters without a break")
          .hasMessageEndingWith("(limit " + LIMIT + ")")
          .satisfies(
              e ->
                  assertThat(((ConfigDocument.SyntaxException) e).line())
                      .isEqualTo(yaml.contains("|") ? 3 : 2));
    }
  }

  @Test
  @DisplayName(
      "a string over the limit made of lines (folded YAML) or in JSON is refused,"
          + " naming the line and the limit")
  void stringOverTheLimitIsRefused() {
    String folded =
        "a: 1\nk: \"" + (" " + "x".repeat(1023) + "\n").repeat(LIMIT / 1024 + 1) + "\"\n";
    assertThatThrownBy(() -> ConfigDocument.parseYaml(folded))
        .hasMessageMatching("too large: a string of \\d+ characters \\(limit " + LIMIT + "\\)")
        .satisfies(e -> assertThat(((ConfigDocument.SyntaxException) e).line()).isEqualTo(2));
    assertThatThrownBy(
            () -> ConfigDocument.parseJson("{\"a\": 1,\n\"k\": \"" + "x".repeat(LIMIT + 1) + "\"}"))
        .hasMessage("too large: a string of " + (LIMIT + 1) + " characters (limit " + LIMIT + ")")
        .satisfies(e -> assertThat(((ConfigDocument.SyntaxException) e).line()).isEqualTo(2));
    assertThatThrownBy(
            () -> ConfigDocument.parseJson("{\"a\": 1,\n\"" + "x".repeat(LIMIT + 1) + "\": 1}"))
        .hasMessage("too large: a key of " + (LIMIT + 1) + " characters (limit " + LIMIT + ")");
  }

  @Test
  @DisplayName("nesting deeper than the limit is refused in YAML and JSON, naming the line")
  void deepNestingIsRefused() throws Exception {
    int max = ConfigDocument.MAX_DEPTH;
    assertThat(ConfigDocument.parseYaml("[".repeat(max) + "]".repeat(max)).root().isArray())
        .isTrue();
    assertThat(ConfigDocument.parseJson("[".repeat(max) + "]".repeat(max)).root().isArray())
        .isTrue();
    String yaml = "a: 1\nk: " + "[".repeat(max) + "]".repeat(max) + "\n";
    assertThatThrownBy(() -> ConfigDocument.parseYaml(yaml))
        .hasMessage(
            "too deeply nested: more than "
                + max
                + " levels of mappings and lists"
                + " (limit "
                + max
                + ")")
        .satisfies(e -> assertThat(((ConfigDocument.SyntaxException) e).line()).isEqualTo(2));
    String json = "{\"a\": 1,\n\"k\": " + "[".repeat(100_000) + "]".repeat(100_000) + "}";
    assertThatThrownBy(() -> ConfigDocument.parseJson(json))
        .hasMessageStartingWith("too deeply nested: more than " + max)
        .satisfies(e -> assertThat(((ConfigDocument.SyntaxException) e).line()).isEqualTo(2));
    String blockYaml = nestedBlockYaml(max + 1);
    assertThatThrownBy(() -> ConfigDocument.parseYaml(blockYaml))
        .hasMessageStartingWith("too deeply nested");
  }

  private static String nestedBlockYaml(int depth) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < depth; i++) {
      b.append("  ".repeat(i)).append("k").append(i).append(":\n");
    }
    return b.append("  ".repeat(depth)).append("v: 1\n").toString();
  }

  @Test
  @DisplayName("a character YAML does not allow is refused naming its code and line")
  void controlCharacterIsRefusedWithItsLine() {
    assertThatThrownBy(() -> ConfigDocument.parseYaml("a: 1\nb: 2\nc: x\u0001y\n"))
        .hasMessage("malformed YAML: character U+0001 is not allowed in YAML")
        .satisfies(e -> assertThat(((ConfigDocument.SyntaxException) e).line()).isEqualTo(3));
    assertThatThrownBy(() -> ConfigDocument.parseYaml("a: 1\nb: \uD800\n"))
        .hasMessage("malformed YAML: character U+D800 is not allowed in YAML")
        .satisfies(e -> assertThat(((ConfigDocument.SyntaxException) e).line()).isEqualTo(2));
  }

  @Test
  @DisplayName(
      "a model's JSON (an etcd value) over a limit is refused as too large, naming the"
          + " key and the limit")
  void modelJsonOverALimitIsTooLarge() {
    ModelRegistry models = new ModelRegistry();
    MockModels.registerAll(models);
    String key = "config/mock/v1/interfaces/tap1";
    assertThatThrownBy(
            () ->
                models.decode(
                    key, "{\"name\": \"tap1\", \"type\": \"" + "x".repeat(LIMIT + 1) + "\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageStartingWith(key + ": too large")
        .hasMessageContaining("exceeds the maximum allowed (" + LIMIT);
    assertThatThrownBy(() -> models.decode(key, "{\"name\": " + "[".repeat(101)))
        .hasMessageStartingWith(key + ": too large")
        .hasMessageContaining("(100");
  }
}
