package io.kvscheduler.ctl.internal;

import picocli.CommandLine.Command;

/** {@code config rollback}: rolls the pending confirmed commit back now. */
@Command(
    name = "rollback",
    description = {
      "Rolls the commit made with 'kvsctl config put --confirm-within' back now: the agent"
          + " restores the configuration before it (the agent's POST /configuration/rollback)."
          + " Fails when none is pending.",
      "Example: kvsctl config rollback"
    })
public final class ConfigRollbackCommand extends AgentCommand {
  @Override
  protected int run() {
    AgentClient.Reply reply = client().post("/configuration/rollback");
    err().println("kvsctl: rolled back in transaction " + reply.json().path("rollback").asLong(-1));
    return ExitCodes.OK;
  }
}
