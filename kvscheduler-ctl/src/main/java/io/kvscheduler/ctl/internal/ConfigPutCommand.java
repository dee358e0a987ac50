package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.spi.ModelRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code config put FILE}: over REST (the agent's {@code PUT /configuration}), or straight into
 * etcd in vpp-agent's layout ({@code /vnf-agent/<label>/<key>} = the value's protobuf JSON).
 */
@Command(
    name = "put",
    description = {
      "Puts the configuration of FILE (the YAML configuration"
          + " format, or a mapping of keys to values) through the agent's REST API, or with --etcd"
          + " into etcd, where the agent of label L watches it.",
      "Examples: kvsctl config put config.yaml",
      "          kvsctl config put --dry-run config.yaml",
      "          kvsctl config put --confirm-within 30s config.yaml   (then: kvsctl config confirm)",
      "          kvsctl config put --etcd 127.0.0.1:2379 --label vpp1 config.yaml"
    })
public final class ConfigPutCommand extends AgentCommand {
  @Parameters(paramLabel = "FILE", description = "YAML or JSON file ('-' for standard input).")
  String file;

  @Option(
      names = "--replace",
      description =
          "Replace the whole configuration of this source:"
              + " values not in FILE are removed (over REST: the agent's REST source; with --etcd: every"
              + " key of a known model under the label's prefix).")
  boolean replace;

  @Option(
      names = "--dry-run",
      description =
          "Apply nothing: print the plan, the operations the agent would execute in order with"
              + " the state each value would get (over REST only).")
  boolean dryRun;

  @Mixin OutputFormat output;

  @Option(
      names = "--confirm-within",
      paramLabel = "DURATION",
      description =
          "A confirmed commit (over REST only): applied at once, and rolled back by the agent"
              + " unless 'kvsctl config confirm' comes within DURATION (30s, 5m, at most 1h) or"
              + " the agent's probes pass; a failing probe rolls it back at once.")
  String confirmWithin;

  @ArgGroup(exclusive = false)
  Etcd etcd;

  static final class Etcd {
    @Option(
        names = "--etcd",
        paramLabel = "ENDPOINTS",
        required = true,
        description = "Write into etcd at ENDPOINTS (host:port, comma-separated) instead.")
    String endpoints;

    @Option(
        names = "--label",
        paramLabel = "L",
        defaultValue = "vpp1",
        description = "The agent's microservice label (default: ${DEFAULT-VALUE}).")
    String label;
  }

  @Override
  protected int run() {
    String text = read();
    if (dryRun && confirmWithin != null) {
      throw new CtlException(
          ExitCodes.USAGE,
          "--dry-run applies nothing, so there is nothing to confirm: it cannot go with"
              + " --confirm-within");
    }
    if (dryRun && etcd != null) {
      throw new CtlException(
          ExitCodes.USAGE, "--dry-run plans over the agent's REST API: it cannot go with --etcd");
    }
    if (dryRun) {
      JsonNode plan =
          client()
              .put(
                  "/configuration?dry-run" + (replace ? "&replace" : ""),
                  "application/yaml",
                  text.getBytes(StandardCharsets.UTF_8))
              .json();
      if (output.json()) {
        out().println(Json.pretty(plan));
      } else {
        PlanPrinter.print(plan, out(), "nothing to do");
      }
      err().println("kvsctl: dry run of " + file + ": nothing was applied");
      return ExitCodes.OK;
    }
    if (confirmWithin != null && etcd != null) {
      throw new CtlException(
          ExitCodes.USAGE, "--confirm-within: a confirmed commit goes over REST, not with --etcd");
    }
    if (etcd == null && confirmWithin != null) {
      AgentClient.Reply reply =
          client()
              .put(
                  "/configuration"
                      + AgentClient.query(
                          "replace", replace ? "true" : null, "confirm-within", confirmWithin),
                  "application/yaml",
                  text.getBytes(StandardCharsets.UTF_8));
      var pending = reply.json().path("pending");
      err()
          .println(
              "kvsctl: configuration of "
                  + file
                  + " applied at "
                  + client().base()
                  + " as "
                  + pending.path("description").asText("a confirmed commit")
                  + "; confirm it with 'kvsctl config confirm' (or roll it back with"
                  + " 'kvsctl config rollback')");
      return ExitCodes.OK;
    }
    if (etcd == null) {
      client()
          .put(
              "/configuration" + (replace ? "?replace" : ""),
              "application/yaml",
              text.getBytes(StandardCharsets.UTF_8));
      err()
          .println(
              "kvsctl: configuration of "
                  + file
                  + " put to "
                  + client().base()
                  + (replace ? " (replacing the REST configuration)" : ""));
      return ExitCodes.OK;
    }
    ModelRegistry models = Models.ofPlugins();
    Map<String, Object> values;
    try {
      values =
          ConfigFormat.decodeAny(models, ConfigDocument.parseYaml(ConfigDocument.withoutBom(text)));
    } catch (ConfigDocument.SyntaxException e) {
      throw new CtlException(
          ExitCodes.INVALID_CONFIG,
          file + (e.line() > 0 ? ":" + e.line() : "") + ": " + e.getMessage(),
          e);
    } catch (ConfigFormat.ConfigException e) {
      throw new CtlException(
          ExitCodes.INVALID_CONFIG,
          file + (e.line() > 0 ? ":" + e.line() : "") + ": " + e.getMessage(),
          e);
    }
    List<String> endpoints =
        List.of(etcd.endpoints.split(",")).stream()
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .toList();
    if (endpoints.isEmpty()) {
      throw new CtlException(ExitCodes.USAGE, "--etcd: no endpoint given");
    }
    if (!etcd.label.matches("[-A-Za-z0-9_.]+")) {
      throw new CtlException(ExitCodes.USAGE, "--label: invalid label '" + etcd.label + "'");
    }
    EtcdWriter.Result r =
        new EtcdWriter(endpoints, "/vnf-agent/" + etcd.label + "/", models).write(values, replace);
    err()
        .println(
            "kvsctl: wrote "
                + r.written()
                + " value(s)"
                + (replace ? ", removed " + r.removed() : "")
                + " under /vnf-agent/"
                + etcd.label
                + "/ in etcd "
                + endpoints);
    return ExitCodes.OK;
  }

  private String read() {
    try {
      return file.equals("-")
          ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
          : Files.readString(Path.of(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CtlException(ExitCodes.FAILED, "cannot read " + file + ": " + e, e);
    }
  }
}
