package io.kvscheduler.ctl.internal;

import picocli.CommandLine.Command;

/** {@code config confirm}: confirms the pending confirmed commit. */
@Command(
    name = "confirm",
    description = {
      "Confirms the commit made with 'kvsctl config put --confirm-within': the agent keeps it"
          + " (the agent's POST /configuration/confirm). Fails when none is pending.",
      "Example: kvsctl config confirm"
    })
public final class ConfigConfirmCommand extends AgentCommand {
  @Override
  protected int run() {
    AgentClient.Reply reply = client().post("/configuration/confirm");
    err()
        .println(
            "kvsctl: "
                + reply.json().path("confirmed").path("description").asText("the commit")
                + ": confirmed");
    return ExitCodes.OK;
  }
}
