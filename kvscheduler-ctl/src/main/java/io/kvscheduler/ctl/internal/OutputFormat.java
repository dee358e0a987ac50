package io.kvscheduler.ctl.internal;

import picocli.CommandLine.Option;

/** The {@code -o/--output} option: a table for people (default) or JSON for scripts. */
public final class OutputFormat {
  /** The formats. */
  public enum Format {
    table,
    json
  }

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FORMAT",
      defaultValue = "table",
      description = "table (default) or json.")
  Format format = Format.table;

  public boolean json() {
    return format == Format.json;
  }
}
