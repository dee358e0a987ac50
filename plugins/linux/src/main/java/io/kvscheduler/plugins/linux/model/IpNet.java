package io.kvscheduler.plugins.linux.model;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An IP address with a prefix length, parsed without name lookups, written in canonical form (IPv6
 * compressed, lower case, as Go prints it).
 *
 * @param address the address bytes (4 or 16)
 * @param prefix the prefix length
 */
public record IpNet(byte[] address, int prefix) {
  private static final Pattern V4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern V6 = Pattern.compile("[0-9A-Fa-f:.]+");

  /** Whether this is an IPv6 address. */
  public boolean v6() {
    return address.length == 16;
  }

  /** Parses an address without prefix ({@code 10.0.0.1}, {@code fe80::1}). */
  public static Optional<byte[]> parseAddress(String s) {
    if (s == null || s.isEmpty()) {
      return Optional.empty();
    }
    boolean v4 = V4.matcher(s).matches();
    if (!v4 && !(s.contains(":") && V6.matcher(s).matches())) {
      return Optional.empty();
    }
    if (v4) {
      for (String part : s.split("\\.")) {
        if (Integer.parseInt(part) > 255) {
          return Optional.empty();
        }
      }
    }
    try {
      return Optional.of(InetAddress.getByName(s).getAddress()); // a literal: no lookup
    } catch (UnknownHostException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** Parses {@code address/prefix}. */
  public static Optional<IpNet> parse(String s) {
    if (s == null) {
      return Optional.empty();
    }
    int slash = s.indexOf('/');
    if (slash < 0) {
      return Optional.empty();
    }
    Optional<byte[]> a = parseAddress(s.substring(0, slash));
    if (a.isEmpty() || !s.substring(slash + 1).matches("\\d{1,3}")) {
      return Optional.empty();
    }
    int p = Integer.parseInt(s.substring(slash + 1));
    if (p > a.get().length * 8) {
      return Optional.empty();
    }
    return Optional.of(new IpNet(a.get(), p));
  }

  /** The network address (host bits cleared) with the same prefix. */
  public IpNet network() {
    byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      int keep = Math.max(0, Math.min(8, prefix - i * 8));
      out[i] = (byte) (out[i] & (0xff << (8 - keep)));
    }
    return new IpNet(out, prefix);
  }

  /** Whether {@code ip} (same family) lies in this network. */
  public boolean contains(byte[] ip) {
    if (ip.length != address.length) {
      return false;
    }
    return new IpNet(ip, prefix).network().equals(network());
  }

  /** The address alone, canonical. */
  public String addressText() {
    return text(address);
  }

  /** Canonical text of an address. */
  public static String text(byte[] a) {
    if (a.length == 4) {
      return (a[0] & 0xff) + "." + (a[1] & 0xff) + "." + (a[2] & 0xff) + "." + (a[3] & 0xff);
    }
    int[] g = new int[8];
    for (int i = 0; i < 8; i++) {
      g[i] = ((a[2 * i] & 0xff) << 8) | (a[2 * i + 1] & 0xff);
    }
    int bestAt = -1;
    int bestLen = 1;
    for (int i = 0; i < 8; ) {
      int j = i;
      while (j < 8 && g[j] == 0) {
        j++;
      }
      if (j - i > bestLen) {
        bestAt = i;
        bestLen = j - i;
      }
      i = j == i ? i + 1 : j;
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestAt) {
        sb.append("::");
        i += bestLen - 1;
        continue;
      }
      if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
        sb.append(':');
      }
      sb.append(Integer.toHexString(g[i]));
    }
    return sb.toString();
  }

  /** Whether two address texts name the same address. */
  public static boolean sameAddress(String x, String y) {
    Optional<byte[]> a = parseAddress(x);
    Optional<byte[]> b = parseAddress(y);
    return a.isPresent() && b.isPresent() && Arrays.equals(a.get(), b.get());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IpNet n && n.prefix == prefix && Arrays.equals(n.address, address);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(address) * 31 + prefix;
  }

  @Override
  public String toString() {
    return text(address) + "/" + prefix;
  }
}
