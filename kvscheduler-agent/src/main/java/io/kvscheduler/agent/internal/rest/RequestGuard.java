package io.kvscheduler.agent.internal.rest;

import io.javalin.http.Context;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a browser could send on behalf of another site, refused before anything is read: a request
 * for another host name (a name of the attacker's made to resolve to the agent, "DNS rebinding"), a
 * change sent from a page of another origin, and a change whose body is not YAML or JSON (what an
 * HTML form can send without the page's own script).
 *
 * <p>Host names accepted without a token: listening on a loopback address, {@code localhost},
 * {@code 127.0.0.1}, {@code [::1]} and that address; on another address, that address (and the name
 * given in the listening address); on every interface ({@code 0.0.0.0} or {@code [::]}), {@code
 * localhost} and any IP address literal, as rebinding needs a name; always the names of {@code
 * --rest-allowed-hosts}. The port of the {@code Host} header is not compared, except for an allowed
 * {@code name:port}: a rebinding page changes the name, while tunnels and port forwards change the
 * port.
 */
final class RequestGuard {
  /** Media types a body of a change may have. */
  static final Set<String> BODY_TYPES =
      Set.of(
          "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "application/json");

  /** What the web page's answers allow: nothing but this origin's own files, no framing. */
  static final String CONTENT_SECURITY_POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
          + " connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';"
          + " frame-ancestors 'none'";

  private final Set<String> names = new LinkedHashSet<>();
  private final boolean anyAddress;
  private final List<String> allowed;

  /**
   * @param bind the address listened on
   * @param allowed other names ({@code name} or {@code name:port}, lower case)
   */
  RequestGuard(InetSocketAddress bind, List<String> allowed) {
    this.allowed = List.copyOf(allowed);
    InetAddress a = bind.getAddress();
    anyAddress = a == null || a.isAnyLocalAddress();
    names.add("localhost");
    if (a != null && a.isLoopbackAddress()) {
      names.add("127.0.0.1");
      names.add("[0:0:0:0:0:0:0:1]");
    } else if (!anyAddress) {
      names.remove("localhost");
      names.add(bind.getHostString().toLowerCase(Locale.ROOT));
    }
    if (a != null && !anyAddress) {
      names.add(literal(a.getHostAddress()));
    }
  }

  /** The headers every answer carries. */
  static void secureHeaders(Context ctx) {
    ctx.header("X-Content-Type-Options", "nosniff");
    ctx.header("X-Frame-Options", "DENY");
    ctx.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  }

  /** Why a request without a token for {@code host} (its Host header) is refused, or null. */
  String hostRefusal(String host) {
    if (host == null || host.isBlank()) {
      return "request without a Host header refused: without a token the REST API answers only"
          + " requests for its own addresses";
    }
    String h = host.strip().toLowerCase(Locale.ROOT);
    String name = name(h);
    if (name != null) {
      if (names.contains(normalized(name)) || anyAddress && isAddressLiteral(name)) {
        return null;
      }
      for (String a : allowed) {
        String allowedName = name(a);
        boolean withPort = !a.equals(allowedName);
        if (withPort ? a.equals(h) : name.equals(allowedName)) {
          return null;
        }
      }
    }
    return "request for host '"
        + host.strip()
        + "' refused: without a token the REST API answers only requests for the addresses it"
        + " listens on ("
        + (anyAddress ? "any IP address, " : "")
        + String.join(", ", names)
        + (allowed.isEmpty() ? "" : ", " + String.join(", ", allowed))
        + "); to reach it by this name add it to --rest-allowed-hosts (rest-allowed-hosts in the"
        + " settings file), or set a token";
  }

  /**
   * 403 when a browser says the change comes from another site: {@code Sec-Fetch-Site: cross-site},
   * or an {@code Origin} whose host and port are not the request's {@code Host}. Tools send neither
   * header.
   */
  Response crossSiteRefusal(Context ctx) {
    String what = ctx.method() + " " + ctx.path();
    String site = ctx.header("Sec-Fetch-Site");
    String origin = ctx.header("Origin");
    if (origin == null) {
      return fetchMetadataRefusal(site, what);
    }
    String o = origin.strip().toLowerCase(Locale.ROOT);
    String host = ctx.header("Host");
    int scheme = o.indexOf("://");
    boolean same =
        host != null
            && scheme > 0
            && (o.startsWith("http://") || o.startsWith("https://"))
            && o.substring(scheme + 3).equals(host.strip().toLowerCase(Locale.ROOT));
    if (same) {
      return fetchMetadataRefusal(site, what);
    }
    return Response.error(
        403,
        what
            + " is refused: its Origin '"
            + origin.strip()
            + "' is not this agent's ("
            + (host == null ? "no Host" : host.strip())
            + "); changes are accepted from the agent's own page and from tools that send no"
            + " Origin");
  }

  /** 403 when {@code Sec-Fetch-Site} says {@code cross-site}, else null. */
  private static Response fetchMetadataRefusal(String site, String what) {
    if (site != null && site.strip().equalsIgnoreCase("cross-site")) {
      return Response.error(
          403,
          what
              + " is refused: the browser says it comes from another site (Sec-Fetch-Site:"
              + " cross-site); changes are accepted from the agent's own page and from tools");
    }
    return null;
  }

  /**
   * 415 when a change says its body is of another type than YAML or JSON, or has a body (a PUT
   * always has one) and says no type; null when the type is accepted.
   */
  static Response contentTypeRefusal(Context ctx, boolean readsBody) {
    String type = ctx.header("Content-Type");
    String accepted =
        "send Content-Type application/yaml (or application/x-yaml, text/yaml, text/x-yaml) or"
            + " application/json";
    String what = ctx.method() + " " + ctx.path();
    if (type == null) {
      boolean body =
          readsBody
              || ctx.req().getContentLengthLong() > 0
              || ctx.header("Transfer-Encoding") != null;
      return body ? Response.error(415, what + " needs a Content-Type header: " + accepted) : null;
    }
    int semi = type.indexOf(';');
    String media = (semi < 0 ? type : type.substring(0, semi)).strip().toLowerCase(Locale.ROOT);
    if (BODY_TYPES.contains(media)) {
      return null;
    }
    return Response.error(
        415, what + ": Content-Type '" + type.strip() + "' is not accepted; " + accepted);
  }

  /** The name part of {@code host[:port]} (an IPv6 literal keeps its brackets), or null. */
  private static String name(String hostAndPort) {
    String name;
    String port;
    if (hostAndPort.startsWith("[")) {
      int end = hostAndPort.indexOf(']');
      if (end < 0) {
        return null;
      }
      name = hostAndPort.substring(0, end + 1);
      String rest = hostAndPort.substring(end + 1);
      if (!rest.isEmpty() && !rest.startsWith(":")) {
        return null;
      }
      port = rest.isEmpty() ? "" : rest.substring(1);
    } else {
      int colon = hostAndPort.indexOf(':');
      if (colon >= 0 && colon != hostAndPort.lastIndexOf(':')) {
        return null; // an IPv6 address without brackets is not a Host
      }
      name = colon < 0 ? hostAndPort : hostAndPort.substring(0, colon);
      port = colon < 0 ? "" : hostAndPort.substring(colon + 1);
    }
    if (!port.chars().allMatch(Character::isDigit)) {
      return null;
    }
    return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
  }

  /** {@code name}, with an IPv6 literal written in the full form Java prints. */
  private static String normalized(String name) {
    if (name.startsWith("[") && isAddressLiteral(name)) {
      try {
        // a literal: parsed, never looked up
        return literal(
            InetAddress.getByName(name.substring(1, name.length() - 1)).getHostAddress());
      } catch (UnknownHostException e) {
        return name;
      }
    }
    return name;
  }

  /** An IPv4 address in dotted form, or an IPv6 address in brackets. */
  static boolean isAddressLiteral(String name) {
    return name.matches("(\\d{1,3})(\\.\\d{1,3}){3}")
        || name.matches("\\[[0-9a-f:]*:[0-9a-f:.]*(%[0-9a-z]+)?\\]");
  }

  private static String literal(String hostAddress) {
    return hostAddress.contains(":") ? "[" + hostAddress + "]" : hostAddress;
  }
}
