package io.kvscheduler.agent.internal.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class GraphExportTest {
  @Test
  @DisplayName(
      "without Graphviz, rendering fails with a message naming the Debian package and"
          + " the formats that need none")
  void noGraphviz() {
    assertThatThrownBy(() -> GraphExport.render("digraph g {}", "svg", "/nonexistent"))
        .isInstanceOf(GraphExport.NoGraphviz.class)
        .hasMessageContaining("package 'graphviz'")
        .hasMessageContaining("format=raw")
        .hasMessageContaining("format=json");
  }

  @Test
  void dotQuotesKeysAndLabels() {
    assertThat(GraphExport.quote("a\"b\\c\nd")).isEqualTo("\"a\\\"b\\\\c\\nd\"");
  }
}
