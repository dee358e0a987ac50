package io.kvscheduler.grpc.internal;

import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.Plan;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The gRPC northbound source: delivers each request's values to the orchestrator as one transaction
 * of data source {@value #NAME}, with the labels given with the values (the generic API's {@code
 * UpdateItem.labels}), which the orchestrator keeps with them. A request with the metadata {@code
 * confirm-within} (our extension) is a confirmed commit ({@link ConfirmedCommits}), when the agent
 * offers them.
 */
public final class GrpcSource {
  /** The data source label of values given over gRPC. */
  public static final String NAME = "grpc";

  private final Northbound northbound;
  private volatile ConfirmedCommits confirmations;

  public GrpcSource(Northbound northbound) {
    this.northbound = northbound;
  }

  /** Takes the requests with the metadata {@code confirm-within} as confirmed commits. */
  public void confirmations(ConfirmedCommits confirmations) {
    this.confirmations = confirmations;
  }

  /**
   * The current call's {@code confirm-within}, or null when it gave none.
   *
   * @throws io.grpc.StatusRuntimeException {@code INVALID_ARGUMENT} naming the metadata: not a
   *     duration, zero, over 1h, given with {@code dry-run}, or confirmed commits are off
   */
  private Duration confirmWithin() {
    ConfirmWithinHeader.Given given = ConfirmWithinHeader.current();
    if (given == null) {
      return null;
    }
    if (given.dryRun()) {
      throw Calls.invalid(
          "metadata '"
              + ConfirmedCommits.PARAMETER
              + "' cannot be given with 'dry-run': a plan applies nothing to confirm");
    }
    if (confirmations == null) {
      throw Calls.invalid(
          "metadata '" + ConfirmedCommits.PARAMETER + "': confirmed commits are off");
    }
    try {
      return ConfirmedCommits.parseWithin(given.confirmWithin());
    } catch (IllegalArgumentException e) {
      throw Calls.invalid("bad metadata: " + e.getMessage());
    }
  }

  /** The orchestrator. */
  public Northbound northbound() {
    return northbound;
  }

  /**
   * Changes values (a null value removes the key) in one transaction; the labels of each key given
   * are replaced by {@code newLabels}'s (none when absent).
   */
  public CompletableFuture<Long> change(
      Map<String, Object> changes, Map<String, Map<String, String>> newLabels) {
    Duration within = confirmWithin();
    return within != null
        ? confirmations.commit(NAME, new LinkedHashMap<>(changes), newLabels, false, within)
        : northbound.change(NAME, new LinkedHashMap<>(changes), newLabels);
  }

  /** The plan of {@link #change} with {@code changes}: nothing changes, labels included. */
  public Plan planChange(Map<String, Object> changes) {
    return northbound.planChange(NAME, new LinkedHashMap<>(changes));
  }

  /** The plan of {@link #resync} with {@code values}: nothing changes, labels included. */
  public Plan planResync(Map<String, Object> values) {
    return northbound.planResync(NAME, new LinkedHashMap<>(values));
  }

  /** Replaces every value of this source with {@code values} (a full resync). */
  public CompletableFuture<Long> resync(
      Map<String, Object> values, Map<String, Map<String, String>> newLabels) {
    Duration within = confirmWithin();
    return within != null
        ? confirmations.commit(NAME, new LinkedHashMap<>(values), newLabels, true, within)
        : northbound.resync(NAME, new LinkedHashMap<>(values), newLabels);
  }

  /**
   * The labels given with the value the orchestrator has for {@code key}, empty when none: kept
   * with the value (in the state store too), so they are gone with it and back after a restart.
   */
  public Map<String, String> labels(String key) {
    return northbound.labels(key);
  }
}
