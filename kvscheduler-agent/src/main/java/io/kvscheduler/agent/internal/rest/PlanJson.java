package io.kvscheduler.agent.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.PlannedOperation;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A {@link Plan} as JSON, the answer of {@code PUT /configuration?dry-run} and of {@code GET
 * /scheduler/drift} (our extension of vpp-agent's API):
 *
 * <pre>{@code
 * {"operations": [
 *   {"key": "config/mock/v1/interfaces/tap1", "operation": "CREATE", "state": "PENDING",
 *    "details": ["bridge-domain"], "prevState": "NONEXISTENT", "value": {...}, "flags": ["NOOP"]},
 *   ...]}
 * }</pre>
 *
 * The operations are in execution order; {@code state} is the predicted state; {@code details}
 * names what a PENDING value waits for (the dependencies' labels) or an INVALID value's invalid
 * fields; {@code error} is an INVALID value's validation error; {@code value} (absent for a
 * deletion) is the value in protobuf JSON; {@code flags} the operation's recorded flags, lower
 * case, absent when none. The drift adds {@code "drift": true|false} first.
 */
public final class PlanJson {
  private static final ObjectMapper PLAIN = new ObjectMapper();

  private final ModelRegistry models;

  /** {@code models}: writes the values in protobuf JSON. */
  public PlanJson(ModelRegistry models) {
    this.models = models;
  }

  /** {@code {"operations": [...]}}. */
  public Map<String, Object> plan(Plan plan) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("operations", operations(plan));
    return m;
  }

  /** {@code {"drift": true|false, "operations": [...]}}: a downstream resync's plan. */
  public Map<String, Object> drift(Plan plan) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("drift", plan.hasChanges());
    m.put("operations", operations(plan));
    return m;
  }

  private List<Object> operations(Plan plan) {
    List<Object> out = new ArrayList<>(plan.size());
    for (PlannedOperation op : plan.operations()) {
      out.add(operation(op));
    }
    return out;
  }

  /** One operation, its fields in the documented order. */
  Map<String, Object> operation(PlannedOperation op) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("key", op.key());
    m.put("operation", op.operation().name());
    m.put("state", op.state().name());
    if (!op.details().isEmpty()) {
      m.put("details", op.details());
    }
    if (!op.error().isEmpty()) {
      m.put("error", op.error());
    }
    if (op.prevState() != ValueState.NONEXISTENT) {
      m.put("prevState", op.prevState().name());
    }
    op.value().ifPresent(v -> m.put("value", value(v)));
    if (!op.flags().isEmpty()) {
      List<String> flags = new ArrayList<>();
      for (RecordedTxnOp.Flag f : op.flags()) {
        flags.add(f.name().toLowerCase(Locale.ROOT));
      }
      m.put("flags", flags);
    }
    return m;
  }

  /** The value in protobuf JSON, or its text when no model knows it. */
  private JsonNode value(Object value) {
    try {
      return models.toTree(value, true);
    } catch (RuntimeException e) {
      return PLAIN.valueToTree(String.valueOf(value));
    }
  }
}
