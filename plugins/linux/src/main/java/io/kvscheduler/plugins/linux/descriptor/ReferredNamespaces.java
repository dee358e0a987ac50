package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * For Retrieve, which reads each namespace once: the namespaces the expected values refer to by
 * process, file or label that exist now, each by the one file it is read through, and the reference
 * and file a value found in one of them is given back with.
 */
final class ReferredNamespaces {

  /** A reference of each namespace, by the one file it is read through. */
  private final Map<String, NetNamespace> byFile = new HashMap<>();

  /** By value name: the file its namespace is read through. */
  private final Map<String, String> handles = new HashMap<>();

  /** By value name: the file its own reference names, for its metadata. */
  private final Map<String, String> own;

  /** By value name: its own reference. */
  private final Map<String, NetNamespace> refs = new HashMap<>();

  /**
   * Where a value found in the file {@code file} is: its reference (null: the agent's) and file.
   */
  record Place(NetNamespace reference, String file) {}

  /**
   * Looks up (and watches through {@code watcher}) the namespaces {@code expected} refers to; a
   * label no process carries is left out.
   */
  <V> ReferredNamespaces(
      LinuxCalls calls,
      NamespaceWatcherDescriptor watcher,
      Collection<V> expected,
      Function<V, String> name,
      Function<V, NetNamespace> ref) {
    for (V exp : expected) {
      NetNamespace ns = ref.apply(exp);
      if (NamespaceWatcherDescriptor.byReference(ns)) {
        watcher.want(ns);
        try {
          String h = watcher.handle(ns);
          handles.put(name.apply(exp), h);
          refs.put(name.apply(exp), ns);
          byFile.putIfAbsent(h, ns);
        } catch (LinuxCallException e) {
          // no process carries the label: nothing of it to read
        }
      }
    }
    // one file per namespace: two references of one namespace must not find its values twice
    Map<String, String> one =
        NamespaceWatcherDescriptor.oneFilePerNamespace(calls, byFile.keySet());
    own = new HashMap<>(handles);
    handles.replaceAll((n, h) -> one.getOrDefault(h, h));
    byFile.keySet().retainAll(one.values());
  }

  /** The files to read, one per namespace. */
  Set<String> files() {
    return byFile.keySet();
  }

  /** Whether {@code file} is one of {@link #files}, which may be gone by the time it is read. */
  boolean has(String file) {
    return byFile.containsKey(file);
  }

  /** The file the namespace of the value {@code name} is read through, else {@code otherwise}. */
  String file(String name, String otherwise) {
    return handles.getOrDefault(name, otherwise);
  }

  /**
   * Where the value {@code name} found in {@code file} is: in its own reference and file when
   * {@code expected} (a value of that name is configured) and its namespace is read there, else in
   * a reference of that file's namespace, a named one, or the agent's.
   */
  Place place(String name, boolean expected, String file) {
    if (expected && file.equals(handles.get(name))) {
      // one namespace may have several references: the value's own, entered through its own file
      return new Place(refs.get(name), own.get(name));
    }
    if (byFile.containsKey(file)) {
      return new Place(byFile.get(file), file);
    }
    if (!file.isEmpty()) {
      return new Place(
          NetNamespace.newBuilder()
              .setType(NetNamespace.ReferenceType.NSID)
              .setReference(file)
              .build(),
          file);
    }
    return new Place(null, file);
  }
}
