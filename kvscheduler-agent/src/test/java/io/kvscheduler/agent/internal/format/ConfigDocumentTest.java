package io.kvscheduler.agent.internal.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Parsing of config documents: the size limit, a byte order mark. */
class ConfigDocumentTest {

  /** A keyed document of {@code n} interfaces, about 100 code points each. */
  static String interfaces(int n) {
    StringBuilder b = new StringBuilder(n * 110);
    for (int i = 0; i < n; i++) {
      b.append("config/mock/v1/interfaces/tap")
          .append(i)
          .append(":\n  name: tap")
          .append(i)
          .append("\n  type: TAP\n  enabled: true\n  phys_address: \"aa:bb:cc:00:00:01\"\n");
    }
    return b.toString();
  }

  @Test
  @DisplayName("a YAML document larger than SnakeYAML's default limit (3 Mi code points) is read")
  void yamlLargerThanSnakeYamlsDefaultLimitIsRead() throws Exception {
    String text = interfaces(50_000);
    assertThat(text.length()).isGreaterThan(3 * 1024 * 1024);
    ConfigDocument doc = ConfigDocument.parseYaml(text);
    assertThat(doc.root().size()).isEqualTo(50_000);
    assertThat(doc.lineOf(doc.root().get("config/mock/v1/interfaces/tap49999"))).isEqualTo(249_996);
  }

  @Test
  @DisplayName(
      "a document over the limit is called too large, with its size and the limit,"
          + " not malformed")
  void documentOverTheLimitIsTooLargeNotMalformed() throws Exception {
    String text = "k: \"" + "\u00e9".repeat(1000) + "\"\n";
    assertThatThrownBy(() -> ConfigDocument.parseYaml(text, 1000))
        .isInstanceOf(ConfigDocument.SyntaxException.class)
        .hasMessage("too large (1006 code points, limit 1000)");
    // code points, not UTF-16 units: a character outside the BMP counts once
    String astral = "k: " + "\uD83D\uDE00".repeat(1000) + "\n";
    assertThatThrownBy(() -> ConfigDocument.parseYaml(astral, 1000))
        .hasMessage("too large (1004 code points, limit 1000)");
    // 1,204 UTF-16 units, 604 code points
    assertThat(
            ConfigDocument.parseYaml("k: " + "\uD83D\uDE00".repeat(600) + "\n", 1000)
                .root()
                .get("k")
                .asText())
        .hasSize(1200);
  }

  @Test
  @DisplayName("a leading UTF-8 byte order mark is skipped in JSON as in YAML, lines unchanged")
  void leadingByteOrderMarkIsSkippedInJsonAndYaml() throws Exception {
    String json = "\uFEFF{\n  \"k\": {\"v\": 1}\n}\n";
    ConfigDocument doc = ConfigDocument.parseJson(json);
    assertThat(doc.root().get("k").get("v").asInt()).isEqualTo(1);
    assertThat(doc.lineOf(doc.root().get("k"))).isEqualTo(2);
    assertThat(ConfigDocument.parseYaml("\uFEFFk:\n  v: 1\n").root().get("k").get("v").asInt())
        .isEqualTo(1);
    // only a leading one: elsewhere it is a character like any other
    assertThatThrownBy(() -> ConfigDocument.parseJson("{\"k\": \uFEFF1}"))
        .hasMessageContaining("malformed JSON");
  }

  @Test
  @DisplayName(
      "the limit is 256 Mi code points, and a JSON document over a limit is too large,"
          + " not malformed, as a YAML one is")
  void theLimitIsNamed() throws Exception {
    assertThat(ConfigDocument.MAX_CODE_POINTS).isEqualTo(256 * 1024 * 1024);
    String json = "{\"k\": \"" + "\u00e9".repeat(1000) + "\"}";
    assertThatThrownBy(() -> ConfigDocument.parseJson(json, 1000))
        .isInstanceOf(ConfigDocument.SyntaxException.class)
        .hasMessage("too large (1009 code points, limit 1000)");
    assertThat(ConfigDocument.parseJson(json, 2000).root().get("k").asText()).hasSize(1000);
  }
}
