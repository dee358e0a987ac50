package io.kvscheduler.api;

/**
 * The kind of a processed transaction. Serialised by its {@link #jsonName()} (as in vpp-agent's
 * REST API); {@link #fromJson(String)} accepts the name or the numeric code.
 */
public enum TxnType {
  SB_NOTIFICATION("SBNotification", 0),
  NB_TRANSACTION("NBTransaction", 1),
  RETRY_FAILED_OPS("RetryFailedOps", 2),
  RETRY_UNIMPL_OPS("RetryUnimplOps", 3),
  /** An unknown name or code read from JSON (code -1). */
  UNDEFINED("UndefinedTxnType", -1);

  private final String jsonName;
  private final int code;

  TxnType(String jsonName, int code) {
    this.jsonName = jsonName;
    this.code = code;
  }

  /** The name used in JSON and in the transaction log, e.g. {@code NBTransaction}. */
  public String jsonName() {
    return jsonName;
  }

  /** The numeric code of vpp-agent's enum. */
  public int code() {
    return code;
  }

  /**
   * Reads a JSON token leniently: a symbolic name ({@code "NBTransaction"}), the Java constant
   * name, or an integer code. Anything else gives {@link #UNDEFINED}; this never throws.
   */
  public static TxnType fromJson(String token) {
    return EnumNames.parse(TxnType.class, token, UNDEFINED);
  }

  @Override
  public String toString() {
    return jsonName;
  }
}
