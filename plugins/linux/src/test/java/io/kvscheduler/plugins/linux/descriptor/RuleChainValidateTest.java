package io.kvscheduler.plugins.linux.descriptor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a rule chain must be before it reaches iptables, and what it depends on. */
class RuleChainValidateTest {
  static final String KEY = LinuxKeys.ruleChainKey("c");

  static RuleChain.Builder custom() {
    return RuleChain.newBuilder()
        .setName("c")
        .setChainType(RuleChain.ChainType.CUSTOM)
        .setChainName("WEB")
        .addRules("-p tcp --dport 80 -j DROP");
  }

  static InvalidValueException invalid(RuleChain c) {
    return catchThrowableOfType(
        () -> RuleChainDescriptor.validate(KEY, c), InvalidValueException.class);
  }

  @Test
  void aWellFormedChainIsValid() {
    assertThatCode(() -> RuleChainDescriptor.validate(KEY, custom().build()))
        .doesNotThrowAnyException();
    RuleChain input =
        RuleChain.newBuilder()
            .setName("in")
            .setChainType(RuleChain.ChainType.INPUT)
            .setDefaultPolicy(RuleChain.Policy.DROP)
            .build();
    assertThatCode(() -> RuleChainDescriptor.validate(KEY, input)).doesNotThrowAnyException();
  }

  @Test
  void unknownTableChainTypeProtocolOrPolicyIsInvalidNamingTheField() {
    assertThat(invalid(custom().setTableValue(9).build()).invalidFields()).containsExactly("table");
    assertThat(invalid(custom().setChainTypeValue(17).build()).invalidFields())
        .containsExactly("chain_type");
    assertThat(invalid(custom().setProtocolValue(2).build()).invalidFields())
        .containsExactly("protocol");
    assertThat(
            invalid(
                    custom()
                        .setChainType(RuleChain.ChainType.INPUT)
                        .setChainName("")
                        .setDefaultPolicyValue(7)
                        .build())
                .invalidFields())
        .containsExactly("default_policy");
  }

  @Test
  void aBuiltInChainTheTableLacksIsInvalid() {
    InvalidValueException e =
        invalid(
            custom()
                .setTable(RuleChain.Table.NAT)
                .setChainType(RuleChain.ChainType.FORWARD)
                .setChainName("")
                .build());
    assertThat(e.invalidFields()).containsExactly("chain_type");
    assertThat(e.reason()).contains("NAT has no built-in chain FORWARD");
  }

  @Test
  void namesPoliciesRulesAndNamespacesIptablesWouldNotTake() {
    assertThat(invalid(custom().setChainName("").build()).invalidFields())
        .containsExactly("chain_name");
    assertThat(invalid(custom().setChainName("A".repeat(29)).build()).invalidFields())
        .containsExactly("chain_name");
    assertThat(invalid(custom().setChainName("has space").build()).invalidFields())
        .containsExactly("chain_name");
    assertThat(invalid(custom().setChainName("-X").build()).invalidFields())
        .containsExactly("chain_name");
    assertThat(invalid(custom().setDefaultPolicy(RuleChain.Policy.DROP).build()).invalidFields())
        .containsExactly("default_policy");
    assertThat(
            invalid(
                    custom()
                        .setChainType(RuleChain.ChainType.OUTPUT)
                        .setChainName("")
                        .setDefaultPolicy(RuleChain.Policy.QUEUE)
                        .build())
                .invalidFields())
        .containsExactly("default_policy");
    assertThat(invalid(custom().addRules("-j ACCEPT\nCOMMIT").build()).invalidFields())
        .containsExactly("rules[1]");
    assertThat(invalid(custom().addRules(" ").build()).invalidFields()).containsExactly("rules[1]");
    assertThat(invalid(custom().setName("").build()).invalidFields()).containsExactly("name");
    assertThat(
            invalid(
                    custom()
                        .setNamespace(
                            NetNamespace.newBuilder()
                                .setType(NetNamespace.ReferenceType.PID)
                                .setReference("0"))
                        .build())
                .invalidFields())
        .containsExactly("namespace");
    // a process's namespace is taken (it waits for the process)
    assertThat(
            invalid(
                custom()
                    .setNamespace(
                        NetNamespace.newBuilder()
                            .setType(NetNamespace.ReferenceType.PID)
                            .setReference("1"))
                    .build()))
        .isNull();
    assertThat(
            invalid(
                    custom()
                        .setNamespace(
                            NetNamespace.newBuilder()
                                .setType(NetNamespace.ReferenceType.NSID)
                                .setReference("../x"))
                        .build())
                .invalidFields())
        .containsExactly("namespace");
  }

  @Test
  void aJumpIsTheWordAfterAJumpOrGotoOption() {
    RuleChain c =
        RuleChain.newBuilder()
            .setName("c")
            .setChainType(RuleChain.ChainType.CUSTOM)
            .setChainName("SELF")
            .addRules("-p udp --jump  LONG")
            .addRules("-p tcp\t--goto\t'QUOTED'")
            .addRules("  -j   SPACED  ")
            .addRules("-jGLUED -m comment --comment -junk")
            .addRules("-m comment --comment x-j -j SELF")
            .addRules("-j -g")
            .addRules("-s 10.0.0.1 -j DROP")
            .addRules("-j LONG")
            .addRules("-j")
            .build();
    // a word glued to its option, or an option inside another word, is no jump; the chain's own
    // name and iptables' targets are no dependency; a name is listed once, in first-seen order
    assertThat(RuleChainDescriptor.jumps(c)).containsExactly("LONG", "QUOTED", "SPACED", "-g");
  }

  @Test
  void dependsOnItsInterfacesAndTheChainsItJumpsTo() {
    RuleChain input =
        RuleChain.newBuilder()
            .setName("in")
            .setNamespace(
                NetNamespace.newBuilder()
                    .setType(NetNamespace.ReferenceType.NSID)
                    .setReference("ns1"))
            .setChainType(RuleChain.ChainType.INPUT)
            .addInterfaces("veth1")
            .addRules("-i veth1 -j WEB")
            .addRules("-j ACCEPT")
            .addRules("-p tcp -g \"OTHER\"")
            .addRules("-j LOG --log-prefix x")
            .build();
    assertThat(RuleChainDescriptor.jumps(input)).containsExactly("WEB", "OTHER");
    assertThat(RuleChainDescriptor.dependencies(KEY, input))
        .extracting(d -> d.label())
        .containsExactly("interface-exists-veth1", "chain-exists-WEB", "chain-exists-OTHER");
    assertThat(RuleChainDescriptor.derived(KEY, input)).isEmpty();
    RuleChain web =
        input.toBuilder().setChainType(RuleChain.ChainType.CUSTOM).setChainName("WEB").build();
    assertThat(RuleChainDescriptor.derived(KEY, web))
        .extracting(kv -> kv.key())
        .containsExactly("linux/iptables/chain/ns1/ipv4/filter/WEB");
    assertThat(RuleChainDescriptor.chainKey(input, "WEB"))
        .isEqualTo("linux/iptables/chain/ns1/ipv4/filter/WEB");
    assertThat(List.of(RuleChainDescriptor.applyLines(web)))
        .containsExactly(
            List.of(
                ":WEB - [0:0]",
                "-F WEB",
                "-A WEB -i veth1 -j WEB",
                "-A WEB -j ACCEPT",
                "-A WEB -p tcp -g \"OTHER\"",
                "-A WEB -j LOG --log-prefix x"));
  }
}
