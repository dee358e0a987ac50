package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Inputs the REST fuzzing ({@link RestFuzzTest}) found answered without naming the parameter or
 * place, kept as regression tests over real HTTP.
 */
class RestFuzzRegressionTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static Agent agent;
  static RawHttpClient http;

  @BeforeAll
  static void start() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder().restAddress("127.0.0.1:0").printTxnSummary(false).build());
    http =
        new RawHttpClient(
            agent.sources().stream()
                .filter(RestNorthbound.class::isInstance)
                .map(RestNorthbound.class::cast)
                .findFirst()
                .orElseThrow()
                .port());
  }

  @AfterAll
  static void stop() {
    if (http != null) {
      http.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  static String error(String method, String target, String body, int status) throws Exception {
    RawHttpClient.Answer a =
        http.send(
            method,
            target,
            body.isEmpty() ? null : "application/yaml",
            body.getBytes(StandardCharsets.UTF_8));
    assertThat(a.status()).as(target + " -> " + a.text()).isEqualTo(status);
    assertThat(a.header("content-type")).contains("application/json");
    JsonNode n =
        JSON.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(a.body());
    assertThat(n.size()).as(a.text()).isEqualTo(1);
    return n.get("Error").asText();
  }

  @Test
  void anUnknownDumpKeyPrefixNamesTheParameterItsValueAndTheKnownPrefixes() throws Exception {
    assertThat(error("GET", "/scheduler/dump?key-prefix=0", "", 404))
        .startsWith("no descriptor found matching the key prefix: key-prefix '0' (known: ")
        .contains("config/mock/v1/interfaces/");
  }

  @Test
  void aLongUnknownDumpKeyPrefixWithAControlCharacterIsShownBounded() throws Exception {
    String error = error("GET", "/scheduler/dump?key-prefix=%00" + "x".repeat(5000), "", 404);
    assertThat(error).contains("key-prefix '").hasSizeLessThan(2000);
  }

  @Test
  void anUnrecordedTransactionNamesTheParameterAndTheNumber() throws Exception {
    assertThat(error("GET", "/scheduler/txn-history?seq-num=88", "", 404))
        .isEqualTo("transaction with such sequence number is not recorded: seq-num 88");
    assertThat(error("GET", "/scheduler/graph?txn=9223372036854775807", "", 404))
        .isEqualTo(
            "transaction with such sequence number is not recorded: txn 9223372036854775807");
  }
}
