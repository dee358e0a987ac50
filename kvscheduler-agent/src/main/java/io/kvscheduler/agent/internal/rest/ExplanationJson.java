package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.TxnOperation;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An {@link Explanation} as the JSON of {@code GET /scheduler/explain}: {@code key}, {@code state},
 * {@code reason} (the {@link Explanation.Reason} name), then only what the reason fills in — {@code
 * dependency}, {@code anyOfPrefixes}, {@code invalidFields}, {@code error}, {@code
 * failedOperation}, {@code cycle} — and {@code causes} (omitted when empty; below {@link
 * #MAX_DEPTH} levels, {@code causesNotShown} counts them instead).
 */
final class ExplanationJson {
  private ExplanationJson() {}

  /** Levels of causes written at most; deeper ones are counted in {@code causesNotShown}. */
  static final int MAX_DEPTH = 200;

  static Map<String, Object> of(Explanation e) {
    return of(e, 0);
  }

  private static Map<String, Object> of(Explanation e, int depth) {
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
      if (depth >= MAX_DEPTH) {
        // a chain thousands of values deep: JSON parsers refuse such nesting
        m.put("causesNotShown", e.causes().size());
      } else {
        m.put("causes", e.causes().stream().map(c -> of(c, depth + 1)).toList());
      }
    }
    return m;
  }
}
