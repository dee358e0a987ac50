package io.kvscheduler.ctl.internal;

import picocli.CommandLine.Command;

/** {@code config}: the agent's desired configuration. */
@Command(
    name = "config",
    description =
        "The desired configuration: read it, put a file, confirm or roll back a confirmed commit.",
    subcommands = {
      ConfigGetCommand.class,
      ConfigPutCommand.class,
      ConfigConfirmCommand.class,
      ConfigRollbackCommand.class
    })
public final class ConfigCommand {}
