package io.kvscheduler.api;

import java.util.Objects;
import java.util.Optional;

/**
 * Options of one NB transaction. Immutable; start from {@link #defaults()} and derive variants
 * with the {@code with*} methods.
 *
 * <p>Defaults: no description, not a resync, blocking, no retry, best effort (no revert), no
 * simulation (unless the scheduler was built with simulation enabled).
 *
 * @param description free text shown in the record and the log
 * @param resync resync flavour
 * @param verboseRefresh log the refreshed graph of a resync
 * @param nonBlocking commit returns at once instead of waiting for the result
 * @param retry retry of failed operations, empty for none
 * @param revert undo the whole transaction when one of its values fails
 * @param simulation plan the transaction without calling descriptors first, and record the plan
 * @param verify after execution, read the changed values back (Retrieve) and report every value
 *     whose southbound state differs from what was applied as a failed key
 */
public record TxnOptions(
    String description,
    ResyncType resync,
    boolean verboseRefresh,
    boolean nonBlocking,
    Optional<RetryOptions> retry,
    boolean revert,
    boolean simulation,
    boolean verify) {

  private static final TxnOptions DEFAULTS =
      new TxnOptions("", ResyncType.NOT_RESYNC, false, false, Optional.empty(), false, false,
          false);

  public TxnOptions {
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(resync, "resync");
    Objects.requireNonNull(retry, "retry");
  }

  /** The default options. */
  public static TxnOptions defaults() {
    return DEFAULTS;
  }

  public TxnOptions withDescription(String d) {
    return new TxnOptions(d, resync, verboseRefresh, nonBlocking, retry, revert, simulation,
        verify);
  }

  public TxnOptions withResync(ResyncType r) {
    return withResync(r, verboseRefresh);
  }

  /** Resync of flavour {@code r}; {@code verbose} logs the refreshed graph. */
  public TxnOptions withResync(ResyncType r, boolean verbose) {
    return new TxnOptions(description, r, verbose, nonBlocking, retry, revert, simulation,
        verify);
  }

  public TxnOptions withNonBlocking(boolean nb) {
    return new TxnOptions(description, resync, verboseRefresh, nb, retry, revert, simulation,
        verify);
  }

  public TxnOptions withRetry(RetryOptions r) {
    java.util.Objects.requireNonNull(r, "retry options (RetryOptions.DEFAULT for the defaults)");
    return new TxnOptions(description, resync, verboseRefresh, nonBlocking, Optional.of(r),
        revert, simulation, verify);
  }

  /** Retry with vpp-agent's defaults ({@link RetryOptions#DEFAULT}). */
  public TxnOptions withRetryDefault() {
    return withRetry(RetryOptions.DEFAULT);
  }

  public TxnOptions withRevert(boolean r) {
    return new TxnOptions(description, resync, verboseRefresh, nonBlocking, retry, r, simulation,
        verify);
  }

  public TxnOptions withSimulation(boolean s) {
    return new TxnOptions(description, resync, verboseRefresh, nonBlocking, retry, revert, s,
        verify);
  }

  /** Read changed values back after execution and report differences (verification mode). */
  public TxnOptions withVerify(boolean v) {
    return new TxnOptions(description, resync, verboseRefresh, nonBlocking, retry, revert,
        simulation, v);
  }
}
