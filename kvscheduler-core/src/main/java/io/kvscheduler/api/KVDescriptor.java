package io.kvscheduler.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Describes one kind of value for the scheduler: which keys it owns, how to create, update, delete
 * and retrieve such values in the southbound, what they depend on and what is derived from them.
 * Descriptors are stateless; run-time state lives in metadata kept by the scheduler.
 *
 * <p>Built with {@link #builder(String, Class)}; immutable. {@code V} is the value class (a Java
 * record is the natural choice: its {@code equals} is the default equivalence), {@code M} the
 * metadata class ({@code Void} without metadata).
 *
 * <p><b>Callbacks</b> run on the scheduler's engine thread, one at a time. They may throw: an
 * exception fails that value only (FAILED or RETRYING with the exception in its status); the engine
 * keeps running. A callback cannot wait for a transaction it commits itself: it commits with {@link
 * Txn#commitAsync}, whose future completes when the transaction has run, after the current one
 * ({@link Txn#commit} throws there).
 *
 * <pre>{@code
 * KVDescriptor<Route, Void> routes = KVDescriptor.builder("route", Route.class)
 *     .nbKeyPrefix("config/routes/")
 *     .createWithoutMetadata((key, route) -> sb.addRoute(route))
 *     .delete((key, route, meta) -> sb.deleteRoute(route))
 *     .dependencies((key, route) -> List.of(
 *         Dependency.onKey("interface", "config/interfaces/" + route.outIface())))
 *     .build();
 * }</pre>
 *
 * <p>(Longer than our usual class size, on purpose: the class is one immutable value type and holds
 * no algorithm. Its nested callback types ({@link Creator}, {@link Deleter}, ...) and its {@link
 * Builder} are the names descriptor authors write, {@code KVDescriptor.Builder} and {@code
 * KVDescriptor.Creator}; moving them out would rename the API every descriptor is written against.
 * Beside them are only accessors and builder setters of one line each, and the builder's checks.)
 */
public final class KVDescriptor<V, M> {

  /** Validates a value before Create and Update; throw (ideally {@link InvalidValueException}). */
  @FunctionalInterface
  public interface Validator<V> {
    void validate(String key, V value) throws Exception;
  }

  /** Creates a value in the southbound; returns its metadata (null when none). */
  @FunctionalInterface
  public interface Creator<V, M> {
    M create(String key, V value) throws Exception;
  }

  /** Creates a value of a descriptor without metadata ({@link Builder#createWithoutMetadata}). */
  @FunctionalInterface
  public interface PlainCreator<V> {
    void create(String key, V value) throws Exception;
  }

  /**
   * Updates a value in place for a descriptor without metadata ({@link
   * Builder#updateWithoutMetadata}).
   */
  @FunctionalInterface
  public interface PlainUpdater<V> {
    void update(String key, V oldValue, V newValue) throws Exception;
  }

  /** Updates a value in place; returns the new metadata ({@code oldMetadata} may be reused). */
  @FunctionalInterface
  public interface Updater<V, M> {
    M update(String key, V oldValue, V newValue, M oldMetadata) throws Exception;
  }

  /** Deletes a value from the southbound. */
  @FunctionalInterface
  public interface Deleter<V, M> {
    void delete(String key, V value, M metadata) throws Exception;
  }

  /** Decides whether a change must be applied by Delete + Create instead of Update. */
  @FunctionalInterface
  public interface RecreateDecider<V, M> {
    boolean updateWithRecreate(String key, V oldValue, V newValue, M metadata);
  }

  /**
   * Reads every value of the descriptor's scope from the southbound. {@code correlate} holds the
   * values the scheduler expects: the NB values about to be applied at the first resync, the cached
   * values with their metadata later. Returning null (rather than an empty list) counts as a failed
   * Retrieve, as throwing does: the descriptor's values are left as they are.
   */
  @FunctionalInterface
  public interface Retriever<V, M> {
    List<KVWithMetadata<V, M>> retrieve(List<KVWithMetadata<V, M>> correlate) throws Exception;
  }

  /** Decides whether two values are equivalent (no operation needed). */
  @FunctionalInterface
  public interface Equivalence<V> {
    boolean equivalent(String key, V oldValue, V newValue);
  }

  /**
   * Lists the values derived from a base value. A function of key and value: the scheduler reuses a
   * key's last answer for an equal value.
   */
  @FunctionalInterface
  public interface DerivedValues<V> {
    List<KeyValuePair> derive(String key, V value);
  }

  /**
   * Lists the dependencies of a value. A function of key and value: the scheduler reuses a key's
   * last answer for an equal value.
   */
  @FunctionalInterface
  public interface Dependencies<V> {
    List<Dependency> dependencies(String key, V value);
  }

  /** Classifies an error of Create, Update or Delete. */
  @FunctionalInterface
  public interface RetriableFailure {
    boolean isRetriable(Throwable error);
  }

  /** Shortens a key into a label unique within the descriptor (metadata map name). */
  @FunctionalInterface
  public interface KeyLabel {
    String label(String key);
  }

  private final String name;
  private final Class<V> valueType;
  private final String valueTypeName;
  private final String nbKeyPrefix;
  private final KeySelector keySelector;
  private final KeyLabel keyLabel;
  private final Equivalence<V> equivalence;
  private final boolean withMetadata;
  private final Class<?> metadataType;
  private final Map<String, Function<? super M, ? extends Collection<String>>> metadataIndexes;
  private final Validator<V> validate;
  private final Creator<V, M> create;
  private final Deleter<V, M> delete;
  private final Updater<V, M> update;
  private final RecreateDecider<V, M> updateWithRecreate;
  private final Retriever<V, M> retrieve;
  private final RetriableFailure isRetriableFailure;
  private final DerivedValues<V> derivedValues;
  private final Dependencies<V> dependencies;
  private final List<String> retrieveDependencies;
  private final boolean derivedOnly;
  private final Duration operationTimeout;
  private final int maxConcurrency;

  /** The builder's settings as given (null: left to the default): for {@link #toBuilder}. */
  private final KeySelector givenKeySelector;

  private final String givenValueTypeName;

  private KVDescriptor(Builder<V, M> b) {
    this.name = b.name;
    this.valueType = b.valueType;
    this.valueTypeName = b.valueTypeName != null ? b.valueTypeName : b.valueType.getName();
    this.nbKeyPrefix = b.nbKeyPrefix;
    this.keySelector = b.keySelector != null ? b.keySelector : KeySelector.prefix(b.nbKeyPrefix);
    this.keyLabel = b.keyLabel;
    this.equivalence = b.equivalence;
    this.withMetadata = b.withMetadata;
    this.metadataType = b.metadataType;
    this.metadataIndexes = Map.copyOf(b.metadataIndexes);
    this.validate = b.validate;
    this.create = b.create;
    this.delete = b.delete;
    this.update = b.update;
    this.updateWithRecreate = b.updateWithRecreate;
    this.retrieve = b.retrieve;
    this.isRetriableFailure = b.isRetriableFailure;
    this.derivedValues = b.derivedValues;
    this.dependencies = b.dependencies;
    this.retrieveDependencies = List.copyOf(b.retrieveDependencies);
    this.derivedOnly = b.derivedOnly;
    this.operationTimeout = b.operationTimeout;
    this.maxConcurrency = b.maxConcurrency;
    this.givenKeySelector = b.keySelector;
    this.givenValueTypeName = b.valueTypeName;
  }

  /**
   * A builder holding every setting of this descriptor, to build a variant of it: a descriptor
   * whose callbacks wrap this one's (logging, a fault injected in a test), or one with another
   * setting changed. The name, value type and metadata type stay; a default left unset stays a
   * default (a descriptor without its own key selector selects by the prefix the builder ends up
   * with). This descriptor is not changed.
   *
   * <pre>{@code
   * KVDescriptor<Route, Void> slowRoutes = routes.toBuilder()
   *     .operationTimeout(Duration.ofSeconds(30))
   *     .build();
   * }</pre>
   */
  public Builder<V, M> toBuilder() {
    Builder<V, M> b = new Builder<>(name, valueType);
    b.valueTypeName = givenValueTypeName;
    b.nbKeyPrefix = nbKeyPrefix;
    b.keySelector = givenKeySelector;
    b.keyLabel = keyLabel;
    b.equivalence = equivalence;
    b.withMetadata = withMetadata;
    b.metadataType = metadataType;
    b.metadataIndexes.putAll(metadataIndexes);
    b.validate = validate;
    b.create = create;
    b.delete = delete;
    b.update = update;
    b.updateWithRecreate = updateWithRecreate;
    b.retrieve = retrieve;
    b.isRetriableFailure = isRetriableFailure;
    b.derivedValues = derivedValues;
    b.dependencies = dependencies;
    b.retrieveDependencies.addAll(retrieveDependencies);
    b.derivedOnly = derivedOnly;
    b.operationTimeout = operationTimeout;
    b.maxConcurrency = maxConcurrency;
    return b;
  }

  /**
   * Starts a descriptor named {@code name} for values of class {@code valueType}. A value of
   * another class given for one of its keys becomes INVALID.
   *
   * @throws IllegalArgumentException if the name is empty
   */
  public static <V> Builder<V, Void> builder(String name, Class<V> valueType) {
    return new Builder<>(name, valueType);
  }

  public String name() {
    return name;
  }

  public Class<V> valueType() {
    return valueType;
  }

  /** Name of the value type (defaults to the value class name). */
  public String valueTypeName() {
    return valueTypeName;
  }

  /** Key prefix watched in the northbound; {@code ""} for descriptors of derived values. */
  public String nbKeyPrefix() {
    return nbKeyPrefix;
  }

  public KeySelector keySelector() {
    return keySelector;
  }

  public Optional<KeyLabel> keyLabel() {
    return Optional.ofNullable(keyLabel);
  }

  public Optional<Equivalence<V>> equivalence() {
    return Optional.ofNullable(equivalence);
  }

  public boolean withMetadata() {
    return withMetadata;
  }

  /** Class of the metadata ({@code Void} without metadata). */
  public Class<?> metadataType() {
    return metadataType;
  }

  /** Secondary indexes of the metadata map (index name → values extractor). */
  public Map<String, Function<? super M, ? extends Collection<String>>> metadataIndexes() {
    return metadataIndexes;
  }

  public Optional<Validator<V>> validate() {
    return Optional.ofNullable(validate);
  }

  public Optional<Creator<V, M>> create() {
    return Optional.ofNullable(create);
  }

  public Optional<Deleter<V, M>> delete() {
    return Optional.ofNullable(delete);
  }

  public Optional<Updater<V, M>> update() {
    return Optional.ofNullable(update);
  }

  public Optional<RecreateDecider<V, M>> updateWithRecreate() {
    return Optional.ofNullable(updateWithRecreate);
  }

  public Optional<Retriever<V, M>> retrieve() {
    return Optional.ofNullable(retrieve);
  }

  public Optional<RetriableFailure> isRetriableFailure() {
    return Optional.ofNullable(isRetriableFailure);
  }

  public Optional<DerivedValues<V>> derivedValues() {
    return Optional.ofNullable(derivedValues);
  }

  public Optional<Dependencies<V>> dependencies() {
    return Optional.ofNullable(dependencies);
  }

  /** Descriptors whose values must be retrieved before this one's. */
  public List<String> retrieveDependencies() {
    return retrieveDependencies;
  }

  /**
   * Limit of one southbound call (Create, Update, Delete, Retrieve) of this descriptor; empty = the
   * scheduler's ({@link KVSchedulerBuilder#operationTimeout}).
   */
  public Optional<Duration> operationTimeout() {
    return Optional.ofNullable(operationTimeout);
  }

  /**
   * How many of this descriptor's southbound calls may run at the same time when the scheduler runs
   * calls in parallel ({@link KVSchedulerBuilder#parallelism}); 1 (the default): one at a time.
   */
  public int maxConcurrency() {
    return maxConcurrency;
  }

  /**
   * True when the descriptor describes only values derived from other values: the northbound may
   * not set its keys (a commit that does fails, naming the key), only base values derive them.
   */
  public boolean derivedOnly() {
    return derivedOnly;
  }

  /** True when {@code key} belongs to this descriptor. */
  public boolean selects(String key) {
    return keySelector.test(key);
  }

  @Override
  public String toString() {
    return "KVDescriptor[" + name + "]";
  }

  /**
   * Builder of {@link KVDescriptor}. Every attribute is optional except the name, the value type
   * and, for descriptors of NB values ({@link #nbKeyPrefix} set), Create and Delete.
   */
  public static final class Builder<V, M> {
    private final String name;
    private final Class<V> valueType;
    private String valueTypeName;
    private String nbKeyPrefix = "";
    private KeySelector keySelector;
    private KeyLabel keyLabel;
    private Equivalence<V> equivalence;
    private boolean withMetadata;
    private Class<?> metadataType = Void.class;
    private final Map<String, Function<? super M, ? extends Collection<String>>> metadataIndexes =
        new LinkedHashMap<>();
    private Validator<V> validate;
    private Creator<V, M> create;
    private Deleter<V, M> delete;
    private Updater<V, M> update;
    private RecreateDecider<V, M> updateWithRecreate;
    private Retriever<V, M> retrieve;
    private RetriableFailure isRetriableFailure;
    private DerivedValues<V> derivedValues;
    private Dependencies<V> dependencies;
    private final List<String> retrieveDependencies = new ArrayList<>();
    private boolean derivedOnly;
    private Duration operationTimeout;
    private int maxConcurrency = 1;

    private Builder(String name, Class<V> valueType) {
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("descriptor name must not be empty");
      }
      this.name = name;
      this.valueType = Objects.requireNonNull(valueType, "valueType of descriptor " + name);
    }

    /**
     * Declares that values carry metadata of class {@code metadataType}, kept in a metadata map
     * readable through {@link KVScheduler#metadataMap(KVDescriptor)}. Call before setting callbacks
     * that use metadata. Metadata of another class (possible only through an unchecked cast) fails
     * the Create or Update that returned it, naming the key and both classes; a retrieved or
     * notified value carrying such metadata is ignored, with a warning.
     *
     * @throws IllegalStateException if callbacks were already set
     */
    @SuppressWarnings("unchecked")
    public <M2> Builder<V, M2> withMetadata(Class<M2> metadataType) {
      Objects.requireNonNull(metadataType, "metadataType");
      if (create != null
          || update != null
          || delete != null
          || retrieve != null
          || updateWithRecreate != null
          || !metadataIndexes.isEmpty()) {
        throw new IllegalStateException(
            "descriptor " + name + ": call withMetadata(...) before setting callbacks");
      }
      Builder<V, M2> self = (Builder<V, M2>) this;
      self.withMetadata = true;
      self.metadataType = metadataType;
      return self;
    }

    /** Name of the value type (defaults to the class name). */
    public Builder<V, M> valueTypeName(String typeName) {
      this.valueTypeName = typeName;
      return this;
    }

    /**
     * Key prefix under which the northbound stores values of this descriptor. Also the default key
     * selector ({@code key.startsWith(prefix)}).
     */
    public Builder<V, M> nbKeyPrefix(String prefix) {
      this.nbKeyPrefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /** Selects the keys of this descriptor (default: keys starting with the NB key prefix). */
    public Builder<V, M> keySelector(KeySelector selector) {
      this.keySelector = selector;
      return this;
    }

    /** Shortens keys into labels (default: the key itself). */
    public Builder<V, M> keyLabel(KeyLabel label) {
      this.keyLabel = label;
      return this;
    }

    /** Custom equivalence (default: {@link Objects#equals}). */
    public Builder<V, M> equivalence(Equivalence<V> equivalence) {
      this.equivalence = equivalence;
      return this;
    }

    /**
     * Adds a secondary index to the metadata map (Go's MetadataMapFactory): {@code extractor} gives
     * the index values of one metadata.
     *
     * @throws IllegalStateException if the descriptor has no metadata
     */
    public Builder<V, M> metadataIndex(
        String indexName, Function<? super M, ? extends Collection<String>> extractor) {
      if (!withMetadata) {
        throw new IllegalStateException(
            "descriptor " + name + ": metadataIndex needs withMetadata(...) first");
      }
      metadataIndexes.put(indexName, extractor);
      return this;
    }

    public Builder<V, M> validate(Validator<V> v) {
      this.validate = v;
      return this;
    }

    /** Creates a value in the southbound and returns its metadata. */
    public Builder<V, M> create(Creator<V, M> c) {
      this.create = c;
      return this;
    }

    /**
     * Creates a value in the southbound, for a descriptor without metadata: nothing to return.
     *
     * @throws IllegalStateException if the descriptor has metadata ({@link #withMetadata})
     */
    public Builder<V, M> createWithoutMetadata(PlainCreator<V> c) {
      Objects.requireNonNull(c, "create");
      requireNoMetadata("createWithoutMetadata");
      this.create =
          (key, value) -> {
            c.create(key, value);
            return null;
          };
      return this;
    }

    /**
     * Updates a value in place, for a descriptor without metadata: nothing to return.
     *
     * @throws IllegalStateException if the descriptor has metadata ({@link #withMetadata})
     */
    public Builder<V, M> updateWithoutMetadata(PlainUpdater<V> u) {
      Objects.requireNonNull(u, "update");
      requireNoMetadata("updateWithoutMetadata");
      this.update =
          (key, oldValue, newValue, oldMetadata) -> {
            u.update(key, oldValue, newValue);
            return null;
          };
      return this;
    }

    private void requireNoMetadata(String what) {
      if (withMetadata) {
        throw new IllegalStateException(
            "descriptor "
                + name
                + " has metadata: "
                + what
                + " is for descriptors without; use "
                + what.replace("WithoutMetadata", "")
                + "(...), which returns the metadata");
      }
    }

    public Builder<V, M> delete(Deleter<V, M> d) {
      this.delete = d;
      return this;
    }

    /** In-place update; without it every change is applied by Delete + Create. */
    public Builder<V, M> update(Updater<V, M> u) {
      this.update = u;
      return this;
    }

    public Builder<V, M> updateWithRecreate(RecreateDecider<V, M> r) {
      this.updateWithRecreate = r;
      return this;
    }

    /** Reads the southbound; without it the southbound is assumed to match the scheduler. */
    public Builder<V, M> retrieve(Retriever<V, M> r) {
      this.retrieve = r;
      return this;
    }

    /** Without it every Create/Update/Delete error is retriable. */
    public Builder<V, M> isRetriableFailure(RetriableFailure r) {
      this.isRetriableFailure = r;
      return this;
    }

    public Builder<V, M> derivedValues(DerivedValues<V> d) {
      this.derivedValues = d;
      return this;
    }

    public Builder<V, M> dependencies(Dependencies<V> d) {
      this.dependencies = d;
      return this;
    }

    /** Descriptors to retrieve before this one. */
    public Builder<V, M> retrieveDependencies(String... descriptorNames) {
      this.retrieveDependencies.addAll(List.of(descriptorNames));
      return this;
    }

    /**
     * Bounds each southbound call (Create, Update, Delete, Retrieve) of this descriptor, instead of
     * the scheduler's {@link KVSchedulerBuilder#operationTimeout} (same semantics): a call still
     * running after {@code timeout} is interrupted and the operation fails with an {@link
     * OperationTimeoutException}. Calls then run on a call thread, not the engine thread.
     *
     * @throws IllegalArgumentException if {@code timeout} is not positive
     */
    public Builder<V, M> operationTimeout(Duration timeout) {
      this.operationTimeout = KVSchedulerBuilder.positive(timeout, "operationTimeout");
      return this;
    }

    /**
     * Lets up to {@code limit} of this descriptor's southbound calls (Create, Update, Delete) run
     * at the same time, for values that do not depend on each other, when the scheduler runs calls
     * in parallel ({@link KVSchedulerBuilder#parallelism}). The callbacks must then be safe to call
     * from several threads at once; the calls for one key still never overlap, nor those of a base
     * value with those of the values derived from it. Default: 1 — the descriptor is never called
     * concurrently with itself.
     *
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    public Builder<V, M> maxConcurrency(int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException(
            "descriptor " + name + ": maxConcurrency must be at least 1, got " + limit);
      }
      this.maxConcurrency = limit;
      return this;
    }

    /**
     * Declares that the descriptor describes only derived values (e.g. the bindings a bridge domain
     * derives): an NB transaction setting one of its keys fails for that key with a clear error, as
     * one setting a key that holds a derived value does. Not combinable with an NB key prefix.
     */
    public Builder<V, M> derivedOnly() {
      this.derivedOnly = true;
      return this;
    }

    /**
     * Builds the descriptor.
     *
     * @throws IllegalArgumentException if a mandatory attribute is missing (a descriptor with an NB
     *     key prefix needs Create and Delete; a metadata index without metadata)
     */
    public KVDescriptor<V, M> build() {
      if (keySelector == null && nbKeyPrefix.isEmpty()) {
        throw new IllegalArgumentException(
            "descriptor " + name + ": needs a key selector or an NB key prefix");
      }
      if (derivedOnly && !nbKeyPrefix.isEmpty()) {
        throw new IllegalArgumentException(
            "descriptor "
                + name
                + " describes only derived values"
                + " but has an NB key prefix '"
                + nbKeyPrefix
                + "'");
      }
      List<String> missing = new ArrayList<>();
      if (!nbKeyPrefix.isEmpty()) {
        if (create == null) missing.add("create");
        if (delete == null) missing.add("delete");
      }
      if (!missing.isEmpty()) {
        throw new IllegalArgumentException(
            "descriptor "
                + name
                + " describes NB values (nbKeyPrefix '"
                + nbKeyPrefix
                + "') but has no "
                + String.join(" and no ", missing)
                + " callback");
      }
      if (retrieveDependencies.contains(name)) {
        throw new IllegalArgumentException(
            "descriptor " + name + " lists itself in its retrieve dependencies");
      }
      Set<String> dup = new HashSet<>();
      for (String d : retrieveDependencies) {
        if (!dup.add(d)) {
          throw new IllegalArgumentException(
              "descriptor " + name + " lists retrieve dependency " + d + " twice");
        }
      }
      return new KVDescriptor<>(this);
    }
  }
}
