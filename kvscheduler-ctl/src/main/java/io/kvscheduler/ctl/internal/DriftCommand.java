package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code drift}: what a downstream resync would change ({@code GET /scheduler/drift}), changing
 * nothing; exits {@value #NONE} when the southbound holds the intent, {@value #DRIFT} when it has
 * drifted and {@value ExitCodes#FAILED} on any error (also a bad command line), as Terraform's
 * {@code plan -detailed-exitcode}, so that a cron job or CI can alarm on it.
 */
@Command(
    name = "drift",
    description = {
      "Shows what a downstream resync would change: the southbound read through the"
          + " descriptors' Retrieve and compared with the desired state; nothing is changed.",
      "Exit codes: 0 no drift, 2 drift, 1 error (for cron jobs and CI).",
      "Example: kvsctl drift -o json"
    })
public final class DriftCommand extends AgentCommand {
  /** The exit code when nothing drifted. */
  public static final int NONE = 0;

  /** The exit code when the southbound drifted from the desired state. */
  public static final int DRIFT = 2;

  @Mixin OutputFormat output;

  @Override
  protected int run() {
    JsonNode drift;
    try {
      drift = client().get("/scheduler/drift").json();
    } catch (CtlException e) {
      err().println("kvsctl: " + e.getMessage());
      return ExitCodes.FAILED; // whatever the cause: 2 says "drift"
    }
    boolean drifted = drift.path("drift").asBoolean();
    if (output.json()) {
      out().println(Json.pretty(drift));
    } else {
      out().println(drifted ? "drift: the southbound differs from the desired state" : "no drift");
      PlanPrinter.print(drift, out(), "");
    }
    return drifted ? DRIFT : NONE;
  }
}
