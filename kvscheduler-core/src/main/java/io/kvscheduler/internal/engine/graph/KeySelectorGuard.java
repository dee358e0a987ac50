package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.internal.util.UserCode;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls the key selectors of any-of dependencies, which are user code: a selector that throws
 * accepts nothing (the dependency is not satisfied by that key) and its failure is logged, once per
 * selector, instead of aborting the transaction.
 */
final class KeySelectorGuard {
  private static final Logger LOG = LoggerFactory.getLogger(KeySelectorGuard.class);

  /**
   * Identity hashes of the selectors whose failure was logged (bounded: the report is about the
   * configuration; not the selectors themselves, whose equals is user code).
   */
  private static final Set<Integer> REPORTED = ConcurrentHashMap.newKeySet();

  private KeySelectorGuard() {}

  /** {@link Dependency#matches}, with the dependency's selector guarded as in {@link #accepts}. */
  static boolean matches(Dependency d, String key) {
    try {
      return d.matches(key);
    } catch (Throwable t) {
      return rejected(d.keySelector(), key, t);
    }
  }

  /** True when the key selector of an any-of dependency accepts {@code key}. */
  static boolean accepts(KeySelector sel, String key) {
    try {
      return sel.test(key);
    } catch (Throwable t) {
      return rejected(sel, key, t);
    }
  }

  private static boolean rejected(KeySelector sel, String key, Throwable failure) {
    Throwable t = UserCode.contained(failure);
    if (REPORTED.size() < 1000 && REPORTED.add(System.identityHashCode(sel))) {
      LOG.error(
          "key selector of an any-of dependency failed for key {}; it is taken as not"
              + " accepting that key (further failures of this selector are not logged)",
          key,
          t);
    }
    return false;
  }
}
