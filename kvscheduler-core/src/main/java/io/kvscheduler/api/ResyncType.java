package io.kvscheduler.api;

/**
 * The resync flavour of an NB transaction. Serialised by its {@link #jsonName()}; {@link
 * #fromJson(String)} accepts the name or the numeric code and maps unknown input to {@link
 * #NOT_RESYNC}.
 */
public enum ResyncType {
  /** A plain change transaction. */
  NOT_RESYNC("NotResync", 0),
  /** Refresh the southbound, then make it equal to the given NB values (others are removed). */
  FULL("FullResync", 1),
  /** Make the graph equal to the given NB values without refreshing the southbound. */
  UPSTREAM("UpstreamResync", 2),
  /** Refresh the southbound and re-apply the scheduler's own NB intent (no values allowed). */
  DOWNSTREAM("DownstreamResync", 3);

  private final String jsonName;
  private final int code;

  ResyncType(String jsonName, int code) {
    this.jsonName = jsonName;
    this.code = code;
  }

  /** The name used in JSON and in the transaction log, e.g. {@code FullResync}. */
  public String jsonName() {
    return jsonName;
  }

  /** The numeric code of vpp-agent's enum. */
  public int code() {
    return code;
  }

  /** Reads a JSON token leniently; unknown input gives {@link #NOT_RESYNC}, never an exception. */
  public static ResyncType fromJson(String token) {
    return EnumNames.parse(ResyncType.class, token, NOT_RESYNC);
  }

  @Override
  public String toString() {
    return jsonName;
  }
}
