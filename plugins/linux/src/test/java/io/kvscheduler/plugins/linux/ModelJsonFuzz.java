package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.lifecycle.AfterProperty;

/**
 * Base of the fuzz tests of the JSON of Linux models. Inputs: valid values mutated 0 to 5 times (a
 * piece of the test's word list inserted, a character removed, a quoted value replaced by a piece,
 * a character inserted), each from a seed jqwik draws, so a failure names its seed and shrinks.
 * Checks: the JSON goes through the model registry as an etcd value goes, then through the
 * descriptor's validation; a rejection names the key; a validated value is valid, or INVALID naming
 * at least one of its fields with a message that shows no raw control character; nothing else is
 * thrown. jqwik makes an instance per property; it counts the property's outcomes and prints them
 * after it.
 */
abstract class ModelJsonFuzz {
  /** A validation that takes no value. */
  interface Validation {
    void run() throws Exception;
  }

  /**
   * JSON tokens for the pieces of a mutation: a fraction, literals, empty containers, punctuation,
   * a lone quote, a backslash and a space.
   */
  static final List<String> JSON_TOKENS =
      List.of("1.5", "true", "null", "[]", "{}", ",", ":", "{", "}", "[", "]", "\"", "\\", " ");

  private final ModelRegistry models = new ModelRegistry();
  private String label = "";
  private long rejected;
  private long invalid;
  private long valid;

  ModelJsonFuzz() {
    LinuxModels.registerAll(models);
  }

  /** {@code seed} mutated {@code n} times, with {@code pieces} the words and values put in. */
  static String mutate(String seed, List<String> pieces, Random r, int n) {
    StringBuilder s = new StringBuilder(seed);
    for (int i = 0; i < n; i++) {
      int at = s.length() == 0 ? 0 : r.nextInt(s.length());
      switch (r.nextInt(4)) {
        case 0 -> s.insert(at, pieces.get(r.nextInt(pieces.size())));
        case 1 -> {
          if (s.length() > 0) {
            s.deleteCharAt(at);
          }
        }
        case 2 -> {
          // a quoted value replaced by another piece
          int q = s.indexOf(": \"", at);
          int end = q < 0 ? -1 : s.indexOf("\"", q + 3);
          if (end > 0) {
            s.replace(q + 2, end + 1, pieces.get(r.nextInt(pieces.size())));
          }
        }
        default -> s.insert(at, (char) r.nextInt(0x3000));
      }
    }
    return s.toString();
  }

  /** One of {@code seeds} mutated 0 to 5 times with {@code pieces}. */
  static Arbitrary<String> mutationsOf(List<String> seeds, List<String> pieces) {
    return Combinators.combine(
            Arbitraries.of(seeds), Arbitraries.longs(), Arbitraries.integers().between(0, 5))
        .as((s, r, n) -> mutate(s, pieces, new Random(r), n));
  }

  /** Names the outcomes in {@link #report()}; {@link #check} names them after its model. */
  void label(String label) {
    this.label = label;
  }

  /** Prints the outcomes of the property. */
  @AfterProperty
  void report() {
    System.out.printf(
        "fuzz %s: %d inputs, %d rejected by the model, %d INVALID, %d valid%n",
        label, rejected + invalid + valid, rejected, invalid, valid);
  }

  /** {@code json} decoded as {@code model}, then validated by {@code validator} under its key. */
  <V> void check(Model<V> model, String json, KVDescriptor.Validator<V> validator) {
    label = model.name();
    Object v;
    try {
      v = models.decodeTree(model, new ObjectMapper().readTree(json));
    } catch (ModelException e) {
      rejected++;
      assertThat(e.getMessage()).startsWith(model.keyPrefix());
      return;
    } catch (JsonProcessingException e) {
      rejected++; // not JSON at all
      return;
    }
    checked(json, () -> validator.validate(models.keyOf(v), model.valueClass().cast(v)));
  }

  /** {@code validation} of {@code input}: valid, or INVALID naming fields; nothing else. */
  void checked(String input, Validation validation) {
    try {
      validation.run();
      valid++;
    } catch (InvalidValueException e) {
      invalid++;
      assertThat(e.invalidFields()).as("fields named for %s", input).isNotEmpty();
      HostileValuesTest.assertNothingRaw(e.getMessage());
    } catch (Exception e) {
      throw new AssertionError("validation of " + input + " threw " + e, e);
    }
  }
}
