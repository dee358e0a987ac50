package io.kvscheduler.agent.internal.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The JSON of {@code /scheduler/status}, written token by token, against the bytes the documented
 * shape ({@code docs/interop.md} §2.2) has in Go's indented layout (recorded in {@code
 * status-json/}).
 */
class StatusJsonTest {
  static final List<BaseValueStatus> STATUSES =
      List.of(
          new BaseValueStatus(
              new ValueStatus(
                  "config/a", ValueState.CONFIGURED, "", TxnOperation.CREATE, List.of()),
              List.of()),
          new BaseValueStatus(
              new ValueStatus(
                  "config/b\"q\\\u00e9\u0001",
                  ValueState.FAILED,
                  "mock error: \"x\"\n",
                  TxnOperation.UPDATE,
                  List.of()),
              List.of()),
          new BaseValueStatus(
              new ValueStatus(
                  "config/bd", ValueState.CONFIGURED, "", TxnOperation.CREATE, List.of()),
              List.of(
                  new ValueStatus(
                      "mock/bd/x", ValueState.CONFIGURED, "", TxnOperation.CREATE, List.of()),
                  new ValueStatus(
                      "mock/bd/y",
                      ValueState.PENDING,
                      "",
                      TxnOperation.CREATE,
                      List.of("interface", "other")))),
          new BaseValueStatus(
              new ValueStatus(
                  "config/inv", ValueState.INVALID, "bad", TxnOperation.UNDEFINED, List.of("type")),
              List.of()),
          new BaseValueStatus(ValueStatus.nonexistent("no/such"), List.of()),
          new BaseValueStatus(
              new ValueStatus(
                  "config/obt", ValueState.OBTAINED, "", TxnOperation.UNDEFINED, List.of()),
              List.of()));

  @Test
  @DisplayName(
      "statuses streamed with a generator: Go's layout, zero fields left out, escapes,"
          + " derived values and details; byte for byte the documented shape")
  void statusesStreamed() throws Exception {
    assertThat(
            body(Response.jsonStream(200, g -> SchedulerJson.writeStatuses(g, STATUSES::forEach))))
        .isEqualTo(expected("statuses.json"));
  }

  @Test
  @DisplayName("one status with its derived values")
  void oneStatus() throws Exception {
    assertThat(body(Response.jsonStream(200, g -> SchedulerJson.writeStatus(g, STATUSES.get(2)))))
        .isEqualTo(expected("one-status.json"));
  }

  @Test
  @DisplayName("no status at all: null, as vpp-agent answers")
  void noStatus() throws Exception {
    assertThat(body(Response.jsonStream(200, g -> SchedulerJson.writeStatuses(g, each -> {}))))
        .isEqualTo(expected("no-status.json"))
        .isEqualTo("null\n");
  }

  private static String body(Response r) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    r.body().writeTo(out);
    return out.toString(StandardCharsets.UTF_8);
  }

  private static String expected(String name) throws Exception {
    try (InputStream in = StatusJsonTest.class.getResourceAsStream("/status-json/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
