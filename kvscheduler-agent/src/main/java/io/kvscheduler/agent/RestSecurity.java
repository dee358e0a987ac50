package io.kvscheduler.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

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
 */
public record RestSecurity(
    String token, Path tokenFile, boolean readOnly, Path tlsCert, Path tlsKey) {

  /** No token, read-write, plain HTTP. */
  public static final RestSecurity NONE = new RestSecurity(null, null, false, null, null);

  /**
   * @throws IllegalArgumentException when only one of the certificate and key is given, or the
   *     token is empty
   */
  public RestSecurity {
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
