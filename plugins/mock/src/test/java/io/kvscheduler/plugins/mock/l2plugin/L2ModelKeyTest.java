package io.kvscheduler.plugins.mock.l2plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model.BdInterfaceKey;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The keys of the bridge domains' interface bindings, read back into their two names. */
class L2ModelKeyTest {
  @Test
  @DisplayName("a binding's key gives its bridge domain and interface; other keys give nothing")
  void bindingKeys() {
    assertThat(L2Model.parseBdInterfaceKey("mock/bd/bd1/interface/if1"))
        .contains(new BdInterfaceKey("bd1", "if1"));
    assertThat(L2Model.parseBdInterfaceKey("mock/bd/bd1/interface/a/b"))
        .contains(new BdInterfaceKey("bd1", "a/b"));
    assertThat(L2Model.parseBdInterfaceKey("mock/bd//interface/x"))
        .contains(new BdInterfaceKey("", "x"));
    assertThat(L2Model.parseBdInterfaceKey("mock/bd/bd1/interface/"))
        .contains(new BdInterfaceKey("bd1", ""));
    assertThat(L2Model.parseBdInterfaceKey(L2Model.bdInterfaceKey("bd7", "tap/0")))
        .contains(new BdInterfaceKey("bd7", "tap/0"));
    for (String other :
        new String[] {
          "mock/bd/bd1",
          "mock/bd/bd1/",
          "mock/bd/bd1/iface/x",
          "mock/bd/bd1/interfacex/y",
          "mock/bd/a/b/interface/x",
          "config/mock/v1/interfaces/if1",
          "config/mock/v1/bridge-domain/bd1",
          "mock/bd"
        }) {
      assertThat(L2Model.parseBdInterfaceKey(other)).as(other).isEqualTo(Optional.empty());
    }
  }
}
