package io.kvscheduler.agent;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A minimal HTTP/1.1 client over one kept-alive socket that sends the request target exactly as
 * given: malformed percent-escapes and characters a URI class would refuse reach the server, as
 * they do from a hand-written client. Reads {@code Content-Length} and chunked answers.
 */
final class RawHttpClient implements AutoCloseable {
  private final int port;
  private Socket socket;
  private InputStream in;
  private OutputStream out;

  /** One answer: status, headers (names in lower case) and body. */
  record Answer(int status, Map<String, String> headers, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    String header(String name) {
      return headers.getOrDefault(name.toLowerCase(Locale.ROOT), "");
    }
  }

  RawHttpClient(int port) {
    this.port = port;
  }

  /** Sends one request; {@code contentType} may be null, {@code body} empty. */
  Answer send(String method, String target, String contentType, byte[] body) throws IOException {
    Map<String, String> headers = new LinkedHashMap<>();
    if (contentType != null) {
      headers.put("Content-Type", contentType);
    }
    return send(method, target, headers, body);
  }

  /**
   * Sends one request with {@code headers} (in their order; {@code Host} is {@code 127.0.0.1:port}
   * unless they name another, and is left out when they map it to null).
   */
  Answer send(String method, String target, Map<String, String> headers, byte[] body)
      throws IOException {
    StringBuilder head = new StringBuilder();
    head.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    if (!headers.containsKey("Host")) {
      head.append("Host: 127.0.0.1:").append(port).append("\r\n");
    }
    headers.forEach(
        (name, value) -> {
          if (value != null) {
            head.append(name).append(": ").append(value).append("\r\n");
          }
        });
    if (!method.equals("GET") || body.length > 0) {
      head.append("Content-Length: ").append(body.length).append("\r\n");
    }
    head.append("\r\n");
    byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
    boolean fresh = socket == null;
    try {
      return exchange(h, body);
    } catch (EOFException | SocketException e) {
      // the server closed a kept-alive connection before this request: once more on a new one
      closeSocket();
      if (fresh) {
        throw e;
      }
      return exchange(h, body);
    }
  }

  private Answer exchange(byte[] head, byte[] body) throws IOException {
    if (socket == null) {
      socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(60_000);
      socket.setTcpNoDelay(true);
      in = new BufferedInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    }
    out.write(head);
    out.write(body);
    out.flush();
    String status = line();
    String[] parts = status.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP status line: " + status);
    }
    int code = Integer.parseInt(parts[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String l = line(); !l.isEmpty(); l = line()) {
      int colon = l.indexOf(':');
      headers.put(
          l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
    }
    byte[] content;
    if (headers.getOrDefault("transfer-encoding", "").equalsIgnoreCase("chunked")) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      while (true) {
        String size = line();
        int semi = size.indexOf(';');
        int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
        if (n == 0) {
          for (String l = line(); !l.isEmpty(); l = line()) {
            // trailers: none expected
          }
          break;
        }
        b.write(in.readNBytes(n));
        line();
      }
      content = b.toByteArray();
    } else if (headers.containsKey("content-length")) {
      content = in.readNBytes(Integer.parseInt(headers.get("content-length")));
    } else if (code == 204 || code == 304) {
      content = new byte[0];
    } else {
      content = in.readAllBytes();
      closeSocket();
    }
    if (headers.getOrDefault("connection", "").equalsIgnoreCase("close")) {
      closeSocket();
    }
    return new Answer(code, headers, content);
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new EOFException("connection closed by the server");
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.ISO_8859_1);
  }

  private void closeSocket() {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    socket = null;
  }

  @Override
  public void close() {
    closeSocket();
  }
}
