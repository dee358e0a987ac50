package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/behaviors-coverage.md honest: every catalogue entry B1..B178 has a row that names
 * tests or a note, and every test it names exists with a display name starting with that entry.
 */
class CatalogueCoverageTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  @DisplayName("every catalogue entry B1..B178 is covered by an existing test or a written note")
  void everyEntryIsAccountedFor() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("docs/behaviors-coverage.md"));
    List<String> problems = new ArrayList<>();
    for (int n = 1; n <= 178; n++) {
      String prefix = "| B" + n + " |";
      String row = lines.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
      if (row == null) {
        problems.add("B" + n + ": no row");
        continue;
      }
      if (row.contains("**not covered**")) {
        problems.add("B" + n + ": not covered");
      }
      Matcher m = Pattern.compile("(\\w+) › (\\w+)").matcher(row);
      while (m.find()) {
        String source = testSource(m.group(1));
        if (source == null) {
          problems.add("B" + n + ": test class " + m.group(1) + " does not exist");
        } else if (!source.contains("void " + m.group(2) + "(")) {
          problems.add("B" + n + ": test " + m.group(1) + "." + m.group(2) + " does not exist");
        }
      }
    }
    assertThat(problems).as("run bin/coverage-doc after changing tests").isEmpty();
  }

  private static String testSource(String className) throws IOException {
    for (String base :
        List.of(
            "kvscheduler-core/src/test/java",
            "kvscheduler-testkit/src/test/java",
            "plugins/mock/src/test/java")) {
      try (Stream<Path> files = Files.walk(ROOT.resolve(base))) {
        Path p =
            files
                .filter(f -> f.getFileName().toString().equals(className + ".java"))
                .findFirst()
                .orElse(null);
        if (p != null) {
          return Files.readString(p);
        }
      }
    }
    return null;
  }
}
