package io.kvscheduler.plugins.mock.scenario;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Terminal output of the scenarios: boxes and colours. Colours only when the output is a terminal
 * and NO_COLOR is not set (a file or a pipe gets plain text).
 */
final class Console {
  private static final boolean COLOR =
      System.getenv("NO_COLOR") == null && System.console() != null;

  private Console() {}

  static String color(String code, String text) {
    return COLOR ? "\u001b[" + code + "m" + text + "\u001b[0m" : text;
  }

  static String blue(String text) {
    return color("34", text);
  }

  static String green(String text) {
    return color("32", text);
  }

  static String yellow(String text) {
    return color("33", text);
  }

  static String magenta(String text) {
    return color("35", text);
  }

  static String red(String text) {
    return color("31", text);
  }

  /** An 80-column box of {@code ~} with the lines inside. */
  static void box(PrintStream out, String... lines) {
    String rule = "~".repeat(80);
    out.println(blue(rule));
    for (String line : lines) {
      for (String part : wrap(line, 76)) {
        out.println(blue(String.format("| %-76s |", part)));
      }
    }
    out.println(blue(rule));
  }

  private static List<String> wrap(String line, int width) {
    List<String> parts = new ArrayList<>();
    String rest = line;
    while (rest.length() > width) {
      int cut = rest.lastIndexOf(' ', width);
      if (cut <= 0) {
        cut = width;
      }
      parts.add(rest.substring(0, cut));
      rest = rest.substring(cut).strip();
    }
    parts.add(rest);
    return parts;
  }
}
