package io.kvscheduler.ctl.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code graph}: the graph of values, as DOT, SVG or JSON, now or as of a transaction. */
@Command(
    name = "graph",
    description = {
      "The graph of values and their dependencies, now or as of"
          + " transaction N, on standard output or written to FILE (--out).",
      "Example: kvsctl graph -o svg --out graph.svg"
    })
public final class GraphCommand extends AgentCommand {
  /** The formats, and the agent's names of them. */
  enum Format {
    dot("raw"),
    svg("svg"),
    json("json");

    final String agentName;

    Format(String agentName) {
      this.agentName = agentName;
    }
  }

  @Option(names = "--txn", paramLabel = "N", description = "The graph as of transaction N.")
  Long txn;

  /** The output format, {@code -o} as in every command ({@code --format} is the same). */
  @Option(
      names = {"-o", "--output", "--format"},
      paramLabel = "FORMAT",
      defaultValue = "dot",
      description = "dot (default), svg or json.")
  Format format;

  @Option(
      names = "--out",
      paramLabel = "FILE",
      description = "Write the graph to FILE (default, or '-': standard output).")
  String file;

  @Override
  protected int run() {
    byte[] body =
        client()
            .get("/scheduler/graph" + AgentClient.query("txn", txn, "format", format.agentName))
            .body();
    if (file == null || file.equals("-")) {
      out().print(new String(body, StandardCharsets.UTF_8));
      return ExitCodes.OK;
    }
    try {
      Files.write(Path.of(file), body);
    } catch (IOException e) {
      throw new CtlException(ExitCodes.FAILED, "cannot write " + file + ": " + e, e);
    }
    err().println("kvsctl: wrote the graph (" + format + ", " + body.length + " bytes) to " + file);
    return ExitCodes.OK;
  }
}
