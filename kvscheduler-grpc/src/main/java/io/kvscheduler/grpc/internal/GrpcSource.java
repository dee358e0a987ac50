package io.kvscheduler.grpc.internal;

import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.Plan;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The gRPC northbound source: delivers each request's values to the orchestrator as one transaction
 * of data source {@value #NAME}, and keeps the labels given with the values (the generic API's
 * {@code UpdateItem.labels}). A request with the metadata {@code confirm-within} (our extension) is
 * a confirmed commit ({@link ConfirmedCommits}), when the agent offers them.
 */
public final class GrpcSource {
  /** The data source label of values given over gRPC. */
  public static final String NAME = "grpc";

  private final Northbound northbound;
  private final Map<String, Map<String, String>> labels = new HashMap<>();
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
  public synchronized CompletableFuture<Long> change(
      Map<String, Object> changes, Map<String, Map<String, String>> newLabels) {
    Duration within = confirmWithin();
    changes.forEach(
        (key, value) -> {
          Map<String, String> l = newLabels.getOrDefault(key, Map.of());
          if (value == null || l.isEmpty()) {
            labels.remove(key);
          } else {
            labels.put(key, Map.copyOf(l));
          }
        });
    return within != null
        ? confirmations.commit(NAME, new LinkedHashMap<>(changes), false, within)
        : northbound.change(NAME, new LinkedHashMap<>(changes));
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
  public synchronized CompletableFuture<Long> resync(
      Map<String, Object> values, Map<String, Map<String, String>> newLabels) {
    Duration within = confirmWithin();
    labels.clear();
    values.forEach(
        (key, value) -> {
          Map<String, String> l = newLabels.getOrDefault(key, Map.of());
          if (value != null && !l.isEmpty()) {
            labels.put(key, Map.copyOf(l));
          }
        });
    return within != null
        ? confirmations.commit(NAME, new LinkedHashMap<>(values), true, within)
        : northbound.resync(NAME, new LinkedHashMap<>(values));
  }

  /** The labels given with {@code key}'s value, empty when none. */
  public synchronized Map<String, String> labels(String key) {
    return labels.getOrDefault(key, Map.of());
  }
}
