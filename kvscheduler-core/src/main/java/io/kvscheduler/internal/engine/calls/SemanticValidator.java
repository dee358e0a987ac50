package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Validates values without a transaction ({@code validateSemantically}): each value, and the values
 * derived from it, against the descriptor that selects its key; one {@link KeyError} per failure.
 */
public final class SemanticValidator {
  private final Registry registry;

  public SemanticValidator(Registry registry) {
    this.registry = registry;
  }

  public List<KeyError> validate(List<KeyValuePair> values) {
    Objects.requireNonNull(values, "values");
    List<KeyError> out = new ArrayList<>();
    for (KeyValuePair kv : values) {
      validateOne(kv, out, true);
    }
    return out;
  }

  private void validateOne(KeyValuePair kv, List<KeyError> out, boolean base) {
    DescriptorHandle h = registry.forKey(kv.key());
    if (h == null || kv.value() == null) {
      return;
    }
    Throwable err = registry.ambiguity(kv.key());
    if (err == null) {
      err = h.validate(kv.key(), kv.value());
    }
    if (err != null) {
      out.add(ErrorKinds.keyError(kv.key(), TxnOperation.VALIDATE, err, ValueState.INVALID));
    }
    if (base) {
      DescriptorHandle.Result<List<KeyValuePair>> der = h.derivedValues(kv.key(), kv.value());
      if (der.failed()) {
        out.add(
            ErrorKinds.keyError(kv.key(), TxnOperation.VALIDATE, der.error(), ValueState.INVALID));
      } else {
        for (KeyValuePair d : der.value()) {
          validateOne(d, out, false);
        }
      }
    }
  }
}
