package io.kvscheduler.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * How the REST API protects itself, besides listening on loopback by default.
 *
 * @param token the bearer token every request must carry ({@code Authorization: Bearer <token>}),
 *     or null for none; taken from {@code KVS_REST_TOKEN}
 * @param tokenFile a file holding the bearer token (its first line), or null; read at start
 * @param readOnly refuse every request that changes something ({@code PUT /configuration}, {@code
 *     POST /scheduler/downstream-resync}) with 403
 * @param tlsCert PEM certificate (chain) of the server, or null for plain HTTP
 * @param tlsKey PEM private key (PKCS#8, unencrypted) of the certificate, or null
 * @param allowedHosts names (or {@code name:port}) accepted in the {@code Host} header of a request
 *     without a token, besides the addresses the API listens on ({@code --rest-allowed-hosts});
 *     stored in lower case
 */
public record RestSecurity(
    String token,
    Path tokenFile,
    boolean readOnly,
    Path tlsCert,
    Path tlsKey,
    List<String> allowedHosts) {

  /** No token, read-write, plain HTTP, no other host names. */
  public static final RestSecurity NONE = new RestSecurity(null, null, false, null, null);

  /**
   * @throws IllegalArgumentException when only one of the certificate and key is given, the token
   *     is empty, or an allowed host is empty or holds a character a host name cannot have
   */
  public RestSecurity {
    allowedHosts =
        allowedHosts.stream().map(h -> h.strip().toLowerCase(Locale.ROOT)).distinct().toList();
    for (String h : allowedHosts) {
      if (h.isEmpty() || !h.matches("[a-z0-9._\\-\\[\\]:]+")) {
        throw new IllegalArgumentException(
            "--rest-allowed-hosts: '" + h + "' is not a host name, an address or name:port");
      }
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new IllegalArgumentException(
          "TLS of the REST API needs both --rest-tls-cert and"
              + " --rest-tls-key (got only "
              + (tlsCert != null ? "the certificate" : "the key")
              + ")");
    }
    if (token != null && token.isBlank()) {
      throw new IllegalArgumentException("the REST bearer token is empty");
    }
  }

  /** Security settings without other allowed host names. */
  public RestSecurity(String token, Path tokenFile, boolean readOnly, Path tlsCert, Path tlsKey) {
    this(token, tokenFile, readOnly, tlsCert, tlsKey, List.of());
  }

  /** These settings with {@code hosts} as the allowed host names. */
  public RestSecurity withAllowedHosts(List<String> hosts) {
    return new RestSecurity(token, tokenFile, readOnly, tlsCert, tlsKey, hosts);
  }

  /** Whether TLS is configured. */
  public boolean tlsEnabled() {
    return tlsCert != null;
  }

  /**
   * The bearer token as bytes: the token file's first line when a file is given, else {@link
   * #token}; null when neither.
   *
   * @throws IOException when the file cannot be read or holds no token
   */
  public byte[] loadToken() throws IOException {
    String t = token;
    if (tokenFile != null) {
      String text;
      try {
        text = Files.readString(tokenFile, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new IOException(
            "REST token file " + tokenFile + ": cannot read it (" + e.getMessage() + ")", e);
      }
      t = text.lines().findFirst().orElse("").strip();
      if (t.isEmpty()) {
        throw new IOException("REST token file " + tokenFile + " holds no token");
      }
    }
    return t == null ? null : t.getBytes(StandardCharsets.UTF_8);
  }
}
