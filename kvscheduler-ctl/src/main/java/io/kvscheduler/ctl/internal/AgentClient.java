package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The agent's REST API over HTTP(S): sends the bearer token when one is given and turns every
 * failure into a {@link CtlException} with a message a person can act on (agent not reachable,
 * token refused, the agent's own error text).
 */
public final class AgentClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI base;
  private final String token;
  private final HttpClient http;
  private final Duration timeout;

  /**
   * @param base the agent, {@code http(s)://host:port}
   * @param token bearer token, or null
   * @param timeout limit of one request (a streaming request is not limited)
   */
  public AgentClient(URI base, String token, Duration timeout) {
    this.base = base;
    this.token = token;
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  /** An answer of the agent with a 2xx status. */
  public record Reply(int status, String contentType, byte[] body) {
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    public JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new CtlException(
            ExitCodes.FAILED, "the agent's answer is not JSON: " + e.getMessage(), e);
      }
    }
  }

  /** The agent's URL. */
  public URI base() {
    return base;
  }

  /** A query string from name/value pairs (null values left out), or "" when none. */
  public static String query(Object... nameValues) {
    Map<String, Object> params = new LinkedHashMap<>();
    for (int i = 0; i + 1 < nameValues.length; i += 2) {
      if (nameValues[i + 1] != null) {
        params.put((String) nameValues[i], nameValues[i + 1]);
      }
    }
    if (params.isEmpty()) {
      return "";
    }
    StringJoiner j = new StringJoiner("&", "?", "");
    params.forEach(
        (k, v) -> j.add(k + "=" + URLEncoder.encode(String.valueOf(v), StandardCharsets.UTF_8)));
    return j.toString();
  }

  public Reply get(String pathAndQuery) {
    return send(request(pathAndQuery).GET().build(), pathAndQuery);
  }

  public Reply put(String pathAndQuery, String contentType, byte[] body) {
    return send(
        request(pathAndQuery)
            .header("Content-Type", contentType)
            .PUT(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        pathAndQuery);
  }

  public Reply post(String pathAndQuery) {
    return send(
        request(pathAndQuery).POST(HttpRequest.BodyPublishers.noBody()).build(), pathAndQuery);
  }

  /** Opens a streaming GET (server-sent events): the body as it arrives; the caller closes it. */
  public InputStream stream(String pathAndQuery) {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(resolve(pathAndQuery)).header("Accept", "text/event-stream").GET();
    if (token != null) {
      req.header("Authorization", "Bearer " + token);
    }
    HttpResponse<InputStream> r;
    try {
      r = http.send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw unreachable(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CtlException(ExitCodes.FAILED, "interrupted");
    }
    if (r.statusCode() >= 300) {
      byte[] body;
      try (InputStream in = r.body()) {
        body = in.readNBytes(64 * 1024);
      } catch (IOException e) {
        body = new byte[0];
      }
      throw refusal(r.statusCode(), body, pathAndQuery);
    }
    return r.body();
  }

  private HttpRequest.Builder request(String pathAndQuery) {
    HttpRequest.Builder b = HttpRequest.newBuilder(resolve(pathAndQuery)).timeout(timeout);
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return b;
  }

  private URI resolve(String pathAndQuery) {
    String b = base.toString();
    return URI.create((b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + pathAndQuery);
  }

  private Reply send(HttpRequest req, String what) {
    HttpResponse<byte[]> r;
    try {
      r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
    } catch (HttpConnectTimeoutException | ConnectException e) {
      throw unreachable(e);
    } catch (HttpTimeoutException e) {
      throw new CtlException(
          ExitCodes.UNREACHABLE,
          "the agent at "
              + base
              + " did not answer "
              + what
              + " within "
              + timeout.toSeconds()
              + " s",
          e);
    } catch (IOException e) {
      throw unreachable(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CtlException(ExitCodes.FAILED, "interrupted");
    }
    if (r.statusCode() >= 300) {
      throw refusal(r.statusCode(), r.body(), what);
    }
    return new Reply(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
  }

  private CtlException unreachable(IOException e) {
    String cause = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return new CtlException(
        ExitCodes.UNREACHABLE,
        "cannot reach the agent at "
            + base
            + " ("
            + cause
            + "); is it running? Give its address with --agent or KVS_AGENT",
        e);
  }

  private CtlException refusal(int status, byte[] body, String what) {
    String message = errorText(body);
    if (status == 401) {
      return new CtlException(
          ExitCodes.REFUSED,
          "the agent at "
              + base
              + " refused the request"
              + (token == null
                  ? ": it needs a token (give it with --token-file FILE or KVS_REST_TOKEN)"
                  : ": the token was not accepted")
              + (message.isEmpty() ? "" : " [" + message + "]"));
    }
    if (status == 403) {
      return new CtlException(
          ExitCodes.REFUSED,
          "the agent at "
              + base
              + " refused "
              + what
              + " (403"
              + (message.isEmpty() ? "" : ": " + message)
              + ")");
    }
    return new CtlException(
        ExitCodes.FAILED,
        "the agent answered " + status + " to " + what + (message.isEmpty() ? "" : ": " + message));
  }

  /** The agent's error text: {@code Error} of a JSON object, a JSON string, or the body. */
  static String errorText(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8).strip();
    try {
      JsonNode n = JSON.readTree(text);
      if (n != null && n.isObject() && n.has("Error")) {
        return n.get("Error").asText();
      }
      if (n != null && n.isTextual()) {
        return n.asText().strip();
      }
    } catch (IOException | RuntimeException e) {
      // not JSON: the text itself
    }
    return text.length() > 2000 ? text.substring(0, 2000) + "..." : text;
  }
}
