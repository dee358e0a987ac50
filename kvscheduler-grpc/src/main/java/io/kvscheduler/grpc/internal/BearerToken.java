package io.kvscheduler.grpc.internal;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Refuses calls without {@code authorization: Bearer <token>} metadata ({@code UNAUTHENTICATED}),
 * the token the REST API asks for too.
 */
public final class BearerToken implements ServerInterceptor {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private final byte[] expected;

  public BearerToken(String token) {
    this.expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String given = headers.get(AUTHORIZATION);
    if (given == null || !MessageDigest.isEqual(expected, given.getBytes(StandardCharsets.UTF_8))) {
      call.close(
          Status.UNAUTHENTICATED.withDescription(
              given == null
                  ? "missing 'authorization: Bearer <token>' metadata"
                  : "wrong bearer token"),
          new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }
}
