package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.grpc.proto.netalloc.IPAllocation;
import io.kvscheduler.plugins.linux.descriptor.InterfaceAddressDescriptor;
import io.kvscheduler.plugins.linux.descriptor.IpAllocationDescriptor;
import io.kvscheduler.plugins.linux.descriptor.RouteDescriptor;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterProperty;

/**
 * Fuzzing of address allocations, {@value #TRIES} inputs each: the JSON of allocations (valid
 * values mutated) goes through the model registry as an etcd value goes, then through the
 * descriptor's validation; mutated {@code alloc:} references go through the validation of interface
 * addresses and route gateways. Properties: a rejection names the key; a decoded value is valid, or
 * INVALID naming at least one of its fields with a message that shows no raw control character;
 * nothing else is thrown.
 */
class IpAllocationJsonFuzzTest {
  static final int TRIES = 10_000;

  static final List<String> ALLOCATIONS =
      List.of(
          "{\"network_name\": \"net1\", \"interface_name\": \"veth1\", \"address\":"
              + " \"10.0.1.1/24\", \"gw\": \"10.0.1.254\"}",
          "{\"networkName\": \"net2\", \"interfaceName\": \"tap1\", \"address\": \"10.0.2.1\"}",
          "{\"network_name\": \"n6\", \"interface_name\": \"v6\", \"address\":"
              + " \"2001:db8::1/64\", \"gw\": \"2001:db8:9::1/48\"}");

  static final List<String> REFERENCES =
      List.of("alloc:net1", "alloc:net1/veth1", "alloc:net1/GW", "alloc:net1/veth1/GW");

  static final List<String> PIECES =
      List.of(
          "\"network_name\"",
          "\"interface_name\"",
          "\"address\"",
          "\"gw\"",
          "\"net1\"",
          "\"a/b\"",
          "\"a\\tb\"",
          "\"\\u0000\"",
          "\"é\"",
          "\"10.0.0.1\"",
          "\"10.0.0.1/33\"",
          "\"::1\"",
          "\"fe80::1/64\"",
          "\"300.1.1.1\"",
          "\"alloc:net1\"",
          "-1",
          "0",
          "4294967295",
          "1.5",
          "true",
          "null",
          "[]",
          "{}",
          ",",
          ":",
          "{",
          "}",
          "[",
          "]",
          "\"",
          "\\",
          " ",
          "/",
          "GW",
          "alloc:");

  private final ModelRegistry models = new ModelRegistry();
  private final KVDescriptor.Validator<IPAllocation> allocations =
      IpAllocationDescriptor.create().validate().orElseThrow();
  private final KVDescriptor.Validator<Interface> addresses =
      InterfaceAddressDescriptor.create(null, null).validate().orElseThrow();
  private final KVDescriptor.Validator<Route> routes =
      RouteDescriptor.create(null, null).validate().orElseThrow();
  private String label = "";
  private long rejected;
  private long invalid;
  private long valid;

  IpAllocationJsonFuzzTest() {
    LinuxModels.registerAll(models);
  }

  @AfterProperty
  void report() {
    System.out.printf(
        "fuzz %s: %d inputs, %d rejected by the model, %d INVALID, %d valid%n",
        label, rejected + invalid + valid, rejected, invalid, valid);
  }

  static String mutate(String seed, Random r, int n) {
    StringBuilder s = new StringBuilder(seed);
    for (int i = 0; i < n; i++) {
      int at = s.length() == 0 ? 0 : r.nextInt(s.length());
      switch (r.nextInt(4)) {
        case 0 -> s.insert(at, PIECES.get(r.nextInt(PIECES.size())));
        case 1 -> {
          if (s.length() > 0) {
            s.deleteCharAt(at);
          }
        }
        case 2 -> {
          int q = s.indexOf(": \"", at);
          int end = q < 0 ? -1 : s.indexOf("\"", q + 3);
          if (end > 0) {
            s.replace(q + 2, end + 1, PIECES.get(r.nextInt(PIECES.size())));
          }
        }
        default -> s.insert(at, (char) r.nextInt(0x3000));
      }
    }
    return s.toString();
  }

  static Arbitrary<String> mutationsOf(List<String> seeds) {
    return Combinators.combine(
            Arbitraries.of(seeds), Arbitraries.longs(), Arbitraries.integers().between(0, 5))
        .as((s, r, n) -> mutate(s, new Random(r), n));
  }

  @Provide
  Arbitrary<String> allocationJson() {
    return mutationsOf(ALLOCATIONS);
  }

  @Provide
  Arbitrary<String> references() {
    return mutationsOf(REFERENCES);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void allocationValues(@ForAll("allocationJson") String json) {
    label = LinuxModels.IP_ALLOCATION.name();
    Object v;
    try {
      v = models.decodeTree(LinuxModels.IP_ALLOCATION, new ObjectMapper().readTree(json));
    } catch (ModelException e) {
      rejected++;
      assertThat(e.getMessage()).startsWith(LinuxModels.IP_ALLOCATION.keyPrefix());
      return;
    } catch (JsonProcessingException e) {
      rejected++; // not JSON at all
      return;
    }
    IPAllocation a = (IPAllocation) v;
    checked(json, () -> allocations.validate(models.keyOf(a), a));
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void references(@ForAll("references") String ref) {
    label = "alloc: references";
    Interface i = Values.veth("veth1", "veth2", "", ref).build();
    String key =
        LinuxKeys.addressKey(
            "veth1",
            ref.startsWith("alloc:") ? AddressSource.ALLOC_REF : AddressSource.STATIC,
            ref);
    checked(ref, () -> addresses.validate(key, i));
    Route r = Values.route("veth1", "10.0.2.0/24", ref);
    checked(ref, () -> routes.validate(Values.key(r), r));
  }

  interface Validation {
    void run() throws Exception;
  }

  private void checked(String input, Validation validate) {
    try {
      validate.run();
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
