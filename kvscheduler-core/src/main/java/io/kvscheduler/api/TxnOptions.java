package io.kvscheduler.api;

import java.util.Objects;
import java.util.Optional;

/**
 * Options of one NB transaction. Immutable; build with {@link #builder()} (or use {@link
 * #defaults()}), derive a variant with {@link #toBuilder()}:
 *
 * <pre>{@code
 * TxnOptions options = TxnOptions.builder()
 *     .description("resync from files")
 *     .resync(ResyncType.FULL)
 *     .retry(RetryOptions.DEFAULT)
 *     .build();
 * }</pre>
 *
 * <p>Defaults: no description, not a resync, no retry, best effort (no revert), no simulation
 * (unless the scheduler was built with simulation enabled), no verification (unless the scheduler
 * was built with {@link KVSchedulerBuilder#verifyMode}).
 */
public final class TxnOptions {
  private static final TxnOptions DEFAULTS = new Builder().build();

  private final String description;
  private final ResyncType resync;
  private final boolean verboseRefresh;
  private final RetryOptions retry;
  private final boolean revert;
  private final boolean simulation;
  private final boolean verify;

  private TxnOptions(Builder b) {
    this.description = b.description;
    this.resync = b.resync;
    this.verboseRefresh = b.verboseRefresh;
    this.retry = b.retry;
    this.revert = b.revert;
    this.simulation = b.simulation;
    this.verify = b.verify;
  }

  /** The default options. */
  public static TxnOptions defaults() {
    return DEFAULTS;
  }

  /** A builder starting from the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Free text shown in the record and the log; {@code ""} when none. */
  public String description() {
    return description;
  }

  /** Resync flavour; {@link ResyncType#NOT_RESYNC} for a plain change. */
  public ResyncType resync() {
    return resync;
  }

  /** Whether the refreshed graph of a resync is logged. */
  public boolean verboseRefresh() {
    return verboseRefresh;
  }

  /** Retry of failed operations; empty for none. */
  public Optional<RetryOptions> retry() {
    return Optional.ofNullable(retry);
  }

  /** Whether the whole transaction is undone when one of its values fails. */
  public boolean revert() {
    return revert;
  }

  /** Whether the transaction is planned without descriptor calls first, and the plan recorded. */
  public boolean simulation() {
    return simulation;
  }

  /**
   * Whether, after execution, the changed values are read back (Retrieve) and every value whose
   * southbound state differs from what was applied is reported as a failed key.
   */
  public boolean verify() {
    return verify;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TxnOptions t
        && description.equals(t.description)
        && resync == t.resync
        && verboseRefresh == t.verboseRefresh
        && Objects.equals(retry, t.retry)
        && revert == t.revert
        && simulation == t.simulation
        && verify == t.verify;
  }

  @Override
  public int hashCode() {
    return Objects.hash(description, resync, verboseRefresh, retry, revert, simulation, verify);
  }

  @Override
  public String toString() {
    return "TxnOptions[description="
        + description
        + ", resync="
        + resync
        + (verboseRefresh ? " (verbose)" : "")
        + ", retry="
        + retry().map(String::valueOf).orElse("none")
        + ", revert="
        + revert
        + ", simulation="
        + simulation
        + ", verify="
        + verify
        + "]";
  }

  /** Builder of {@link TxnOptions}; every setting starts at its default, stated on its method. */
  public static final class Builder {
    private String description = "";
    private ResyncType resync = ResyncType.NOT_RESYNC;
    private boolean verboseRefresh;
    private RetryOptions retry;
    private boolean revert;
    private boolean simulation;
    private boolean verify;

    private Builder() {}

    private Builder(TxnOptions o) {
      this.description = o.description;
      this.resync = o.resync;
      this.verboseRefresh = o.verboseRefresh;
      this.retry = o.retry;
      this.revert = o.revert;
      this.simulation = o.simulation;
      this.verify = o.verify;
    }

    /**
     * Free text shown in the record and the log. Default: {@code ""}.
     *
     * @throws NullPointerException if {@code description} is null
     */
    public Builder description(String description) {
      this.description = Objects.requireNonNull(description, "description");
      return this;
    }

    /**
     * Resync flavour. Default: {@link ResyncType#NOT_RESYNC}. A resync cannot be combined with
     * {@link #revert}, and a downstream resync carries no values (the commit throws {@link
     * IllegalArgumentException} otherwise).
     *
     * @throws NullPointerException if {@code type} is null
     */
    public Builder resync(ResyncType type) {
      this.resync = Objects.requireNonNull(type, "resync");
      return this;
    }

    /** Resync of flavour {@code type}; {@code verboseRefresh} logs the refreshed graph. */
    public Builder resync(ResyncType type, boolean verboseRefresh) {
      resync(type);
      this.verboseRefresh = verboseRefresh;
      return this;
    }

    /**
     * Retries failed operations as {@code options} say. Default: no retry.
     *
     * @throws NullPointerException if {@code options} is null ({@link RetryOptions#DEFAULT} for the
     *     defaults)
     */
    public Builder retry(RetryOptions options) {
      this.retry =
          Objects.requireNonNull(options, "retry options (RetryOptions.DEFAULT for the defaults)");
      return this;
    }

    /** Retries failed operations with vpp-agent's defaults ({@link RetryOptions#DEFAULT}). */
    public Builder retryWithDefaults() {
      return retry(RetryOptions.DEFAULT);
    }

    /** No retry of failed operations (the default). */
    public Builder noRetry() {
      this.retry = null;
      return this;
    }

    /** Undo the whole transaction when one of its values fails. Default: false (best effort). */
    public Builder revert(boolean revert) {
      this.revert = revert;
      return this;
    }

    /**
     * Plan the transaction without calling descriptors first, and record the plan. Default: false
     * (the scheduler's {@link KVSchedulerBuilder#enableTxnSimulation} applies anyway).
     */
    public Builder simulation(boolean simulation) {
      this.simulation = simulation;
      return this;
    }

    /**
     * Read changed values back after execution and report differences (verification mode). Default:
     * false (the scheduler's {@link KVSchedulerBuilder#verifyMode} applies anyway).
     */
    public Builder verify(boolean verify) {
      this.verify = verify;
      return this;
    }

    /** The options. */
    public TxnOptions build() {
      return new TxnOptions(this);
    }
  }
}
