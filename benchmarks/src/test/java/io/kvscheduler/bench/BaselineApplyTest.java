package io.kvscheduler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.bench.MockModel.Binding;
import io.kvscheduler.bench.MockModel.BridgeDomain;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BaselineApplyTest {

  @Test
  void appliesEveryW1ValueOnceWithBindingsAfterTheirInterfaceAndBridgeDomain() {
    List<String> calls = new ArrayList<>();
    int n = 50;

    int made = BaselineApply.apply(BaselineApply.w1Values(n), (key, value) -> calls.add(key));

    assertEquals(2 * n + 1, made);
    assertEquals(2 * n + 1, calls.size());
    assertEquals(2 * n + 1, calls.stream().distinct().count());
    for (int i = 0; i < n; i++) {
      int binding = calls.indexOf(MockModel.bindingKey(MockModel.BD_NAME, MockModel.ifName(i)));
      assertTrue(binding > calls.indexOf(MockModel.ifKey(i)), "binding " + i + " before its if");
      assertTrue(binding > calls.indexOf(MockModel.BD_KEY), "binding " + i + " before bd1");
    }
  }

  @Test
  void derivesTheBindingValuesAndLeavesOneWhoseInterfaceIsMissingUnapplied() {
    Map<String, Object> nb = new LinkedHashMap<>();
    nb.put(MockModel.BD_KEY, new BridgeDomain(MockModel.BD_NAME, List.of("if0", "if1")));
    nb.put(MockModel.ifKey(0), MockModel.iface(0, true));
    Map<String, Object> applied = new LinkedHashMap<>();

    int made = BaselineApply.apply(nb, applied::put);

    assertEquals(3, made);
    assertEquals(
        List.of(MockModel.BD_KEY, MockModel.ifKey(0), MockModel.bindingKey("bd1", "if0")),
        List.copyOf(applied.keySet()));
    assertEquals(new Binding("bd1", "if0"), applied.get(MockModel.bindingKey("bd1", "if0")));
    assertFalse(applied.containsKey(MockModel.bindingKey("bd1", "if1")));
  }

  @Test
  void throughTheDescriptorsAppliesEveryValueOnceInDependencyOrderWithTheirCallbacks() {
    int n = 50;
    List<String> calls = new ArrayList<>();
    List<KVDescriptor<?, ?>> recording =
        List.of(
            KVDescriptor.builder("mock-interface", MockModel.Interface.class)
                .nbKeyPrefix(MockModel.IF_PREFIX)
                .createWithoutMetadata((key, v) -> calls.add(key))
                .delete((key, v, m) -> {})
                .build(),
            KVDescriptor.builder("mock-bridge-domain", BridgeDomain.class)
                .nbKeyPrefix(MockModel.BD_PREFIX)
                .createWithoutMetadata((key, v) -> calls.add(key))
                .delete((key, v, m) -> {})
                .derivedValues(MockModel.bridgeDomainDescriptor().derivedValues().orElseThrow())
                .build(),
            KVDescriptor.builder("mock-bd-interface", Binding.class)
                .keySelector(KeySelector.prefix(MockModel.BINDING_PREFIX))
                .createWithoutMetadata(
                    (key, v) -> {
                      assertEquals(MockModel.bindingKey(v.bridgeDomain(), v.iface()), key);
                      calls.add(key);
                    })
                .delete((key, v, m) -> {})
                .dependencies(MockModel.bindingDescriptor().dependencies().orElseThrow())
                .build());
    // the bridge domain lists one interface more than there are: its binding waits
    Map<String, Object> nb = new LinkedHashMap<>();
    nb.put(MockModel.BD_KEY, new BridgeDomain(MockModel.BD_NAME, MockModel.ifNames(n + 1)));
    for (int i = 0; i < n; i++) {
      nb.put(MockModel.ifKey(i), MockModel.iface(i, true));
    }

    int made = BaselineApply.applyThroughDescriptors(nb, recording);

    assertEquals(2 * n + 1, made);
    assertEquals(2 * n + 1, calls.stream().distinct().count());
    assertEquals(2 * n + 1, calls.size());
    assertFalse(calls.contains(MockModel.bindingKey(MockModel.BD_NAME, MockModel.ifName(n))));
    for (int i = 0; i < n; i++) {
      int binding = calls.indexOf(MockModel.bindingKey(MockModel.BD_NAME, MockModel.ifName(i)));
      assertTrue(binding > calls.indexOf(MockModel.ifKey(i)), "binding " + i + " before its if");
      assertTrue(binding > calls.indexOf(MockModel.BD_KEY), "binding " + i + " before bd1");
    }
    // the model's own descriptors (no-op callbacks) make the same number of calls
    assertEquals(
        2 * n + 1,
        BaselineApply.applyThroughDescriptors(
            BaselineApply.w1Values(n), BaselineApply.w1Descriptors()));
  }
}
