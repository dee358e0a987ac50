package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.OperationListener;
import io.kvscheduler.api.OperationTimeoutException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.graph.DerivedOrder;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.idxmap.NamedMappingImpl;
import io.kvscheduler.internal.util.UserCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered descriptor with every callback guarded: exceptions thrown by user code never escape
 * to the engine. Its southbound calls (Create, Update, Delete) go through {@link SbCallChain},
 * whose links guard them and return failures as failed {@link Result}s; failures of the pure
 * callbacks (label, comparator, dependencies, derived values) are logged and replaced by a safe
 * answer, or turned into an {@link InvalidValueException} when the value cannot be handled.
 *
 * <p>Longer than our usual limit on purpose: it is one guard per descriptor callback (a dozen of
 * them), each a few lines of the same shape (call, contain what the user code threw, check what it
 * returned, say which callback and key failed), plus the memo of the pure callbacks' answers. Split
 * apart, each guard would sit away from the callback it guards without making either clearer.
 */
public final class DescriptorHandle implements Node.HandleRef {
  private static final Logger LOG = LoggerFactory.getLogger(DescriptorHandle.class);

  /** The global non-retriable errors (Create/Delete not implemented). */
  public static final class NotImplementedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotImplementedException(String msg) {
      super(msg);
    }
  }

  public final KVDescriptor<Object, Object> descriptor;
  public final String name;
  public final NamedMappingImpl<Object> metadataMap;
  // the descriptor's callbacks, read once (null when absent): no Optional per call
  private final Class<Object> valueType;
  private final KVDescriptor.KeyLabel keyLabel;
  private final KVDescriptor.Equivalence<Object> comparator;
  private final KVDescriptor.Validator<Object> validator;
  // the southbound callbacks, called through the chain of links that guards them (SbCallChain)
  final KVDescriptor.Creator<Object, Object> creator;
  final KVDescriptor.Updater<Object, Object> updater;
  final KVDescriptor.Deleter<Object, Object> deleter;
  private final KVDescriptor.RecreateDecider<Object, Object> recreateDecider;
  private final KVDescriptor.Retriever<Object, Object> retriever;
  private final KVDescriptor.RetriableFailure retriableFailure;
  private final KVDescriptor.DerivedValues<Object> deriver;
  private final KVDescriptor.Dependencies<Object> dependencies;

  /** Limit of one southbound call (null: none, the call runs on the engine thread). */
  final Duration timeout;

  /** The call threads of the limited calls. */
  final SbCalls calls;

  /** Told of each southbound call. */
  final Observer observer;

  private static final Result<List<Dependency>> NO_DEPENDENCIES = new Result<>(List.of(), null);
  private static final Result<List<KeyValuePair>> NO_DERIVED = new Result<>(List.of(), null);

  /** A successful call that returned no metadata (the usual case). */
  private static final Result<Object> NO_METADATA = new Result<>(null, null);

  /**
   * A handle whose southbound calls are limited to the descriptor's operation timeout, else {@code
   * defaultTimeout} (null: no limit); limited calls run through {@code calls}; each call is told
   * {@code observer}.
   */
  @SuppressWarnings("unchecked")
  DescriptorHandle(
      KVDescriptor<?, ?> given, Duration defaultTimeout, SbCalls calls, Observer observer) {
    this.descriptor = (KVDescriptor<Object, Object>) given;
    this.name = given.name();
    this.metadataMap =
        descriptor.withMetadata()
            ? new NamedMappingImpl<>(name, descriptor.metadataIndexes())
            : null;
    this.valueType = descriptor.valueType();
    this.keyLabel = descriptor.keyLabel().orElse(null);
    this.comparator = descriptor.equivalence().orElse(null);
    this.validator = descriptor.validate().orElse(null);
    this.creator = descriptor.create().orElse(null);
    this.updater = descriptor.update().orElse(null);
    this.deleter = descriptor.delete().orElse(null);
    this.recreateDecider = descriptor.updateWithRecreate().orElse(null);
    this.retriever = descriptor.retrieve().orElse(null);
    this.retriableFailure = descriptor.isRetriableFailure().orElse(null);
    this.deriver = descriptor.derivedValues().orElse(null);
    this.dependencies = descriptor.dependencies().orElse(null);
    this.timeout = calls == null ? null : descriptor.operationTimeout().orElse(defaultTimeout);
    this.calls = calls;
    this.observer = observer;
  }

  /**
   * Runs a southbound callback on a call thread with the descriptor's time limit (callers without a
   * limit call the callback directly, on the engine thread).
   */
  private <T> T limited(Callable<T> call, String operation, String key) throws Exception {
    return calls.call(
        call, timeout, () -> new OperationTimeoutException(name, operation, key, timeout), key);
  }

  /**
   * True once the scheduler was closed and its call threads stopped: the engine thread, if it still
   * runs, was given up on, and makes no southbound call any more.
   */
  boolean closed() {
    return calls != null && calls.isClosed();
  }

  /** The failure of a southbound call not made because the scheduler was closed. */
  static IllegalStateException closedError(String descriptor) {
    return new IllegalStateException(
        "scheduler was closed: descriptor " + descriptor + " is not called any more");
  }

  /** Result of a guarded callback: a value or the thrown error. */
  public record Result<T>(T value, Throwable error) {
    public boolean failed() {
      return error != null;
    }

    /** A success with {@code metadata}: the shared instance when there is none. */
    static Result<Object> ofMetadata(Object metadata) {
      return metadata == null ? NO_METADATA : new Result<>(metadata, null);
    }
  }

  public String label(String key) {
    if (keyLabel == null) {
      return key;
    }
    try {
      String l = keyLabel.label(key);
      return l == null || l.isEmpty() ? key : l;
    } catch (Throwable t) {
      t = UserCode.contained(t);
      LOG.error("descriptor {}: keyLabel failed for key {}; using the key", name, key, t);
      return key;
    }
  }

  /** Type check + Validate. Returns the validation error or null. */
  public Throwable validate(String key, Object value) {
    Throwable typeErr = checkType(key, value);
    if (typeErr != null) {
      return typeErr;
    }
    if (validator == null) {
      return null;
    }
    try {
      validator.validate(key, value);
      return null;
    } catch (Throwable t) {
      return UserCode.contained(t);
    }
  }

  Throwable checkType(String key, Object value) {
    if (value != null && !valueType.isInstance(value)) {
      return new InvalidValueException(
          "value for key "
              + key
              + " is a "
              + value.getClass().getName()
              + " but descriptor "
              + name
              + " expects "
              + descriptor.valueType().getName());
    }
    return null;
  }

  /**
   * Null, or the error for metadata that is not of the class the descriptor declared (it can get
   * there only through an unchecked cast in user code; kept, it would fail later, in a reader's or
   * callback's cast, naming no key). {@code from}: what produced it, e.g. "Create".
   */
  Throwable checkMetadata(String key, Object metadata, String from) {
    Class<?> declared = descriptor.metadataType();
    if (metadata != null
        && descriptor.withMetadata()
        && !declared.isPrimitive()
        && !declared.isInstance(metadata)) {
      return new ContractException(
          "descriptor "
              + name
              + ": "
              + from
              + " gave metadata of class "
              + metadata.getClass().getName()
              + " for key "
              + key
              + ", but the descriptor declares metadata of class "
              + declared.getName());
    }
    return null;
  }

  /**
   * Null, or the error for a value found in the southbound (retrieved or notified, {@code from})
   * whose value or metadata is not of the descriptor's class: {@link #checkType}, then {@link
   * #checkMetadata}.
   */
  public Throwable checkFound(String key, Object value, Object metadata, String from) {
    Throwable wrong = checkType(key, value);
    return wrong != null ? wrong : checkMetadata(key, metadata, from);
  }

  public boolean equivalent(String key, Object oldValue, Object newValue) {
    if (oldValue == null || newValue == null) {
      return oldValue == newValue;
    }
    if (comparator == null
        || checkType(key, oldValue) != null
        || checkType(key, newValue) != null) {
      return equalValues(key, oldValue, newValue);
    }
    try {
      return comparator.equivalent(key, oldValue, newValue);
    } catch (Throwable t) {
      t = UserCode.contained(t);
      LOG.error(
          "descriptor {}: equivalence failed for key {}; treating values as different",
          name,
          key,
          t);
      return false;
    }
  }

  /** Whether the descriptor decides equivalence with a comparator of its own (else: equals). */
  public boolean hasComparator() {
    return comparator != null;
  }

  /**
   * {@code Objects.equals} of two values of {@code key}, guarded: a value's {@code equals} is user
   * code, and when it throws the values are treated as different (and the failure logged).
   */
  public static boolean equalValues(String key, Object a, Object b) {
    if (a == b) {
      return true;
    }
    if (a == null || b == null) {
      return false;
    }
    try {
      return a.equals(b);
    } catch (Throwable t) {
      t = UserCode.contained(t);
      LOG.error("equals of two values of key {} failed; treating them as different", key, t);
      return false;
    }
  }

  /**
   * Called once {@link #equivalent} found {@code newValue} equivalent to {@code oldValue}, the
   * value of {@code n}: when that was decided by {@code equals} (no comparator) between values of
   * one class, the answers remembered in {@code n} for {@code oldValue} are the answers for {@code
   * newValue} too, and now match it by identity (asking for them calls no second {@code equals};
   * for a large value, such as a list of thousands of entries, that is a second pass over it).
   */
  public void rememberEqual(Node n, Object oldValue, Object newValue) {
    if (comparator == null
        && n.memoHandle() == this
        && n.memoValue() == oldValue
        && oldValue != null
        && newValue != null
        && oldValue.getClass() == newValue.getClass()) {
      n.setMemoValue(newValue);
    }
  }

  /** True when a change must be applied by re-creation (no Update, or UpdateWithRecreate). */
  public boolean updateWithRecreate(String key, Object oldValue, Object newValue, Object metadata) {
    if (updater == null) {
      return true;
    }
    if (recreateDecider == null
        || checkType(key, oldValue) != null
        || checkType(key, newValue) != null) {
      return false;
    }
    try {
      return recreateDecider.updateWithRecreate(key, oldValue, newValue, metadata);
    } catch (Throwable t) {
      t = UserCode.contained(t);
      LOG.error("descriptor {}: updateWithRecreate failed for key {}; re-creating", name, key, t);
      return true;
    }
  }

  private Result<List<Dependency>> dependencies(String key, Object value) {
    if (dependencies == null || checkType(key, value) != null) {
      return NO_DEPENDENCIES;
    }
    List<Dependency> deps;
    String wrong; // what breaks the callback's contract in its answer, or null
    try {
      deps = dependencies.dependencies(key, value);
      if (deps == null || deps.isEmpty()) {
        return NO_DEPENDENCIES;
      }
      wrong = contractBreach(deps); // read inside the guard: the list is user code too
      if (wrong == null) {
        deps = List.copyOf(deps); // no copy of an immutable list
      }
    } catch (Throwable t) {
      t = UserCode.contained(t);
      return new Result<>(
          List.of(),
          new IllegalStateException(
              "descriptor " + name + ": dependencies callback failed for key " + key + ": " + t,
              t));
    }
    if (wrong != null) {
      // the callback answered, wrongly: said as such, not as a failed callback
      return new Result<>(
          List.of(),
          new IllegalStateException(
              "descriptor " + name + ": dependencies of key " + key + ": " + wrong));
    }
    return new Result<>(deps, null);
  }

  /** Null, or what is wrong with a dependency list: a null entry or a label used twice. */
  private static String contractBreach(List<Dependency> deps) {
    for (int i = 0; i < deps.size(); i++) {
      Dependency dep = deps.get(i);
      if (dep == null) {
        return "a null dependency";
      }
      for (int j = 0; j < i; j++) {
        if (deps.get(j).label().equals(dep.label())) {
          return "dependency label '" + dep.label() + "' used twice";
        }
      }
    }
    return null;
  }

  /**
   * True when the answers remembered in {@code n} were given by this descriptor for a value equal
   * to {@code value}; {@code value} then becomes the remembered one (a later call with it matches
   * by identity). Otherwise the memo is restarted for {@code value}, with no answer yet.
   */
  private boolean remembers(Node n, Object value) {
    Object m = n.memoValue();
    if (n.memoHandle() == this
        && m != null
        && (m == value
            || value != null
                && m.getClass() == value.getClass()
                && equalValues(n.key(), m, value))) {
      n.setMemoValue(value);
      return true;
    }
    n.restartMemo(this, value);
    return false;
  }

  /**
   * {@link #dependencies(String, Object)} of {@code n}'s key for {@code value}, remembered in the
   * node: an equal value gets the same answer without a call. Failures are not remembered.
   */
  @SuppressWarnings("unchecked")
  public Result<List<Dependency>> dependencies(Node n, Object value) {
    if (dependencies == null || checkType(n.key(), value) != null) {
      return NO_DEPENDENCIES;
    }
    if (remembers(n, value) && n.memoDeps() != null) {
      return new Result<>(n.memoDeps(), null); // the list is kept, not the wrapper
    }
    Result<List<Dependency>> r = dependencies(n.key(), value);
    if (!r.failed()) {
      n.setMemoDeps(r.value());
    }
    return r;
  }

  /**
   * The derived values of {@code n}'s key for {@code value}, sorted by key with duplicates, null
   * values and the base key itself left out ({@link DerivedOrder#sortedUnique}); remembered in the
   * node like {@link #dependencies(Node, Object)}.
   */
  @SuppressWarnings("unchecked")
  public Result<List<KeyValuePair>> derivedSorted(Node n, Object value) {
    if (deriver == null || checkType(n.key(), value) != null) {
      return NO_DERIVED;
    }
    if (remembers(n, value) && n.memoDerived() != null) {
      return new Result<>(n.memoDerived(), null);
    }
    Result<List<KeyValuePair>> r = derivedValues(n.key(), value);
    if (!r.failed()) {
      List<KeyValuePair> given = r.value();
      r =
          given.isEmpty()
              ? NO_DERIVED
              : new Result<>(DerivedOrder.sortedUnique(given, n.key()), null);
      if (r.value().size() < given.size()) {
        LOG.warn(
            "descriptor {}: derivedValues for key {} gave {} entries that were dropped: {}",
            name,
            n.key(),
            given.size() - r.value().size(),
            DerivedOrder.dropped(given, n.key()));
      }
      n.setMemoDerived(r.value());
    }
    return r;
  }

  public Result<List<KeyValuePair>> derivedValues(String key, Object value) {
    if (deriver == null || checkType(key, value) != null) {
      return NO_DERIVED;
    }
    try {
      List<KeyValuePair> kvs = deriver.derive(key, value);
      if (kvs == null || kvs.isEmpty()) {
        return NO_DERIVED;
      }
      // copied here, inside the guard: the list is user code too (it may fail while read, or
      // change later); one array copy, then the null entries dropped (checked in ranges: Bulk)
      KeyValuePair[] a = kvs.toArray(new KeyValuePair[0]);
      int kept = 0;
      for (int i = 0; i < a.length; i += Bulk.RANGE) {
        kept = dropNulls(a, i, Bulk.end(i, a.length), kept);
      }
      if (kept < a.length) {
        LOG.warn(
            "descriptor {}: derivedValues for key {} gave {} null entries; skipped",
            name,
            key,
            a.length - kept);
      }
      return new Result<>(Arrays.asList(a).subList(0, kept), null);
    } catch (Throwable t) {
      t = UserCode.contained(t);
      return new Result<>(
          List.of(),
          new IllegalStateException(
              "descriptor " + name + ": derivedValues callback failed for key " + key + ": " + t,
              t));
    }
  }

  /** Moves the non-null entries of {@code a[from, to)} to the front; returns the new count. */
  private static int dropNulls(KeyValuePair[] a, int from, int to, int kept) {
    for (int i = from; i < to; i++) {
      if (a[i] != null) {
        a[kept++] = a[i];
      }
    }
    return kept;
  }

  /** True when the descriptor has the callback of southbound operation {@code op}. */
  boolean canCall(TxnOperation op) {
    return switch (op) {
      case CREATE -> creator != null;
      case UPDATE -> updater != null;
      case DELETE -> deleter != null;
      default -> false;
    };
  }

  public boolean canRetrieve() {
    return retriever != null;
  }

  public Result<List<KVWithMetadata<Object, Object>>> retrieve(
      List<KVWithMetadata<Object, Object>> correlate) {
    if (retriever == null) {
      return new Result<>(
          null,
          new IllegalStateException("descriptor " + name + " does not support Retrieve operation"));
    }
    long started = observer.now();
    Result<List<KVWithMetadata<Object, Object>>> r = retrieveGuarded(correlate);
    if (observer.active()) {
      observer.callEnded(name, OperationListener.Call.RETRIEVE, null, started, r.error());
    }
    return r;
  }

  private Result<List<KVWithMetadata<Object, Object>>> retrieveGuarded(
      List<KVWithMetadata<Object, Object>> correlate) {
    if (closed()) {
      return new Result<>(null, closedError(name));
    }
    try {
      List<KVWithMetadata<Object, Object>> r =
          timeout == null
              ? retriever.retrieve(correlate)
              : limited(() -> retriever.retrieve(correlate), "Retrieve", null);
      if (r == null) {
        // most likely a bug, not an empty southbound: taken as "empty", the resync would create
        // every value again over what the southbound holds
        return new Result<>(
            null,
            new ContractException(
                "descriptor "
                    + name
                    + ": Retrieve returned null instead of a list (an empty list says that the"
                    + " southbound holds nothing)"));
      }
      // copied inside the guard: the returned list is user code too (read later, by index)
      return new Result<>(new ArrayList<>(r), null);
    } catch (Throwable t) {
      return new Result<>(null, UserCode.contained(t));
    }
  }

  /**
   * The descriptor's own answer whether {@code err} is retriable ({@code isRetriableFailure}; true
   * without one, false when it throws). The rules around it are {@code FailurePolicy.isRetriable}.
   */
  public boolean retriableByDescriptor(Throwable err) {
    if (retriableFailure == null) {
      return true;
    }
    try {
      return retriableFailure.isRetriable(err);
    } catch (Throwable t) {
      t = UserCode.contained(t);
      LOG.error(
          "descriptor {}: isRetriableFailure failed; treating error as non-retriable", name, t);
      return false;
    }
  }
}
