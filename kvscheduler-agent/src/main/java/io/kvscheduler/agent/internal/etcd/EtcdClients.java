package io.kvscheduler.agent.internal.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kvscheduler.agent.EtcdSettings;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * Builds the jetcd client from {@link EtcdSettings} and turns its failures into messages that name
 * the cause an operator can act on (credentials, certificates, unreachable endpoints).
 */
public final class EtcdClients {
  private EtcdClients() {}

  /**
   * A client for {@code endpoints} with the settings' TLS, credentials and dial timeout.
   *
   * @throws IllegalArgumentException when a TLS file cannot be used, naming the setting and file
   */
  public static Client create(List<String> endpoints, EtcdSettings settings) {
    boolean tls =
        settings.tls()
            || (!settings.insecureTransport()
                && endpoints.stream().anyMatch(e -> e.startsWith("https://")));
    ClientBuilder b =
        Client.builder()
            .endpoints(uris(endpoints, tls))
            .connectTimeout(settings.dialTimeout())
            // a request fails as soon as no endpoint can be connected to, with the cause (refused
            // password, untrusted certificate), instead of waiting until it times out; requests
            // still wait for a connection being made, bounded by the request timeout
            .waitForReady(false);
    if (settings.username() != null) {
      b.user(ByteSequence.from(settings.username(), StandardCharsets.UTF_8));
      b.password(
          ByteSequence.from(
              settings.password() == null ? "" : settings.password(), StandardCharsets.UTF_8));
    }
    if (tls) {
      try {
        b.sslContext(
            ssl -> {
              if (settings.insecureSkipTlsVerify()) {
                ssl.trustManager(InsecureTrustManagerFactory.INSTANCE);
              } else if (settings.caFile() != null) {
                try {
                  ssl.trustManager(settings.caFile().toFile());
                } catch (RuntimeException e) {
                  throw new IllegalArgumentException(
                      "etcd ca-file "
                          + settings.caFile()
                          + ": no usable PEM certificate ("
                          + rootMessage(e)
                          + ")",
                      e);
                }
              }
              if (settings.certFile() != null) {
                try {
                  ssl.keyManager(settings.certFile().toFile(), settings.keyFile().toFile());
                } catch (RuntimeException e) {
                  throw new IllegalArgumentException(
                      "etcd cert-file "
                          + settings.certFile()
                          + " / key-file "
                          + settings.keyFile()
                          + ": not a usable PEM certificate and"
                          + " PKCS#8 key ("
                          + rootMessage(e)
                          + ")",
                      e);
                }
              }
            });
      } catch (SSLException e) {
        throw new IllegalArgumentException(
            "etcd TLS settings cannot be used: " + e.getMessage(), e);
      }
    }
    return b.build();
  }

  /** {@code host:port} entries as URIs; the scheme follows whether TLS is used. */
  public static List<URI> uris(List<String> endpoints, boolean tls) {
    List<URI> out = new ArrayList<>();
    for (String e : endpoints) {
      String u = e.contains("://") ? e : (tls ? "https://" : "http://") + e;
      out.add(URI.create(u));
    }
    return out;
  }

  /**
   * Whether etcd answered by refusing the client: the user's authentication failed or it may not
   * use the keys asked for.
   */
  public static boolean refused(Throwable t) {
    Throwable c = unwrap(t);
    String all = chainText(c).toLowerCase(Locale.ROOT);
    return denied(c, all) || unauthenticated(c, all);
  }

  private static boolean denied(Throwable c, String chainText) {
    return chainText.contains("permission denied")
        || statusCode(c) == Status.Code.PERMISSION_DENIED;
  }

  private static boolean unauthenticated(Throwable c, String chainText) {
    return chainText.contains("authentication failed")
        || chainText.contains("invalid user id or password")
        || chainText.contains("user name is empty")
        || chainText.contains("auth token is invalid")
        || statusCode(c) == Status.Code.UNAUTHENTICATED;
  }

