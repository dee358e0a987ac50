package io.kvscheduler.agent.internal.rest;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/** Jetty's TLS settings from a PEM certificate chain and a PEM (PKCS#8) private key. */
final class PemTls {
  private PemTls() {}

  private static final Pattern KEY =
      Pattern.compile("-----BEGIN ([A-Z ]*)PRIVATE KEY-----([^-]+)-----END \\1PRIVATE KEY-----");

  /**
   * The server side of TLS with the certificate in {@code certFile} and the key in {@code keyFile}.
   *
   * @throws IOException naming the file and what is wrong with it
   */
  static SslContextFactory.Server serverContext(Path certFile, Path keyFile) throws IOException {
    List<? extends Certificate> chain;
    try (ByteArrayInputStream in = new ByteArrayInputStream(Files.readAllBytes(certFile))) {
      chain = List.copyOf(CertificateFactory.getInstance("X.509").generateCertificates(in));
    } catch (IOException | GeneralSecurityException e) {
      throw new IOException(
          "REST TLS certificate " + certFile + ": cannot read it (" + e.getMessage() + ")", e);
    }
    if (chain.isEmpty()) {
      throw new IOException("REST TLS certificate " + certFile + " holds no certificate");
    }
    PrivateKey key = privateKey(keyFile);
    try {
      char[] password = new char[0];
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("rest", key, password, chain.toArray(new Certificate[0]));
      SslContextFactory.Server f = new SslContextFactory.Server();
      f.setKeyStore(store);
      f.setKeyStorePassword("");
      f.setKeyManagerPassword("");
      return f;
    } catch (GeneralSecurityException e) {
      throw new IOException(
          "REST TLS: the key in "
              + keyFile
              + " does not fit the certificate"
              + " in "
              + certFile
              + " ("
              + e.getMessage()
              + ")",
          e);
    }
  }

  private static PrivateKey privateKey(Path keyFile) throws IOException {
    String pem;
    try {
      pem = Files.readString(keyFile, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IOException(
          "REST TLS key " + keyFile + ": cannot read it (" + e.getMessage() + ")", e);
    }
    Matcher m = KEY.matcher(pem);
    if (!m.find()) {
      throw new IOException("REST TLS key " + keyFile + " holds no PEM private key");
    }
    if (!m.group(1).isEmpty()) {
      throw new IOException(
          "REST TLS key "
              + keyFile
              + " is a '"
              + m.group(1).strip()
              + " PRIVATE KEY'; an unencrypted PKCS#8 key ('PRIVATE KEY') is needed: convert it with"
              + " openssl pkcs8 -topk8 -nocrypt -in "
              + keyFile.getFileName());
    }
    byte[] der = Base64.getMimeDecoder().decode(m.group(2).strip());
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "EdDSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new IOException("REST TLS key " + keyFile + ": not an RSA, EC or Ed25519 key");
  }
}
