package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.internal.idxmap.NamedMappingImpl;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered descriptor with every callback guarded: exceptions thrown by user code never
 * escape to the engine. CRUD failures are returned as {@link Failure}s; failures of the pure
 * callbacks (label, comparator, dependencies, derived values) are logged and replaced by a safe
 * answer, or turned into an {@link InvalidValueException} when the value cannot be handled.
 */
final class DescriptorHandle {
  private static final Logger LOG = LoggerFactory.getLogger(DescriptorHandle.class);

  /** The global non-retriable errors (Create/Delete not implemented). */
  static final class NotImplementedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotImplementedException(String msg) {
      super(msg);
    }
  }

  final KVDescriptor<Object, Object> d;
  final String name;
  final NamedMappingImpl<Object> metadataMap;

  @SuppressWarnings("unchecked")
  DescriptorHandle(KVDescriptor<?, ?> descriptor) {
    this.d = (KVDescriptor<Object, Object>) descriptor;
    this.name = descriptor.name();
    this.metadataMap =
        descriptor.withMetadata() ? new NamedMappingImpl<>(name, d.metadataIndexes()) : null;
  }

  /** Result of a guarded callback: a value or the thrown error. */
  record Result<T>(T value, Throwable error) {
    boolean failed() {
      return error != null;
    }
  }

  static Throwable unwrapFatal(Throwable t) {
    if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
      throw (VirtualMachineError) t;
    }
    return t;
  }

  String label(String key) {
    if (d.keyLabel().isEmpty()) {
      return key;
    }
    try {
      String l = d.keyLabel().get().label(key);
      return l == null || l.isEmpty() ? key : l;
    } catch (Throwable t) {
      unwrapFatal(t);
      LOG.error("descriptor {}: keyLabel failed for key {}; using the key", name, key, t);
      return key;
    }
  }

  /** Type check + Validate. Returns the validation error or null. */
  Throwable validate(String key, Object value) {
    Throwable typeErr = checkType(key, value);
    if (typeErr != null) {
      return typeErr;
    }
    if (d.validate().isEmpty()) {
      return null;
    }
    try {
      d.validate().get().validate(key, value);
      return null;
    } catch (Throwable t) {
      return unwrapFatal(t);
    }
  }

  Throwable checkType(String key, Object value) {
    if (value != null && !d.valueType().isInstance(value)) {
      return new InvalidValueException(
          "value for key " + key + " is a " + value.getClass().getName() + " but descriptor "
              + name + " expects " + d.valueType().getName());
    }
    return null;
  }

  boolean equivalent(String key, Object oldValue, Object newValue) {
    if (oldValue == null || newValue == null) {
      return oldValue == newValue;
    }
    if (d.valueComparator().isEmpty() || checkType(key, oldValue) != null
        || checkType(key, newValue) != null) {
      return Objects.equals(oldValue, newValue);
    }
    try {
      return d.valueComparator().get().equivalent(key, oldValue, newValue);
    } catch (Throwable t) {
      unwrapFatal(t);
      LOG.error("descriptor {}: valueComparator failed for key {}; treating values as different",
          name, key, t);
      return false;
    }
  }

  /** True when a change must be applied by re-creation (no Update, or UpdateWithRecreate). */
  boolean updateWithRecreate(String key, Object oldValue, Object newValue, Object metadata) {
    if (d.update().isEmpty()) {
      return true;
    }
    if (d.updateWithRecreate().isEmpty()
        || checkType(key, oldValue) != null || checkType(key, newValue) != null) {
      return false;
    }
    try {
      return d.updateWithRecreate().get().updateWithRecreate(key, oldValue, newValue, metadata);
    } catch (Throwable t) {
      unwrapFatal(t);
      LOG.error("descriptor {}: updateWithRecreate failed for key {}; re-creating", name, key, t);
      return true;
    }
  }

  Result<List<Dependency>> dependencies(String key, Object value) {
    if (d.dependencies().isEmpty() || checkType(key, value) != null) {
      return new Result<>(List.of(), null);
    }
    try {
      List<Dependency> deps = d.dependencies().get().dependencies(key, value);
      if (deps == null) {
        return new Result<>(List.of(), null);
      }
      for (int i = 0; i < deps.size(); i++) {
        Dependency dep = deps.get(i);
        if (dep == null) {
          throw new IllegalStateException("null dependency");
        }
        for (int j = 0; j < i; j++) {
          if (deps.get(j).label().equals(dep.label())) {
            throw new IllegalStateException("dependency label '" + dep.label() + "' used twice");
          }
        }
      }
      return new Result<>(List.copyOf(deps), null);
    } catch (Throwable t) {
      unwrapFatal(t);
      return new Result<>(List.of(), new IllegalStateException(
          "descriptor " + name + ": dependencies callback failed for key " + key + ": " + t, t));
    }
  }

  Result<List<KeyValuePair>> derivedValues(String key, Object value) {
    if (d.derivedValues().isEmpty() || checkType(key, value) != null) {
      return new Result<>(List.of(), null);
    }
    try {
      List<KeyValuePair> kvs = d.derivedValues().get().derive(key, value);
      if (kvs == null) {
        return new Result<>(List.of(), null);
      }
      List<KeyValuePair> out = new ArrayList<>(kvs.size());
      for (KeyValuePair kv : kvs) {
        if (kv != null) {
          out.add(kv);
        }
      }
      return new Result<>(out, null);
    } catch (Throwable t) {
      unwrapFatal(t);
      return new Result<>(List.of(), new IllegalStateException(
          "descriptor " + name + ": derivedValues callback failed for key " + key + ": " + t, t));
    }
  }

  Result<Object> create(String key, Object value) {
    if (d.create().isEmpty()) {
      return new Result<>(null, new NotImplementedException(
          "descriptor " + name + ": operation Create is not implemented (key " + key + ")"));
    }
    try {
      return new Result<>(d.create().get().create(key, value), null);
    } catch (Throwable t) {
      return new Result<>(null, unwrapFatal(t));
    }
  }

  Result<Object> update(String key, Object oldValue, Object newValue, Object metadata) {
    if (d.update().isEmpty()) {
      return new Result<>(null, new NotImplementedException(
          "descriptor " + name + ": operation Update is not implemented (key " + key + ")"));
    }
    try {
      return new Result<>(d.update().get().update(key, oldValue, newValue, metadata), null);
    } catch (Throwable t) {
      return new Result<>(null, unwrapFatal(t));
    }
  }

  Throwable delete(String key, Object value, Object metadata) {
    if (d.delete().isEmpty()) {
      return new NotImplementedException(
          "descriptor " + name + ": operation Delete is not implemented (key " + key + ")");
    }
    try {
      d.delete().get().delete(key, value, metadata);
      return null;
    } catch (Throwable t) {
      return unwrapFatal(t);
    }
  }

  boolean canRetrieve() {
    return d.retrieve().isPresent();
  }

  Result<List<KVWithMetadata<Object, Object>>> retrieve(
      List<KVWithMetadata<Object, Object>> correlate) {
    if (d.retrieve().isEmpty()) {
      return new Result<>(null, new IllegalStateException(
          "descriptor " + name + " does not support Retrieve operation"));
    }
    try {
      List<KVWithMetadata<Object, Object>> r = d.retrieve().get().retrieve(correlate);
      return new Result<>(r == null ? List.of() : r, null);
    } catch (Throwable t) {
      return new Result<>(null, unwrapFatal(t));
    }
  }

  boolean isRetriable(Throwable err) {
    if (err instanceof NotImplementedException || err instanceof InvalidValueException) {
      return false;
    }
    if (d.isRetriableFailure().isEmpty()) {
      return true;
    }
    try {
      return d.isRetriableFailure().get().isRetriable(err);
    } catch (Throwable t) {
      unwrapFatal(t);
      LOG.error("descriptor {}: isRetriableFailure failed; treating error as non-retriable",
          name, t);
      return false;
    }
  }
}
