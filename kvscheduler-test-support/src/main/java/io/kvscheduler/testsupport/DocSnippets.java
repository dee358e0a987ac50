package io.kvscheduler.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fenced code blocks of the repository's Markdown documents, each with the note written right
 * before it, so that tests run the commands and programs the documents show and none can rot.
 *
 * <p>A note is an HTML comment on the line just before the opening fence. Its forms:
 *
 * <ul>
 *   <li>{@code <!-- not run: REASON -->}: no test runs the block, for the reason given (it starts
 *       the whole test suite, installs packages, runs until stopped, ...);
 *   <li>{@code <!-- run by CLASS: ... -->}: the test class {@code CLASS} runs (or compiles) the
 *       block and checks that it found every block naming it;
 *   <li>{@code <!-- output contains: TEXT -->}, {@code <!-- output lacks: TEXT -->}: the block is a
 *       shell snippet whose output must (must not) contain {@code TEXT};
 *   <li>no note: a shell block is run by {@code DocSnippetsIT} against a running agent.
 * </ul>
 */
public final class DocSnippets {
  /** The documents whose blocks are run, relative to the repository. */
  public static final List<String> DOCUMENTS =
      List.of("README.md", "docs/agent.md", "docs/operating.md", "docs/library.md");

  private static final Pattern FENCE = Pattern.compile("^```([\\w-]*)\\s*$");
  private static final Pattern NOTE = Pattern.compile("^<!--\\s*(.*?)\\s*-->\\s*$");

  private DocSnippets() {}

  /**
   * One fenced block.
   *
   * @param document the document, relative to the repository
   * @param line the line of the opening fence (1-based)
   * @param language the fence's language ({@code sh}, {@code python}, ...), empty when none
   * @param code the block's text, each line ending with a newline
   * @param note the comment before the fence, empty when there is none
   */
  public record Snippet(String document, int line, String language, String code, String note) {
    /** Where the block is, as {@code document:line}. */
    public String where() {
      return document + ":" + line;
    }

    /** True when the note excuses the block from being run ({@code not run: REASON}). */
    public boolean notRun() {
      return note.startsWith("not run:");
    }

    /** The reason a {@code not run} note gives (empty when none is given). */
    public String reasonNotRun() {
      return notRun() ? note.substring("not run:".length()).strip() : "";
    }

    /** True when the note names {@code testClass} as the test running the block. */
    public boolean runBy(String testClass) {
      return note.equals("run by " + testClass) || note.startsWith("run by " + testClass + ":");
    }

    /** The test class a {@code run by} note names, empty when the note names none. */
    public String runner() {
      if (!note.startsWith("run by ")) {
        return "";
      }
      String rest = note.substring("run by ".length());
      int end = rest.indexOf(':');
      return (end < 0 ? rest : rest.substring(0, end)).strip();
    }

    /** What the output must contain ({@code output contains: TEXT}), empty when nothing. */
    public String expectedOutput() {
      return after("output contains:");
    }

    /** What the output must not contain ({@code output lacks: TEXT}), empty when nothing. */
    public String unwantedOutput() {
      return after("output lacks:");
    }

    private String after(String prefix) {
      return note.startsWith(prefix) ? note.substring(prefix.length()).strip() : "";
    }
  }

  /** The repository: the first directory up from the working directory holding {@code mvnw}. */
  public static Path repository() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("mvnw"))
          && Files.isRegularFile(dir.resolve("README.md"))) {
        return dir;
      }
    }
    throw new IllegalStateException(
        "no repository (a directory with mvnw and README.md) above "
            + Path.of("").toAbsolutePath());
  }

  /** Every block of the {@link #DOCUMENTS}, in document order. */
  public static List<Snippet> all() {
    List<Snippet> out = new ArrayList<>();
    for (String document : DOCUMENTS) {
      out.addAll(of(document));
    }
    return out;
  }

  /** Every block of {@code document} (relative to the repository). */
  public static List<Snippet> of(String document) {
    List<String> lines;
    try {
      lines = Files.readAllLines(repository().resolve(document));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + document, e);
    }
    List<Snippet> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher open = FENCE.matcher(lines.get(i));
      if (!open.matches()) {
        continue;
      }
      Matcher note = i > 0 ? NOTE.matcher(lines.get(i - 1)) : null;
      StringBuilder code = new StringBuilder();
      int end = i + 1;
      while (end < lines.size() && !lines.get(end).strip().equals("```")) {
        code.append(lines.get(end)).append('\n');
        end++;
      }
      if (end == lines.size()) {
        throw new IllegalStateException(document + ":" + (i + 1) + ": a code block never closed");
      }
      out.add(
          new Snippet(
              document,
              i + 1,
              open.group(1),
              code.toString(),
              note != null && note.matches() ? note.group(1) : ""));
      i = end;
    }
    return out;
  }
}