  /**
   * What went wrong talking to etcd, for the log: the root cause and, for authentication and
   * certificate failures, which settings to check.
   */
  public static String explain(Throwable t, EtcdSettings settings, String prefix) {
    Throwable c = unwrap(t);
    String text = describe(c);
    String all = chainText(c).toLowerCase(Locale.ROOT);
    if (denied(c, all)) {
      return "etcd denied user '"
          + settings.username()
          + "' access: grant it read and write"
          + " on the agent prefix "
          + prefix
          + " ("
          + text
          + ")";
    }
    if (unauthenticated(c, all)) {
      if (settings.username() == null) {
        return "etcd requires authentication: set username and password of the etcd settings ("
            + text
            + ")";
      }
      return "authentication failed for user '"
          + settings.username()
          + "': check the username and password of the etcd settings ("
          + text
          + ")";
    }
    Throwable cert = find(c, CertificateException.class);
    Throwable ssl = find(c, SSLException.class);
    if (cert != null || ssl != null || all.contains("pkix") || all.contains("certificate")) {
      Throwable root = cert != null ? cert : ssl;
      String detail = root != null ? rootMessage(root) : text;
      String lower = detail.toLowerCase(Locale.ROOT);
      if (lower.contains("received fatal alert")
          && (lower.contains("certificate")
              || lower.contains("unknown_ca")
              || lower.contains("access_denied"))) {
        return "TLS handshake with etcd failed, etcd refused the client certificate: check"
            + " cert-file"
            + (settings.certFile() != null ? " (" + settings.certFile() + ")" : " (none set)")
            + " and key-file, signed by a CA etcd trusts ("
            + detail
            + ")";
      }
      return "TLS handshake with etcd failed, the server certificate is not trusted: check"
          + " ca-file"
          + (settings.caFile() != null
              ? " (" + settings.caFile() + ")"
              : " (none set: the JDK's trusted roots are used)")
          + " ("
          + detail
          + ")";
    }
    if (c instanceof TimeoutException) {
      return "etcd did not answer in time ("
          + text
          + "; operation-timeout "
          + settings.requestTimeout().toMillis()
          + " ms, dial-timeout "
          + settings.dialTimeout().toMillis()
          + " ms)";
    }
    return text;
  }

  /** {@code t} without the futures' wrappers (execution and completion exceptions). */
  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof ExecutionException || c instanceof CompletionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  private static Status.Code statusCode(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof StatusRuntimeException s) {
        return s.getStatus().getCode();
      }
    }
    return null;
  }

  private static String chainText(Throwable t) {
    StringBuilder sb = new StringBuilder();
    int depth = 0;
    for (Throwable c = t; c != null && depth < 20; c = c.getCause(), depth++) {
      sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append('\n');
      if (c.getCause() == c) {
        break;
      }
    }
    return sb.toString();
  }

  /** The first throwable of {@code type} in the cause chain of {@code t}, or null. */
  public static <T extends Throwable> T find(Throwable t, Class<T> type) {
    int depth = 0;
    for (Throwable c = t; c != null && depth < 20; c = c.getCause(), depth++) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
    }
    return null;
  }

  private static String rootMessage(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c.getClass().getSimpleName() + (c.getMessage() != null ? ": " + c.getMessage() : "");
  }

  /** {@code s} as etcd bytes (UTF-8). */
  public static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** The result of {@code f}, waited for at most {@code timeout} (then cancelled). */
  public static <T> T await(CompletableFuture<T> f, Duration timeout) throws Exception {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      f.cancel(true);
      throw e.getCause() instanceof Exception ex ? ex : e;
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new TimeoutException("no answer within " + timeout.toMillis() + " ms");
    }
  }

  /** The class and message of the cause of {@code t}, unwrapped from the futures' wrappers. */
  public static String describe(Throwable t) {
    Throwable c = unwrap(t);
    return c.getClass().getSimpleName() + (c.getMessage() != null ? ": " + c.getMessage() : "");
  }
}
