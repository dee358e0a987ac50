package io.kvscheduler.plugins.mock.util;

/**
 * Syntax checks of IPv4 addresses ({@code 192.0.2.1}) and prefixes ({@code 10.0.0.0/8}) for the
 * validation of the skeleton plugins. Four decimal octets 0-255 without leading zeros; a prefix
 * length 0-32.
 */
public final class Ipv4 {
  private Ipv4() {}

  /** Whether {@code s} is a dotted-quad IPv4 address. */
  public static boolean isAddress(String s) {
    String[] octets = s.split("\\.", -1);
    if (octets.length != 4) {
      return false;
    }
    for (String o : octets) {
      if (!isNumber(o, 255)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code s} is an IPv4 address followed by {@code /} and a prefix length 0-32. */
  public static boolean isPrefix(String s) {
    int slash = s.indexOf('/');
    return slash > 0 && isAddress(s.substring(0, slash)) && isNumber(s.substring(slash + 1), 32);
  }

  private static boolean isNumber(String s, int max) {
    if (s.isEmpty() || s.length() > 3 || (s.length() > 1 && s.charAt(0) == '0')) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        return false;
      }
    }
    return Integer.parseInt(s) <= max;
  }
}
