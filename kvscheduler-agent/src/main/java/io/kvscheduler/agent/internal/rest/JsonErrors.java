package io.kvscheduler.agent.internal.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/** Errors Jetty answers itself (a malformed request line or URL, ...) as JSON. */
final class JsonErrors extends ErrorHandler {
  @Override
  public boolean handle(
      org.eclipse.jetty.server.Request request,
      org.eclipse.jetty.server.Response response,
      Callback callback) {
    int status = response.getStatus() >= 400 ? response.getStatus() : 500;
    Object message = request.getAttribute(ERROR_MESSAGE);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, Response.JSON_TYPE);
    response.getHeaders().put("X-Content-Type-Options", "nosniff");
    response.write(true, errorBody(status, message == null ? null : message.toString()), callback);
    return true;
  }

  @Override
  public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
    fields.put(HttpHeader.CONTENT_TYPE, Response.JSON_TYPE);
    fields.put("X-Content-Type-Options", "nosniff");
    return errorBody(status, reason);
  }

  private static ByteBuffer errorBody(int status, String reason) {
    String text = reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason;
    if (status == 400) {
      text = "malformed request: " + text;
    }
    try {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("Error", text);
      return ByteBuffer.wrap(
          (Response.JSON.writeValueAsString(m) + "\n").getBytes(StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
