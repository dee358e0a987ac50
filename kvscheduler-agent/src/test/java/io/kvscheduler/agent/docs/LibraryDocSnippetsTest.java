package io.kvscheduler.agent.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.testsupport.DocSnippets;
import io.kvscheduler.testsupport.DocSnippets.Snippet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The library's snippets in the documents ({@code <!-- run by LibraryDocSnippetsTest -->}): the
 * Java example is the body of {@link #readmeExample()}, compiled and run here, and the Maven
 * dependencies name the build's version.
 */
class LibraryDocSnippetsTest {
  private static final String RUNNER = "LibraryDocSnippetsTest";

  /** The southbound of the example: what the descriptors were asked to do. */
  static final class Southbound {
    final List<String> calls = new ArrayList<>();

    void add(Object itf) {
      calls.add("add " + itf);
    }

    void change(Object itf) {
      calls.add("change " + itf);
    }

    void remove(Object itf) {
      calls.add("remove " + itf);
    }

    void addRoute(Object route) {
      calls.add("addRoute " + route);
    }

    void removeRoute(Object route) {
      calls.add("removeRoute " + route);
    }
  }

  private final Southbound southbound = new Southbound();

  /** The README's example, as it is written there (between the markers). */
  private void readmeExample() throws Exception {
    // README:begin
    record Interface(String name, boolean enabled) {}
    record Route(String destination, String outInterface) {}

    KVDescriptor<Interface, Void> interfaces =
        KVDescriptor.builder("interface", Interface.class)
            .nbKeyPrefix("config/interfaces/")
            .createWithoutMetadata((key, itf) -> southbound.add(itf))
            .updateWithoutMetadata((key, before, after) -> southbound.change(after))
            .delete((key, itf, metadata) -> southbound.remove(itf))
            .build();

    KVDescriptor<Route, Void> routes =
        KVDescriptor.builder("route", Route.class)
            .nbKeyPrefix("config/routes/")
            .createWithoutMetadata((key, route) -> southbound.addRoute(route))
            .delete((key, route, metadata) -> southbound.removeRoute(route))
            .dependencies(
                (key, route) ->
                    List.of(
                        Dependency.onKey(
                            "interface-exists", "config/interfaces/" + route.outInterface())))
            .build();

    try (KVScheduler kvs = KVScheduler.builder().build()) {
      kvs.registerDescriptors(interfaces, routes);

      kvs.startNBTransaction()
          .setValue("config/routes/10.0.0.0-24", new Route("10.0.0.0/24", "eth0"))
          .commit(); // the route waits: PENDING
      kvs.valueStatus("config/routes/10.0.0.0-24"); // PENDING, details [interface-exists]

      kvs.startNBTransaction()
          .setValue("config/interfaces/eth0", new Interface("eth0", true))
          .commit(TxnOptions.builder().retryWithDefaults().build());
      // Create interface eth0, then Create route: the route is now CONFIGURED
    }
    // README:end
  }

  private static List<Snippet> snippets(String language) {
    List<Snippet> found =
        DocSnippets.all().stream()
            .filter(s -> s.runBy(RUNNER) && s.language().equals(language))
            .toList();
    assertThat(found).as("```%s blocks noted 'run by %s'", language, RUNNER).isNotEmpty();
    return found;
  }

  /** The text without any white space: formatting may differ, the code may not. */
  private static String code(String text) {
    return text.replaceAll("\\s+", "");
  }

  @Test
  @DisplayName("the README's Java example is this test's code, and it runs as its comments say")
  void javaExampleIsCompiledAndRuns() throws Exception {
    String source =
        Files.readString(
            Path.of("src/test/java", getClass().getName().replace('.', '/') + ".java"));
    Matcher m =
        Pattern.compile("// README:begin\\n(.*?)// README:end", Pattern.DOTALL).matcher(source);
    assertThat(m.find()).as("the markers around the example in this test").isTrue();
    for (Snippet s : snippets("java")) {
      assertThat(code(s.code()))
          .as("%s is the code of %s.readmeExample()", s.where(), RUNNER)
          .isEqualTo(code(m.group(1)));
    }

    readmeExample();

    assertThat(southbound.calls)
        .containsExactly(
            "add Interface[name=eth0, enabled=true]",
            "addRoute Route[destination=10.0.0.0/24, outInterface=eth0]");
  }

  @Test
  @DisplayName("the Maven dependencies in the documents name the build's version")
  void mavenDependenciesNameTheBuildsVersion() throws IOException {
    String pom = Files.readString(DocSnippets.repository().resolve("pom.xml"));
    Matcher parent =
        Pattern.compile("<artifactId>kvscheduler-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(pom);
    assertThat(parent.find()).as("the version in pom.xml").isTrue();
    for (Snippet s : snippets("xml")) {
      Matcher dependency =
          Pattern.compile(
                  "<groupId>io\\.kvscheduler</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*"
                      + "<version>([^<]+)</version>")
              .matcher(s.code());
      int count = 0;
      while (dependency.find()) {
        count++;
        assertThat(dependency.group(2))
            .as("%s: %s", s.where(), dependency.group(1))
            .isEqualTo(parent.group(1));
        assertThat(DocSnippets.repository().resolve(dependency.group(1)))
            .as("%s: the module %s", s.where(), dependency.group(1))
            .isDirectory();
      }
      assertThat(count).as("%s: io.kvscheduler dependencies", s.where()).isPositive();
    }
  }
}
