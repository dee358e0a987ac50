package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Requests a browser sends on behalf of another site, over real HTTP: a page of another name that
 * resolves to the agent (DNS rebinding), a form posted across sites, a cross-site fetch. Nothing of
 * a refused request is applied.
 */
class RestCrossSiteTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final byte[] PUT_TAP9 = RestSecurityTest.PUT_TAP9.getBytes(StandardCharsets.UTF_8);

  final List<Agent> agents = new ArrayList<>();
  final List<RawHttpClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(RawHttpClient::close);
    agents.forEach(Agent::close);
  }

  /** An agent with REST at {@code address} and these flags, and a raw client of it. */
  RawHttpClient start(String address, List<String> args, Map<String, String> env) throws Exception {
    List<String> all = new ArrayList<>(List.of("--rest", address, "--quiet"));
    all.addAll(args);
    Agent a = Agent.start(AgentConfig.load(all, env));
    agents.add(a);
    RawHttpClient c = new RawHttpClient(RestSecurityTest.port(a));
    clients.add(c);
    return c;
  }

  Agent agent() {
    return agents.get(agents.size() - 1);
  }

  static Map<String, String> headers(String... nameValue) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < nameValue.length; i += 2) {
      m.put(nameValue[i], nameValue[i + 1]);
    }
    return m;
  }

  static String error(RawHttpClient.Answer a) throws Exception {
    return JSON.readTree(a.body()).get("Error").asText();
  }

  @Test
  @DisplayName(
      "without a token, a Host other than the addresses listened on is refused with 421 naming"
          + " it and --rest-allowed-hosts, for reads and writes; nothing is applied")
  void anotherHostIsRefusedWithoutAToken() throws Exception {
    RawHttpClient c = start("127.0.0.1:0", List.of(), Map.of());
    int port = RestSecurityTest.port(agent());
    RawHttpClient.Answer put =
        c.send(
            "PUT",
            "/configuration",
            headers("Host", "attacker.example:" + port, "Content-Type", "application/yaml"),
            PUT_TAP9);
    assertThat(put.status()).isEqualTo(421);
    assertThat(put.header("Content-Type")).startsWith("application/json");
    assertThat(error(put)).contains("attacker.example", "--rest-allowed-hosts");
    RawHttpClient.Answer get =
        c.send("GET", "/configuration", headers("Host", "attacker.example"), new byte[0]);
    assertThat(get.status()).isEqualTo(421);
    assertThat(agent().northbound().desired()).isEmpty();
    assertThat(agent().scheduler().transactionHistory()).isEmpty();

    for (String host :
        List.of("127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port)) {
      assertThat(c.send("GET", "/info/version", headers("Host", host), new byte[0]).status())
          .as(host)
          .isEqualTo(200);
    }
    RawHttpClient.Answer ok =
        c.send(
            "PUT",
            "/configuration",
            headers("Host", "localhost:" + port, "Content-Type", "application/yaml"),
            PUT_TAP9);
    assertThat(ok.status()).as(ok.text()).isEqualTo(200);
    assertThat(agent().northbound().desired()).containsOnlyKeys(RestSecurityTest.TAP9);
  }

  @Test
  @DisplayName("--rest-allowed-hosts adds names (any port) and name:port (that port only)")
  void allowedHosts() throws Exception {
    RawHttpClient c =
        start(
            "127.0.0.1:0",
            List.of("--rest-allowed-hosts", "agent.example, Proxy.example:8443"),
            Map.of());
    assertThat(
            c.send("GET", "/info/version", headers("Host", "agent.example"), new byte[0]).status())
        .isEqualTo(200);
    assertThat(
            c.send("GET", "/info/version", headers("Host", "agent.example:80"), new byte[0])
                .status())
        .isEqualTo(200);
    assertThat(
            c.send("GET", "/info/version", headers("Host", "proxy.example:8443"), new byte[0])
                .status())
        .isEqualTo(200);
    assertThat(
            c.send("GET", "/info/version", headers("Host", "proxy.example:80"), new byte[0])
                .status())
        .isEqualTo(421);
    assertThat(
            c.send("GET", "/info/version", headers("Host", "other.example"), new byte[0]).status())
        .isEqualTo(421);
  }

  @Test
  @DisplayName("with a token the Host is not checked: the token proves the request is meant")
  void withATokenTheHostIsNotChecked() throws Exception {
    RawHttpClient c = start("127.0.0.1:0", List.of(), Map.of("KVS_REST_TOKEN", "s3cret"));
    RawHttpClient.Answer put =
        c.send(
            "PUT",
            "/configuration",
            headers(
                "Host",
                "attacker.example",
                "Authorization",
                "Bearer s3cret",
                "Content-Type",
                "application/yaml"),
            PUT_TAP9);
    assertThat(put.status()).as(put.text()).isEqualTo(200);
    assertThat(
            c.send("GET", "/info/version", headers("Host", "attacker.example"), new byte[0])
                .status())
        .isEqualTo(401);
  }

  @Test
  @DisplayName(
      "listening on every interface (0.0.0.0), any IP literal is accepted as Host, and names only"
          + " when allowed")
  void wildcardAcceptsAddressesNotNames() throws Exception {
    RawHttpClient c =
        start("0.0.0.0:0", List.of("--rest-allowed-hosts", "agent.example"), Map.of());
    for (String host : List.of("10.1.2.3:9191", "192.0.2.7", "[fe80::1]:80", "localhost")) {
      assertThat(c.send("GET", "/info/version", headers("Host", host), new byte[0]).status())
          .as(host)
          .isEqualTo(200);
    }
    assertThat(
            c.send("GET", "/info/version", headers("Host", "agent.example"), new byte[0]).status())
        .isEqualTo(200);
    RawHttpClient.Answer refused =
        c.send("GET", "/info/version", headers("Host", "attacker.example"), new byte[0]);
    assertThat(refused.status()).isEqualTo(421);
    assertThat(error(refused)).contains("attacker.example", "--rest-allowed-hosts");
  }

  @Test
  @DisplayName(
      "a write whose body is not YAML or JSON by its Content-Type (or has none) gets 415 naming"
          + " the accepted types; nothing is applied")
  void writesNeedAYamlOrJsonContentType() throws Exception {
    RawHttpClient c = start("127.0.0.1:0", List.of(), Map.of());
    for (String type :
        new String[] {
          null,
          "text/plain",
          "text/plain; charset=utf-8",
          "text/html",
          "application/xml",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x"
        }) {
      RawHttpClient.Answer a = c.send("PUT", "/configuration", type, PUT_TAP9);
      assertThat(a.status()).as(type).isEqualTo(415);
      assertThat(error(a)).contains("application/yaml", "application/json", "Content-Type");
    }
    assertThat(agent().northbound().desired()).isEmpty();
    assertThat(agent().scheduler().transactionHistory()).isEmpty();
    for (String type :
        List.of(
            "application/yaml",
            "application/x-yaml",
            "text/yaml",
            "TEXT/X-YAML; charset=UTF-8",
            "application/json")) {
      byte[] body =
          type.equals("application/json")
              ? "{\"mockConfig\": {\"Interface_list\": [{\"name\": \"tap9\", \"type\": \"TAP\"}]}}"
                  .getBytes(StandardCharsets.UTF_8)
              : PUT_TAP9;
      RawHttpClient.Answer a = c.send("PUT", "/configuration", type, body);
      assertThat(a.status()).as(type + ": " + a.text()).isEqualTo(200);
    }
  }

  @Test
  @DisplayName(
      "POST downstream-resync from another site (a text/plain form, an Origin of another site,"
          + " Sec-Fetch-Site: cross-site) is refused and runs nothing; from the page's own origin"
          + " and from tools (agentctl's empty text/plain body too) it runs")
  void crossSiteResyncIsRefused() throws Exception {
    RawHttpClient c = start("127.0.0.1:0", List.of(), Map.of());
    int port = RestSecurityTest.port(agent());
    String resync = "/scheduler/downstream-resync";
    // what a browser sends for <form method=post enctype=text/plain> on attacker.example
    RawHttpClient.Answer form =
        c.send(
            "POST",
            resync,
            headers(
                "Content-Type",
                "text/plain",
                "Origin",
                "http://attacker.example",
                "Sec-Fetch-Site",
                "cross-site"),
            "a=b".getBytes(StandardCharsets.US_ASCII));
    assertThat(form.status()).isEqualTo(403);
    assertThat(error(form)).contains("attacker.example");
    // a text/plain body is refused even without Origin (a form of an old browser)
    RawHttpClient.Answer plain =
        c.send(
            "POST",
            resync,
            headers("Content-Type", "text/plain"),
            "a=b".getBytes(StandardCharsets.US_ASCII));
    assertThat(plain.status()).isEqualTo(415);
    RawHttpClient.Answer origin =
        c.send("POST", resync, headers("Origin", "http://attacker.example"), new byte[0]);
    assertThat(origin.status()).isEqualTo(403);
    assertThat(error(origin)).contains("Origin", "http://attacker.example");
    assertThat(c.send("POST", resync, headers("Origin", "null"), new byte[0]).status())
        .isEqualTo(403);
    assertThat(
            c.send("POST", resync, headers("Origin", "http://127.0.0.1:" + (port + 1)), new byte[0])
                .status())
        .isEqualTo(403);
    RawHttpClient.Answer fetchSite =
        c.send("POST", resync, headers("Sec-Fetch-Site", "cross-site"), new byte[0]);
    assertThat(fetchSite.status()).isEqualTo(403);
    assertThat(error(fetchSite)).contains("Sec-Fetch-Site");
    assertThat(agent().scheduler().transactionHistory()).isEmpty();

    // the agent's own page, and a tool that sends no Origin
    RawHttpClient.Answer own =
        c.send(
            "POST",
            resync,
            headers("Origin", "http://127.0.0.1:" + port, "Sec-Fetch-Site", "same-origin"),
            new byte[0]);
    assertThat(own.status()).as(own.text()).isEqualTo(200);
    assertThat(c.send("POST", resync, headers(), new byte[0]).status()).isEqualTo(200);
    // agentctl config resync: no body, said to be text/plain, no Origin
    assertThat(c.send("POST", resync, headers("Content-Type", "text/plain"), new byte[0]).status())
        .isEqualTo(200);
    assertThat(agent().scheduler().transactionHistory()).hasSize(3);
  }
}
