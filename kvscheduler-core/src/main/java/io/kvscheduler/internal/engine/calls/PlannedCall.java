package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.TxnOperation;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One southbound call (Create, Update or Delete) of a {@link CallPlan}: what the walk will ask,
 * which calls must return before it may start, and, once run ahead of the walk, what it returned.
 *
 * <p>States: PLANNED → RUNNING → DONE (returned: {@link #error} null or not), or PLANNED → SKIPPED
 * (a call it waits for failed, or the run stopped). Only DONE calls are handed to the walk.
 */
public final class PlannedCall {
  enum Status {
    PLANNED,
    RUNNING,
    DONE,
    SKIPPED
  }

  /** Position in the order of the sequential walk (negative for a join point). */
  final int index;

  public final TxnOperation op;
  public final DescriptorHandle handle;
  public final String key;

  /** The base key of {@link #key} (itself for a base value). */
  public final String baseKey;

  /** The key under which the descriptor's metadata map holds the value's metadata. */
  final String label;

  /** True when the call's outcome changes the descriptor's metadata map (a base value's). */
  final boolean keepsMetadata;

  /** Create: the value; Update: the new value; Delete: the object the southbound holds. */
  public final Object value;

  /** Update: the value the southbound holds before it. */
  public final Object oldValue;

  /** Update and Delete: the metadata passed to the call, unless {@link #metadataFrom} is set. */
  final Object metadata;

  /** An earlier call for the same key whose returned metadata this call is passed, or null. */
  final PlannedCall metadataFrom;

  /** Calls that may start only after this one returned. */
  final List<PlannedCall> next = new ArrayList<>(2);

  /** Calls this one still waits for. */
  int waitingFor;

  Status status = Status.PLANNED;

  /** What a DONE Create or Update returned (its metadata), or null. */
  Object returnedMetadata;

  /** What the undo of a DONE call (an Update back, a Create again) returned (its metadata). */
  public Object undoMetadata;

  /** What a DONE call failed with, or null. */
  public Throwable error;

  public Instant started;
  public Instant ended;

  PlannedCall(
      int index,
      TxnOperation op,
      DescriptorHandle handle,
      String key,
      String baseKey,
      String label,
      boolean keepsMetadata,
      Object value,
      Object oldValue,
      Object metadata,
      PlannedCall metadataFrom) {
    this.index = index;
    this.op = op;
    this.handle = handle;
    this.key = key;
    this.baseKey = baseKey;
    this.label = label;
    this.keepsMetadata = keepsMetadata;
    this.value = value;
    this.oldValue = oldValue;
    this.metadata = metadata;
    this.metadataFrom = metadataFrom;
  }

  /** A join point: no call, done once everything it waits for is done ({@code n}: its number). */
  static PlannedCall join(int n) {
    return new PlannedCall(
        -1 - n, TxnOperation.UNDEFINED, null, "", "", "", false, null, null, null, null);
  }

  boolean isJoin() {
    return op == TxnOperation.UNDEFINED;
  }

  /** Makes {@code later} wait for this call (once, however often asked). */
  void before(PlannedCall later) {
    if (later == this || !next.isEmpty() && next.get(next.size() - 1) == later) {
      return; // a repeated link would only be counted twice on both sides: harmless
    }
    next.add(later);
    later.waitingFor++;
  }

  /** The metadata the call is passed: the earlier call's answer when it has one. */
  Object metadataArgument() {
    return metadataFrom != null ? metadataFrom.returnedMetadata : metadata;
  }

  /** Runs the call on the current thread; sets the outcome. */
  void run(Clock clock) {
    started = clock.instant();
    DescriptorHandle.Result<Object> r =
        SbCallChain.DIRECT.call(
            SbCall.direct(op, handle, key, value, oldValue, metadataArgument()));
    returnedMetadata = r.value();
    error = r.error();
    ended = clock.instant();
  }

  /** A Create's or Update's outcome as the walk reads it. */
  DescriptorHandle.Result<Object> result() {
    return error != null
        ? new DescriptorHandle.Result<>(null, error)
        : DescriptorHandle.Result.ofMetadata(returnedMetadata);
  }

  @Override
  public String toString() {
    return "#" + index + " " + op + " " + key + " (" + status + ")";
  }
}
