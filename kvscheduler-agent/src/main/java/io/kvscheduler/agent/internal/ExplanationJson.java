package io.kvscheduler.agent.internal;

import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.TxnOperation;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An {@link Explanation} as the JSON of {@code GET /scheduler/explain}: {@code key}, {@code
 * state}, {@code reason} (the {@link Explanation.Reason} name), then only what the reason fills
 * in — {@code dependency}, {@code anyOfPrefixes}, {@code invalidFields}, {@code error}, {@code
 * failedOperation}, {@code cycle} — and {@code causes} (omitted when empty).
 */
final class ExplanationJson {
  private ExplanationJson() {}

  static Map<String, Object> of(Explanation e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("key", e.key());
    m.put("state", e.state().name());
    m.put("reason", e.reason().name());
    if (!e.dependency().isEmpty()) {
      m.put("dependency", e.dependency());
    }
    if (!e.anyOfPrefixes().isEmpty()) {
      m.put("anyOfPrefixes", e.anyOfPrefixes());
    }
    if (!e.invalidFields().isEmpty()) {
      m.put("invalidFields", e.invalidFields());
    }
    if (!e.error().isEmpty()) {
      m.put("error", e.error());
    }
    if (e.failedOperation() != TxnOperation.UNDEFINED) {
      m.put("failedOperation", e.failedOperation().name());
    }
    if (!e.cycle().isEmpty()) {
      m.put("cycle", e.cycle());
    }
    if (!e.causes().isEmpty()) {
      m.put("causes", e.causes().stream().map(ExplanationJson::of).toList());
    }
    return m;
  }
}
