package io.kvscheduler.agent.internal.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.internal.format.ConfigFormat.ConfigException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.MockModels;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Inputs {@code ParserFuzzTest} found rejected without their place, kept as regressions. */
class ParserFuzzRegressionTest {
  private final ModelRegistry models = new ModelRegistry();

  ParserFuzzRegressionTest() {
    MockModels.registerAll(models);
  }

  @Test
  @DisplayName(
      "a document that is one scalar is rejected naming its line, as a file or a REST"
          + " body, in YAML and JSON")
  void scalarDocumentIsRejectedWithItsLine() throws Exception {
    for (String text :
        new String[] {
          "config/mock", "\n\n9", "Null-''!!<tag:x> x\uD83D\uDE00", "# comment\n\"text\"\n", "true"
        }) {
      ConfigDocument yaml = ConfigDocument.parseYaml(text);
      int line = text.startsWith("\n\n") ? 3 : text.startsWith("#") ? 2 : 1;
      assertThatThrownBy(() -> ConfigFormat.decodeAny(models, yaml))
          .isInstanceOf(ConfigException.class)
          .satisfies(e -> assertThat(((ConfigException) e).line()).as(text).isEqualTo(line));
      assertThatThrownBy(() -> ConfigFormat.decodeYamlConfig(models, yaml))
          .satisfies(e -> assertThat(((ConfigException) e).line()).as(text).isEqualTo(line));
    }
    ConfigDocument json = ConfigDocument.parseJson("\n0");
    assertThatThrownBy(() -> ConfigFormat.decodeAny(models, json))
        .hasMessageContaining("got a number")
        .satisfies(e -> assertThat(((ConfigException) e).line()).isEqualTo(2));
  }
}
