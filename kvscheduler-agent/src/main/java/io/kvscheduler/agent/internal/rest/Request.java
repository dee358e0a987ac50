package io.kvscheduler.agent.internal.rest;

import io.javalin.http.Context;
import java.util.List;
import java.util.Optional;

/**
 * One request as handlers see it: its checked query parameters, its body (read within the limit)
 * and its headers.
 */
public final class Request {
  private final Context ctx;
  private final byte[] body;
  private final boolean emptyIsAbsent;

  Request(Context ctx, byte[] body) {
    this(ctx, body, false);
  }

  private Request(Context ctx, byte[] body, boolean emptyIsAbsent) {
    this.ctx = ctx;
    this.body = body;
    this.emptyIsAbsent = emptyIsAbsent;
  }

  /**
   * This request with its empty query parameters taken as absent ({@code ?key=&key-prefix=} is no
   * parameter), as vpp-agent's {@code /scheduler} routes read them and its clients send them.
   */
  public Request withoutEmptyParams() {
    return new Request(ctx, body, true);
  }

  /** The query parameter's values, in the order given; empty when absent. */
  public List<String> params(String name) {
    List<String> v = ctx.queryParams(name);
    return emptyIsAbsent ? v.stream().filter(s -> !s.isEmpty()).toList() : v;
  }

  /** The value of the path parameter {@code name} (a {@code {name}} segment of the route). */
  public String pathParam(String name) {
    return ctx.pathParam(name);
  }

  /** The query parameter's single value; empty when absent; 400 when given twice. */
  public Optional<String> param(String name) {
    List<String> v = params(name);
    if (v.size() > 1) {
      throw new BadRequest(
          "query parameter '" + name + "' is given " + v.size() + " times (at most once)");
    }
    return v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
  }

  /** Whether the query names {@code name} (even without a value). */
  public boolean has(String name) {
    return emptyIsAbsent ? !params(name).isEmpty() : ctx.queryParamMap().containsKey(name);
  }

  public String rawQuery() {
    return ctx.queryString();
  }

  public String header(String name) {
    return ctx.header(name);
  }

  public byte[] body() {
    return body;
  }

  public String path() {
    return ctx.path();
  }

  /** What is wrong with the percent-escapes of {@code rawQuery}, or null when nothing. */
  static String malformedEscape(String rawQuery) {
    if (rawQuery == null) {
      return null;
    }
    for (int i = 0; i < rawQuery.length(); i++) {
      if (rawQuery.charAt(i) == '%') {
        if (i + 2 >= rawQuery.length()
            || Character.digit(rawQuery.charAt(i + 1), 16) < 0
            || Character.digit(rawQuery.charAt(i + 2), 16) < 0) {
          String at = rawQuery.substring(i, Math.min(rawQuery.length(), i + 3));
          return "bad percent-escape '" + at + "' at character " + (i + 1);
        }
      }
    }
    return null;
  }
}
