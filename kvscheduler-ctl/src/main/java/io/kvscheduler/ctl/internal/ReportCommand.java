package io.kvscheduler.ctl.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code report}: one zip with what a bug report needs. */
@Command(
    name = "report",
    description = {
      "Writes one zip for a bug report: version, settings"
          + " (secrets left out), configuration, status of every value, transaction history, graph"
          + " (DOT and JSON), statistics, metrics and the agent's recent log.",
      "Example: kvsctl report --out report.zip"
    })
public final class ReportCommand extends AgentCommand {
  /** The entries of the zip and where the agent serves them (also listed in docs/operating.md). */
  static final List<String[]> ENTRIES =
      List.of(
          new String[] {"version.json", "/info/version"},
          new String[] {"settings.json", "/info/settings"},
          new String[] {"configuration.yaml", "/configuration"},
          new String[] {"status.json", "/scheduler/status"},
          new String[] {"txn-history.json", "/scheduler/txn-history"},
          new String[] {"txn-history.txt", "/scheduler/txn-history?format=text"},
          new String[] {"graph.dot", "/scheduler/graph?format=raw"},
          new String[] {"graph.json", "/scheduler/graph?format=json"},
          new String[] {"stats.json", "/scheduler/stats"},
          new String[] {"metrics.txt", "/metrics"},
          new String[] {"agent.log", "/info/log"});

  @Option(
      names = "--out",
      paramLabel = "FILE.zip",
      required = true,
      description = "The zip to write.")
  Path file;

  @Override
  protected int run() {
    AgentClient client = client();
    List<String> missing = new ArrayList<>();
    // the first request decides whether the agent is there at all (exit 3 or 4 if not)
    byte[] version = client.get(ENTRIES.get(0)[1]).body();
    try (OutputStream os = Files.newOutputStream(file);
        ZipOutputStream zip = new ZipOutputStream(os)) {
      entry(zip, ENTRIES.get(0)[0], version);
      for (String[] e : ENTRIES.subList(1, ENTRIES.size())) {
        try {
          entry(zip, e[0], client.get(e[1]).body());
        } catch (CtlException ex) {
          missing.add(e[0] + ": " + ex.getMessage());
        }
      }
      StringBuilder manifest =
          new StringBuilder("kvsctl report of " + client.base() + " at " + Instant.now() + "\n\n");
      ENTRIES.forEach(e -> manifest.append(e[0]).append("  <-  GET ").append(e[1]).append('\n'));
      if (!missing.isEmpty()) {
        manifest.append("\nnot included:\n");
        missing.forEach(m -> manifest.append("  ").append(m).append('\n'));
      }
      entry(zip, "manifest.txt", manifest.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new CtlException(ExitCodes.FAILED, "cannot write " + file + ": " + e, e);
    }
    missing.forEach(m -> err().println("kvsctl: not in the report: " + m));
    err().println("kvsctl: wrote " + file);
    return ExitCodes.OK;
  }

  private static void entry(ZipOutputStream zip, String name, byte[] body) throws IOException {
    zip.putNextEntry(new ZipEntry(name));
    zip.write(body);
    zip.closeEntry();
  }
}
