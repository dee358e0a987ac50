package io.kvscheduler.ctl.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Writes values into etcd as vpp-agent keeps them: key {@code <agent prefix><model key>}, value the
 * protobuf JSON of the value (snake_case names, defaults left out), all in one etcd transaction, so
 * the agent sees one change per key and never a half-written file.
 */
final class EtcdWriter {
  private static final long TIMEOUT_SECONDS = 10;

  private final List<String> endpoints;
  private final String agentPrefix;
  private final ModelRegistry models;

  /** What was done. */
  record Result(int written, int removed) {}

  EtcdWriter(List<String> endpoints, String agentPrefix, ModelRegistry models) {
    this.endpoints = endpoints;
    this.agentPrefix = agentPrefix;
    this.models = models;
  }

  /** Puts {@code values}; with {@code replace}, deletes the other keys of the known models. */
  Result write(Map<String, Object> values, boolean replace) {
    List<URI> uris = new ArrayList<>();
    for (String e : endpoints) {
      try {
        uris.add(URI.create(e.contains("://") ? e : "http://" + e));
      } catch (IllegalArgumentException ex) {
        throw new CtlException(
            ExitCodes.USAGE,
            "--etcd: endpoint '" + e + "' is not host:port or http(s)://host:port");
      }
    }
    try (Client client = Client.builder().endpoints(uris).build()) {
      KV kv = client.getKVClient();
      List<Op> ops = new ArrayList<>();
      int removed = 0;
      if (replace) {
        for (Model<?> m : models.models()) {
          if (!m.modelClass().equals("config")) {
            continue;
          }
          ByteSequence prefix = bytes(agentPrefix + m.keyPrefix());
          List<KeyValue> present =
              kv.get(prefix, GetOption.builder().isPrefix(true).withKeysOnly(true).build())
                  .get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                  .getKvs();
          for (KeyValue k : present) {
            String key =
                k.getKey().toString(StandardCharsets.UTF_8).substring(agentPrefix.length());
            if (!values.containsKey(key)) {
              ops.add(Op.delete(k.getKey(), DeleteOption.DEFAULT));
              removed++;
            }
          }
        }
      }
      values.forEach(
          (key, value) ->
              ops.add(
                  Op.put(
                      bytes(agentPrefix + key), bytes(models.encode(value)), PutOption.DEFAULT)));
      if (!ops.isEmpty()) {
        kv.txn().Then(ops.toArray(Op[]::new)).commit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      }
      return new Result(values.size(), removed);
    } catch (TimeoutException e) {
      throw new CtlException(
          ExitCodes.UNREACHABLE,
          "etcd at "
              + endpoints
              + " did not answer within "
              + TIMEOUT_SECONDS
              + " s; is it running?",
          e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause() == null ? e : e.getCause();
      int code = ExitCodes.ofEtcdFailure(c);
      throw new CtlException(
          code,
          (code == ExitCodes.UNREACHABLE ? "cannot reach etcd at " : "etcd at ")
              + endpoints
              + ": "
              + c.getMessage(),
          c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CtlException(ExitCodes.FAILED, "interrupted");
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
