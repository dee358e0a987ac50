package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the lines of {@code ip -o monitor link address} (one event per line) as {@link LinkEvent}s.
 * A link line is {@code [Deleted ]INDEX: NAME[@PEER]: <FLAGS> ...}; an address line is {@code
 * [Deleted ]INDEX: LABEL inet|inet6 ADDRESS[/LEN] [peer PEER/LEN] ... scope SCOPE ...}. The name
 * printed in an address line is what {@code ip} remembered of the link and may be out of date; only
 * the index is used. A line of another shape becomes {@link LinkEvent.Lost}, so that whoever
 * follows the links reads them all again rather than miss a change.
 */
final class MonitorLines {
  private static final Pattern INDEX = Pattern.compile("(\\d+):");
  private static final Pattern BANNER = Pattern.compile("^\\[[A-Z]+\\]\\s*");

  private MonitorLines() {}

  /** The event of {@code line}, or empty for a line that changes nothing the plugin follows. */
  static Optional<LinkEvent> parse(String line) {
    String s = BANNER.matcher(line.strip()).replaceFirst("");
    boolean deleted = s.startsWith("Deleted ");
    if (deleted) {
      s = s.substring("Deleted ".length()).strip();
    }
    String[] w = s.split("\\s+");
    Matcher index = w.length >= 3 ? INDEX.matcher(w[0]) : null;
    if (index == null || !index.matches()) {
      return Optional.of(new LinkEvent.Lost("unexpected line from ip monitor: " + line, false));
    }
    int ifindex;
    try {
      ifindex = Integer.parseInt(index.group(1));
    } catch (NumberFormatException e) {
      return Optional.of(new LinkEvent.Lost("unexpected line from ip monitor: " + line, false));
    }
    if (w[1].endsWith(":") && w[2].startsWith("<")) { // a link
      return Optional.of(
          deleted
              ? new LinkEvent.Removed(ifindex)
              : new LinkEvent.Changed(
                  ifindex, candidateNames(w[1].substring(0, w[1].length() - 1))));
    }
    boolean v6 = w[2].equals("inet6");
    if (!v6 && !w[2].equals("inet") || w.length < 4) {
      return Optional.of(new LinkEvent.Lost("unexpected line from ip monitor: " + line, false));
    }
    String address = w[3];
    String scope = "";
    for (int i = 4; i < w.length - 1; i++) {
      if (w[i].equals("peer") && w[i + 1].contains("/") && !address.contains("/")) {
        address = address + w[i + 1].substring(w[i + 1].indexOf('/'));
      } else if (w[i].equals("scope")) {
        scope = w[i + 1];
      }
    }
    if (!address.contains("/")) {
      address = address + (v6 ? "/128" : "/32");
    }
    if (IpRoute2Calls.kernelsOwn(v6, address, scope)) {
      return Optional.empty();
    }
    return Optional.of(
        deleted
            ? new LinkEvent.AddressRemoved(ifindex, address)
            : new LinkEvent.AddressAdded(ifindex, address));
  }

  /**
   * The names the link of a link line may have: {@code ip} prints {@code NAME@PEER} for a link with
   * a peer or parent, and a name may itself contain {@code @}.
   */
  static List<String> candidateNames(String printed) {
    int at = printed.lastIndexOf('@');
    return at <= 0 ? List.of(printed) : List.of(printed.substring(0, at), printed);
  }
}
