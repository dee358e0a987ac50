package io.kvscheduler.plugins.mock.util;

/**
 * Validation of hardware (MAC) addresses in the notations the reference accepts: colon- or
 * hyphen-separated byte pairs ({@code 01:23:45:67:89:ab}, {@code 01-23-45-67-89-ab}) and
 * dot-separated groups of four hex digits ({@code 0123.4567.89ab}), for 6-byte (EUI-48), 8-byte
 * (EUI-64) and 20-byte (InfiniBand) addresses, hex digits in either case.
 */
public final class MacAddress {
  private MacAddress() {}

  /** Whether {@code address} is a valid hardware address. */
  public static boolean isValid(String address) {
    return parsedLength(address) > 0;
  }

  /**
   * Checks {@code address}.
   *
   * @throws IllegalArgumentException with the message {@code address <address>: invalid MAC
   *     address} (the reference's wording) when it is not a valid hardware address
   */
  public static void check(String address) {
    if (!isValid(address)) {
      throw new IllegalArgumentException("address " + address + ": invalid MAC address");
    }
  }

  /** Number of bytes of a valid address, 0 when invalid. */
  private static int parsedLength(String s) {
    if (s == null || s.length() < 14) {
      return 0;
    }
    char sep = s.charAt(2);
    if (sep == ':' || sep == '-') {
      if ((s.length() + 1) % 3 != 0) {
        return 0;
      }
      int bytes = (s.length() + 1) / 3;
      if (!allowedLength(bytes)) {
        return 0;
      }
      for (int i = 0; i < bytes; i++) {
        int at = i * 3;
        if (!isHex(s.charAt(at)) || !isHex(s.charAt(at + 1))) {
          return 0;
        }
        if (i < bytes - 1 && s.charAt(at + 2) != sep) {
          return 0;
        }
      }
      return bytes;
    }
    if (s.charAt(4) == '.') {
      if ((s.length() + 1) % 5 != 0) {
        return 0;
      }
      int groups = (s.length() + 1) / 5;
      int bytes = groups * 2;
      if (!allowedLength(bytes)) {
        return 0;
      }
      for (int g = 0; g < groups; g++) {
        int at = g * 5;
        for (int d = 0; d < 4; d++) {
          if (!isHex(s.charAt(at + d))) {
            return 0;
          }
        }
        if (g < groups - 1 && s.charAt(at + 4) != '.') {
          return 0;
        }
      }
      return bytes;
    }
    return 0;
  }

  private static boolean allowedLength(int bytes) {
    return bytes == 6 || bytes == 8 || bytes == 20;
  }

  private static boolean isHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
}
