package io.kvscheduler.plugins.linux;

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
import java.util.stream.Stream;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

/**
 * Fuzzing of address allocations, {@value #TRIES} inputs each: the JSON of allocations (valid
 * values mutated) goes through the model registry as an etcd value goes, then through the
 * descriptor's validation; mutated {@code alloc:} references go through the validation of interface
 * addresses and route gateways. Properties: a rejection names the key; a decoded value is valid, or
 * INVALID naming at least one of its fields with a message that shows no raw control character;
 * nothing else is thrown.
 */
class IpAllocationJsonFuzzTest extends ModelJsonFuzz {
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

  /** Fields and values of allocations, for mutations to put in. */
  static final List<String> WORDS =
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
          "4294967295");

  /** Words and values mutations put in: {@link #WORDS}, JSON tokens, the parts of a reference. */
  static final List<String> PIECES =
      Stream.of(WORDS, JSON_TOKENS, List.of("/", "GW", "alloc:")).flatMap(List::stream).toList();

  private final KVDescriptor.Validator<IPAllocation> allocations =
      IpAllocationDescriptor.create().validate().orElseThrow();
  private final KVDescriptor.Validator<Interface> addresses =
      InterfaceAddressDescriptor.create(null, null).validate().orElseThrow();
  private final KVDescriptor.Validator<Route> routes =
      RouteDescriptor.create(null, null).validate().orElseThrow();

  @Provide
  Arbitrary<String> allocationJson() {
    return mutationsOf(ALLOCATIONS, PIECES);
  }

  @Provide
  Arbitrary<String> references() {
    return mutationsOf(REFERENCES, PIECES);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void allocationValues(@ForAll("allocationJson") String json) {
    check(LinuxModels.IP_ALLOCATION, json, allocations);
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void references(@ForAll("references") String ref) {
    label("alloc: references");
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
}
