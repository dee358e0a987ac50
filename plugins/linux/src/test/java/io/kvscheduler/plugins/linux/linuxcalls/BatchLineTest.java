package io.kvscheduler.plugins.linux.linuxcalls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Lines of {@code ip -batch} read back as {@code ip} reads them: either a line is refused, or
 * {@code ip} finds in it exactly the arguments it was made of. {@link IpReads} is written from the
 * rules of iproute2's {@code getcmdline} and {@code makeargs} (lib/utils.c), not from {@link
 * BatchLine}.
 */
class BatchLineTest {

  @Property(tries = 3000)
  void aLineIsRefusedOrReadBackAsItsArguments(@ForAll("hostileArgs") List<String> args) {
    String line;
    try {
      line = BatchLine.of(args);
    } catch (IllegalArgumentException e) {
      assertThat(args.stream().anyMatch(a -> !representable(a)))
          .as("refused %s (%s), yet every argument can be written", show(args), e.getMessage())
          .isTrue();
      return;
    }
    assertThat(args).allMatch(BatchLineTest::representable);
    assertThat(IpReads.firstCommand(sent(line))).as("line %s", show(List.of(line))).contains(args);
  }

  @Property(tries = 1000)
  void anyStringIsRefusedOrReadBackAsItself(@ForAll String arg) {
    aLineIsRefusedOrReadBackAsItsArguments(List.of("link", "set", "dev", "x", "alias", arg));
  }

  @Example
  void quotesOnlyWhereIpWouldSplitOrJoin() {
    assertThat(BatchLine.of("link", "set", "dev", "lo", "alias", "a b"))
        .isEqualTo("link set dev lo alias \"a b\"");
    assertThat(BatchLine.of("alias", "say \"hi\"")).isEqualTo("alias 'say \"hi\"'");
    assertThat(BatchLine.of("alias", "a\\")).isEqualTo("alias \"a\\\"");
    assertThat(BatchLine.of("alias", "")).isEqualTo("alias \"\"");
    assertThat(BatchLine.of("alias", "'x")).isEqualTo("alias \"'x\"");
    assertThat(BatchLine.of("alias", "it's")).isEqualTo("alias it's");
  }

