package io.kvscheduler.ctl.internal;

import picocli.CommandLine.Command;

/** {@code config}: the agent's desired configuration. */
@Command(
    name = "config",
    description = "The desired configuration: read it, or put a file.",
    subcommands = {ConfigGetCommand.class, ConfigPutCommand.class})
public final class ConfigCommand {}
