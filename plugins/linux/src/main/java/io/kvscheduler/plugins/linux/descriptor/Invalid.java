package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.plugins.linux.linuxcalls.BatchLine;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Collects every problem of a value, then rejects it once naming all fields; and the rules for the
 * fields that reach {@code ip} commands: link names, namespace names and free text (aliases).
 */
final class Invalid {
  private final List<String> reasons = new ArrayList<>();
  private final Set<String> fields = new LinkedHashSet<>();

  /** Records a problem with {@code fields}. */
  Invalid add(String reason, String... fieldNames) {
    reasons.add(reason);
    fields.addAll(List.of(fieldNames));
    return this;
  }

  /** Throws if a problem was recorded. */
  void throwIfAny() {
    if (!reasons.isEmpty()) {
      throw new InvalidValueException(String.join("; ", reasons), List.copyOf(fields));
    }
  }

  private static final Pattern MAC = Pattern.compile("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}");

  /** Whether {@code s} is a MAC address ({@code 02:00:00:00:00:01}). */
  static boolean isMac(String s) {
    return MAC.matcher(s).matches();
  }

  /**
   * {@code value} as a message shows it: between single quotes, at most about 60 characters,
   * control characters escaped ({@link BatchLine#shown(String, char)}).
   */
  static String quote(String value) {
    return BatchLine.shown(value, '\'');
  }

  /** The most bytes of a link name (the kernel's IFNAMSIZ less its NUL). */
  static final int LINK_NAME_BYTES = 15;

  /** The most bytes of a link's alias (the kernel's IFALIASZ less its NUL). */
  static final int ALIAS_BYTES = 255;

  /** The most bytes of a file name (NAME_MAX): a named namespace is a file of /run/netns. */
  static final int FILE_NAME_BYTES = 255;

  static int utf8Length(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /**
   * Why the kernel would not take {@code name} as a link's name (or would read it as something
   * else), or why it cannot reach {@code ip}; empty when it is a valid name.
   */
  static Optional<String> linkNameProblem(String name) {
    if (name.isEmpty()) {
      return Optional.of("it is empty");
    }
    int bytes = utf8Length(name);
    if (bytes > LINK_NAME_BYTES) {
      return Optional.of(
          "it is " + bytes + " bytes long in UTF-8, the kernel takes at most " + LINK_NAME_BYTES);
    }
    if (name.equals(".") || name.equals("..")) {
      return Optional.of("the kernel refuses '.' and '..'");
    }
    Optional<String> control = controlProblem(name);
    if (control.isPresent()) {
      return control;
    }
    if (name.indexOf('/') >= 0 || name.indexOf(':') >= 0) {
      return Optional.of("the kernel refuses '/' and ':' in link names");
    }
    if (name.codePoints().anyMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c))) {
      return Optional.of("the kernel refuses whitespace in link names");
    }
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      if ((b & 0xff) == 0xa0) {
        return Optional.of(
            "its UTF-8 holds the byte 0xA0, which the kernel takes for a space (as in 'à')");
      }
    }
    if (name.indexOf('%') >= 0) {
      return Optional.of("the kernel reads '%' as a pattern for a free number ('x%d' makes x0)");
    }
    return batchProblem(name);
  }

  /** Why {@code ns} cannot name a namespace (a file of /run/netns), or empty when it can. */
  static Optional<String> namespaceProblem(String ns) {
    if (ns.isEmpty()) {
      return Optional.of("it is empty");
    }
    if (ns.equals(".") || ns.equals("..") || ns.indexOf('/') >= 0) {
      return Optional.of("it must be a file name in /run/netns: not '.' or '..', no '/'");
    }
    if (ns.startsWith("-")) {
      return Optional.of("ip would read a leading '-' as an option");
    }
    int bytes = utf8Length(ns);
    if (bytes > FILE_NAME_BYTES) {
      return Optional.of(
          "it is " + bytes + " bytes long in UTF-8, a file name takes at most " + FILE_NAME_BYTES);
    }
    Optional<String> control = controlProblem(ns);
    return control.isPresent() ? control : batchProblem(ns);
  }

  /** Why a VRF device cannot own the routing table {@code t} (unset or the kernel's), or empty. */
  static Optional<String> vrfTableProblem(int t) {
    if (t == 0 || t == 253 || t == 254 || t == 255) {
      return Optional.of(
          "routing_table "
              + Integer.toUnsignedString(t)
              + " is not a table of its own (0 unset, 253 default, 254 main, 255 local)");
    }
    return Optional.empty();
  }

  /**
   * Why {@code text}, part of a link's alias, cannot be: a control character or a character no
   * {@code ip -batch} line carries ({@link BatchLine#problem}); the alias as a whole is checked
   * apart ({@link #aliasProblem}).
   */
  static Optional<String> textProblem(String text) {
    Optional<String> control = controlProblem(text);
    if (control.isPresent()) {
      return control;
    }
    // what no quoting helps (NUL and line breaks are control characters)
    if (text.indexOf('#') >= 0) {
      return Optional.of("it holds '#', where ip cuts its command line (a comment)");
    }
    if (!StandardCharsets.UTF_8.newEncoder().canEncode(text)) {
      return Optional.of("it is not valid Unicode (a lone surrogate)");
    }
    return Optional.empty();
  }

  /** Why {@code alias} cannot be a link's alias, or empty when it can. */
  static Optional<String> aliasProblem(String alias) {
    int bytes = utf8Length(alias);
    if (bytes > ALIAS_BYTES) {
      return Optional.of(
          "the link's alias "
              + quote(alias)
              + " would be "
              + bytes
              + " bytes long in UTF-8, over the kernel's limit of "
              + ALIAS_BYTES
              + " bytes (IFALIASZ)");
    }
    return BatchLine.problem(alias)
        .map(
            p ->
                "the link's alias "
                    + quote(alias)
                    + " cannot be written in an ip -batch line: "
                    + p);
  }

  /**
   * Whether {@code s} holds a control character. A loop rather than a stream: it runs for every
   * iptables rule, mostly before the JIT has compiled anything (W11).
   */
  static boolean hasControl(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isISOControl(s.charAt(i))) { // all of them are single chars
        return true;
      }
    }
    return false;
  }

  private static Optional<String> controlProblem(String s) {
    return hasControl(s) ? Optional.of("it holds a control character") : Optional.empty();
  }

  private static Optional<String> batchProblem(String s) {
    return BatchLine.problem(s).map(p -> "it cannot be written in an ip -batch line: " + p);
  }
}