  @Example
  void refusesWhatNoLineCanCarryNamingTheArgument() {
    assertThatThrownBy(() -> BatchLine.of("alias", "lb\tmtu\t1300'\""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("argument 2")
        .hasMessageContaining("\"lb\\tmtu\\t1300'\\\"\"");
    assertThatThrownBy(() -> BatchLine.of("alias", "a#b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'#'");
    assertThatThrownBy(() -> BatchLine.of("alias", "a\nlink del lo"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("line break");
    assertThatThrownBy(() -> BatchLine.of("alias", "a\0b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NUL");
    assertThatThrownBy(() -> BatchLine.of(List.of())).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Whether {@code arg} can be written as one word, from the rules of {@code ip}: no {@code #}, NUL
   * or line break, valid UTF-16, and when it needs quotes (empty, holding a space, tab or CR,
   * beginning with a quote, ending with a backslash) one of the two quote characters unused.
   */
  static boolean representable(String arg) {
    if (arg.contains("#") || arg.contains("\0") || arg.contains("\n")) {
      return false;
    }
    for (int i = 0; i < arg.length(); i++) {
      char c = arg.charAt(i);
      if (Character.isHighSurrogate(c)
          && (i + 1 == arg.length() || !Character.isLowSurrogate(arg.charAt(++i)))) {
        return false;
      }
      if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    boolean needsQuotes =
        arg.isEmpty()
            || arg.chars().anyMatch(c -> c == ' ' || c == '\t' || c == '\r')
            || arg.startsWith("\"")
            || arg.startsWith("'")
            || arg.endsWith("\\");
    return !needsQuotes || !arg.contains("\"") || !arg.contains("'");
  }

  /** The bytes {@code ip} reads for {@code line}: as the sessions write it, then a marker line. */
  static byte[] sent(String line) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (Writer w = new OutputStreamWriter(out, StandardCharsets.UTF_8)) {
      w.write(line + "\nkvs-sync-1\n");
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return out.toByteArray();
  }

  /** How {@code ip -batch} (iproute2 6.1) reads its first command from its input. */
  static final class IpReads {
    private static final String WS = " \t\r\n";
    private static final int MAX_ARGS = 512;

    /** The arguments of the first command of {@code input}, or empty when {@code ip} exits. */
    static Optional<List<String>> firstCommand(byte[] input) {
      List<byte[]> lines = new ArrayList<>();
      int from = 0;
      for (int i = 0; i < input.length; i++) {
        if (input[i] == '\n') {
          lines.add(Arrays.copyOfRange(input, from, i + 1));
          from = i + 1;
        }
      }
      // getcmdline: the line up to a NUL (C strings), cut at '#', joined while it ends in '\'
      int next = 0;
      byte[] line = cut(cString(lines.get(next++)));
      while (endsWithContinuation(line)) {
        if (next == lines.size()) {
          break; // "Missing continuation line": the line as it is
        }
        byte[] more = cut(cString(lines.get(next++)));
        byte[] joined = Arrays.copyOf(line, line.length - 2 + more.length);
        System.arraycopy(more, 0, joined, line.length - 2, more.length);
        line = joined;
      }
      return makeargs(line);
    }

    private static byte[] cString(byte[] b) {
      for (int i = 0; i < b.length; i++) {
        if (b[i] == 0) {
          return Arrays.copyOf(b, i);
        }
      }
      return b;
    }

    private static byte[] cut(byte[] b) {
      for (int i = 0; i < b.length; i++) {
        if (b[i] == '#') {
          return Arrays.copyOf(b, i);
        }
      }
      return b;
    }

    private static boolean endsWithContinuation(byte[] b) {
      for (int i = 0; i + 1 < b.length; i++) {
        if (b[i] == '\\' && b[i + 1] == '\n') {
          return true;
        }
      }
      return false;
    }

    /** makeargs: words split at blanks; a word beginning with a quote runs to the same quote. */
    private static Optional<List<String>> makeargs(byte[] line) {
      List<String> argv = new ArrayList<>();
      int cp = 0;
      while (cp < line.length) {
        while (cp < line.length && WS.indexOf(line[cp]) >= 0) {
          cp++;
        }
        if (cp == line.length) {
          break;
        }
        if (argv.size() >= MAX_ARGS - 1) {
          return Optional.empty(); // "Too many arguments to command"
        }
        int end;
        if (line[cp] == '\'' || line[cp] == '"') {
          byte quote = line[cp++];
          end = cp;
          while (end < line.length && line[end] != quote) {
            end++;
          }
          if (end == line.length) {
            return Optional.empty(); // "Unterminated quoted string"
          }
        } else {
          end = cp;
          while (end < line.length && WS.indexOf(line[end]) < 0) {
            end++;
          }
        }
        argv.add(new String(line, cp, end - cp, StandardCharsets.UTF_8));
        cp = end + 1;
      }
      return Optional.of(argv);
    }
  }

  private static String show(List<String> strings) {
    List<String> out = new ArrayList<>();
    for (String s : strings) {
      StringBuilder sb = new StringBuilder("\"");
      s.codePoints()
          .forEach(
              c ->
                  sb.append(
                      c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c > 0x7e
                          ? String.format("\\u%04x", c)
                          : Character.toString(c)));
      out.add(sb.append('"').toString());
    }
    return out.toString();
  }

  /** Single characters {@code ip} treats specially, and others, mostly the special ones. */
  private static Arbitrary<String> pieces() {
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(
            6,
            Arbitraries.of(
                " ", "\t", "\r", "\n", "\"", "'", "#", "\\", "\\\\", "\0", "\u0001", "\u000b",
                "\u001b", "\u007f", "\u00a0", "\u2028")),
        net.jqwik.api.Tuple.of(
            3, Arbitraries.of("a", "mtu", "1300", "name", "lo", "é", "日本", "\ud83d\ude00")),
        net.jqwik.api.Tuple.of(1, Arbitraries.of("\ud800", "\udc00")),
        net.jqwik.api.Tuple.of(2, Arbitraries.strings().ofMaxLength(4)));
  }

  @Provide
  Arbitrary<List<String>> hostileArgs() {
    Arbitrary<String> arg = pieces().list().ofMaxSize(6).map(l -> String.join("", l));
    Arbitrary<String> word = Arbitraries.of("link", "set", "dev", "alias", "x");
    return Arbitraries.oneOf(arg, word)
        .list()
        .ofMinSize(1)
        .ofMaxSize(6)
        .map(Collections::unmodifiableList);
  }
}
