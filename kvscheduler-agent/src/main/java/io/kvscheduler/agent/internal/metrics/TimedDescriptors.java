package io.kvscheduler.agent.internal.metrics;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Times the southbound calls of descriptors ({@code kvs_southbound_call_seconds{descriptor, call}}:
 * create, update, delete, retrieve): {@link #scheduler} gives plugins a scheduler whose {@code
 * registerDescriptors} registers copies of their descriptors with timed callbacks, the rest of it
 * unchanged. A callback's result and exceptions pass through as they are.
 */
final class TimedDescriptors {
  private TimedDescriptors() {}

  /** {@code kvs} registering timed copies of the descriptors given to it. */
  static KVScheduler scheduler(KVScheduler kvs, MeterRegistry registry) {
    return (KVScheduler)
        Proxy.newProxyInstance(
            KVScheduler.class.getClassLoader(),
            new Class<?>[] {KVScheduler.class},
            (proxy, method, args) -> {
              if (method.getName().equals("registerDescriptors")
                  && args != null
                  && args.length == 1
                  && args[0] instanceof KVDescriptor<?, ?>[] ds) {
                KVDescriptor<?, ?>[] timed = new KVDescriptor<?, ?>[ds.length];
                for (int i = 0; i < ds.length; i++) {
                  timed[i] = timed(ds[i], registry);
                }
                args = new Object[] {timed};
              }
              if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                  case "equals" -> proxy == args[0];
                  case "hashCode" -> System.identityHashCode(proxy);
                  default -> "timed " + kvs;
                };
              }
              try {
                return method.invoke(kvs, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  /** A copy of {@code d} whose southbound callbacks are timed. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static <V, M> KVDescriptor<V, M> timed(KVDescriptor<V, M> d, MeterRegistry registry) {
    KVDescriptor.Builder b =
        d.withMetadata()
            ? KVDescriptor.builder(d.name(), d.valueType()).withMetadata(d.metadataType())
            : KVDescriptor.builder(d.name(), d.valueType());
    if (d.withMetadata()) {
      for (Map.Entry<String, ? extends Function<? super M, ? extends Collection<String>>> e :
          d.metadataIndexes().entrySet()) {
        b.metadataIndex(e.getKey(), (Function) e.getValue());
      }
    }
    b.valueTypeName(d.valueTypeName());
    if (d.nbKeyPrefix() != null) {
      b.nbKeyPrefix(d.nbKeyPrefix());
    }
    b.keySelector(d.keySelector());
    d.keyLabel().ifPresent(b::keyLabel);
    d.equivalence().ifPresent(c -> b.equivalence((KVDescriptor.Equivalence) c));
    d.validate().ifPresent(v -> b.validate((KVDescriptor.Validator) v));
    String name = d.name();
    d.create()
        .ifPresent(
            c -> {
              Timer t = timer(registry, name, "create");
              b.create(
                  (KVDescriptor.Creator<V, M>)
                      (key, value) -> {
                        long t0 = System.nanoTime();
                        try {
                          return c.create(key, value);
                        } finally {
                          t.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        }
                      });
            });
    d.update()
        .ifPresent(
            u -> {
              Timer t = timer(registry, name, "update");
              b.update(
                  (KVDescriptor.Updater<V, M>)
                      (key, oldValue, newValue, metadata) -> {
                        long t0 = System.nanoTime();
                        try {
                          return u.update(key, oldValue, newValue, metadata);
                        } finally {
                          t.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        }
                      });
            });
    d.delete()
        .ifPresent(
            del -> {
              Timer t = timer(registry, name, "delete");
              b.delete(
                  (KVDescriptor.Deleter<V, M>)
                      (key, value, metadata) -> {
                        long t0 = System.nanoTime();
                        try {
                          del.delete(key, value, metadata);
                        } finally {
                          t.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        }
                      });
            });
    d.retrieve()
        .ifPresent(
            r -> {
              Timer t = timer(registry, name, "retrieve");
              b.retrieve(
                  (KVDescriptor.Retriever<V, M>)
                      correlate -> {
                        long t0 = System.nanoTime();
                        try {
                          return r.retrieve(correlate);
                        } finally {
                          t.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        }
                      });
            });
    d.updateWithRecreate().ifPresent(r -> b.updateWithRecreate((KVDescriptor.RecreateDecider) r));
    d.isRetriableFailure().ifPresent(r -> b.isRetriableFailure((KVDescriptor.RetriableFailure) r));
    d.derivedValues().ifPresent(v -> b.derivedValues((KVDescriptor.DerivedValues) v));
    d.dependencies().ifPresent(v -> b.dependencies((KVDescriptor.Dependencies) v));
    if (!d.retrieveDependencies().isEmpty()) {
      b.retrieveDependencies(d.retrieveDependencies().toArray(String[]::new));
    }
    d.operationTimeout().ifPresent(b::operationTimeout);
    b.maxConcurrency(d.maxConcurrency());
    return (KVDescriptor<V, M>) b.build();
  }

  private static Timer timer(MeterRegistry registry, String descriptor, String call) {
    return Timer.builder("kvs_southbound_call")
        .description("Southbound calls of descriptors")
        .tag("descriptor", descriptor)
        .tag("call", call)
        .publishPercentileHistogram()
        .register(registry);
  }
}
