package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.linuxcalls.IptablesCalls;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.links.BridgeLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * iptables rule chains on the real kernel, in named namespaces of a private one: made, changed,
 * removed, adopted and repaired by resync, and a rule iptables rejects. Needs the iptables commands
 * ({@code bin/test} installs them); without them the tests fail saying so.
 */
class RuleChainKernelTest {
  KernelFixture k;
  IptablesCalls iptables;

  @BeforeEach
  void start() {
    k = KernelFixture.start();
    iptables = k.calls.iptables();
    KernelFixture.Result r = k.run("iptables-restore", "--version");
    assertThat(r.code())
        .as("iptables-restore must be installed (Debian package iptables): %s", r.err())
        .isZero();
  }

  @AfterEach
  void stop() {
    if (iptables instanceof AutoCloseable own) {
      try {
        own.close();
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    }
    if (k != null) {
      k.close();
    }
  }

  static RuleChain.Builder custom(String name, String ns, String chain, String... rules) {
    return RuleChain.newBuilder()
        .setName(name)
        .setNamespace(Values.ns(ns))
        .setChainType(RuleChain.ChainType.CUSTOM)
        .setChainName(chain)
        .addAllRules(List.of(rules));
  }

  static String key(RuleChain c) {
    return LinuxKeys.ruleChainKey(c.getName());
  }

  /** iptables-save of {@code table} in {@code ns}. */
  String save(String ns, String table) {
    return k.sh("nsenter", "--net=/run/netns/" + ns, "iptables-save", "-t", table);
  }

  /** The rules of {@code chain} in {@code ns}, as iptables-save prints them. */
  List<String> rules(String ns, String table, String chain) {
    return save(ns, table)
        .lines()
        .filter(l -> l.startsWith("-A " + chain + " "))
        .map(l -> l.substring(("-A " + chain + " ").length()))
        .toList();
  }

  void restoreByHand(String ns, String input) {
    try {
      iptables.restore(ns, false, input);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  static final RuleChain WEB =
      custom("web", "ns1", "KVS-WEB", "-p tcp --dport 80 -j DROP", "-s 10.0.0.1 -j ACCEPT").build();

  static final RuleChain INPUT =
      RuleChain.newBuilder()
          .setName("input")
          .setNamespace(Values.ns("ns1"))
          .setChainType(RuleChain.ChainType.INPUT)
          .setDefaultPolicy(RuleChain.Policy.DROP)
          .addRules("-i lo -j ACCEPT")
          .addRules("-j KVS-WEB")
          .build();

  static final RuleChain NAT =
      RuleChain.newBuilder()
          .setName("nat")
          .setNamespace(Values.ns("ns1"))
          .setTable(RuleChain.Table.NAT)
          .setChainType(RuleChain.ChainType.POSTROUTING)
          .addRules("-s 10.1.0.0/16 -j MASQUERADE")
          .build();

  static final RuleChain V6 =
      RuleChain.newBuilder()
          .setName("v6")
          .setNamespace(Values.ns("ns1"))
          .setProtocol(RuleChain.Protocol.IPV6)
          .setChainType(RuleChain.ChainType.CUSTOM)
          .setChainName("KVS-V6")
          .addRules("-s 2001:db8::1 -p udp --dport 53 -j ACCEPT")
          .build();

  Map<String, Object> all() {
    Map<String, Object> m = new LinkedHashMap<>();
    for (RuleChain c : List.of(WEB, INPUT, NAT, V6)) {
      m.put(key(c), c);
    }
    return m;
  }

  @Test
  void chainsAreMadeInTheirTablesWithOneRestorePerNamespaceAndFamily() {
    long before = k.plugin.iptablesRestores();
    k.change(all());

    for (String key : all().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(rules("ns1", "filter", "KVS-WEB"))
        .containsExactly("-p tcp -m tcp --dport 80 -j DROP", "-s 10.0.0.1/32 -j ACCEPT");
    assertThat(rules("ns1", "filter", "INPUT")).containsExactly("-i lo -j ACCEPT", "-j KVS-WEB");
    assertThat(save("ns1", "filter")).contains(":INPUT DROP");
    assertThat(rules("ns1", "nat", "POSTROUTING")).containsExactly("-s 10.1.0.0/16 -j MASQUERADE");
    assertThat(
            k.sh("nsenter", "--net=/run/netns/ns1", "ip6tables-save", "-t", "filter")
                .lines()
                .filter(l -> l.startsWith("-A KVS-V6 ")))
        .containsExactly("-A KVS-V6 -s 2001:db8::1/128 -p udp -m udp --dport 53 -j ACCEPT");
    // one restore process per namespace and family (nf_tables backend: long-running), else one
    // per chain; never one per rule
    boolean nft = k.sh("iptables-restore", "--version").contains("nf_tables");
    assertThat(k.plugin.iptablesRestores() - before).isLessThanOrEqualTo(nft ? 2 : 4);
  }

  @Test
  void changingOneRuleRewritesThatChainOnly() {
    k.change(all());
    // a rule added by hand to another chain shows which chains the change touched
    restoreByHand("ns1", "*nat\n-A POSTROUTING -s 10.9.0.0/16 -j MASQUERADE\nCOMMIT\n");
    RuleChain changed = WEB.toBuilder().setRules(0, "-p tcp --dport 8080 -j DROP").build();

    long seq = k.put(key(changed), changed);

    RecordedTxn txn = k.kvs.recordedTransaction(seq).orElseThrow();
    assertThat(KernelFixture.sbOperations(txn)).containsExactly("UPDATE " + key(WEB));
    assertThat(rules("ns1", "filter", "KVS-WEB"))
        .containsExactly("-p tcp -m tcp --dport 8080 -j DROP", "-s 10.0.0.1/32 -j ACCEPT");
    assertThat(rules("ns1", "nat", "POSTROUTING"))
        .containsExactly("-s 10.1.0.0/16 -j MASQUERADE", "-s 10.9.0.0/16 -j MASQUERADE");
    assertThat(rules("ns1", "filter", "INPUT")).containsExactly("-i lo -j ACCEPT", "-j KVS-WEB");
  }

  @Test
  void thePolicyChangesInPlaceAndGoesBackToAcceptWhenUnset() {
    k.change(all());
    RuleChain accept = INPUT.toBuilder().setDefaultPolicy(RuleChain.Policy.ACCEPT).build();
    long seq = k.put(key(accept), accept);
    assertThat(KernelFixture.sbOperations(k.kvs.recordedTransaction(seq).orElseThrow()))
        .containsExactly("UPDATE " + key(INPUT));
    assertThat(save("ns1", "filter")).contains(":INPUT ACCEPT");

    RuleChain drop = INPUT.toBuilder().setDefaultPolicy(RuleChain.Policy.DROP).build();
    k.put(key(drop), drop);
    assertThat(save("ns1", "filter")).contains(":INPUT DROP");
    RuleChain none = INPUT.toBuilder().setDefaultPolicy(RuleChain.Policy.NONE).build();
    k.put(key(none), none);
    assertThat(save("ns1", "filter")).contains(":INPUT ACCEPT");
    assertThat(rules("ns1", "filter", "INPUT")).containsExactly("-i lo -j ACCEPT", "-j KVS-WEB");
  }

  @Test
  void aNewChainNameRecreatesTheChain() {
    k.change(all());
    RuleChain renamed = WEB.toBuilder().setChainName("KVS-WEB2").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(key(INPUT), INPUT.toBuilder().setRules(1, "-j KVS-WEB2").build());
    m.put(key(renamed), renamed);

    long seq = k.change(m);

    assertThat(KernelFixture.sbOperations(k.kvs.recordedTransaction(seq).orElseThrow()))
        .contains("DELETE " + key(WEB), "CREATE " + key(WEB));
    assertThat(save("ns1", "filter")).doesNotContain(":KVS-WEB ").contains(":KVS-WEB2 ");
    assertThat(rules("ns1", "filter", "KVS-WEB2")).hasSize(2);
    assertThat(k.state(key(WEB))).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void deleteRemovesCustomChainsAndFlushesBuiltInOnes() {
    k.change(all());
    Map<String, Object> gone = new LinkedHashMap<>();
    all().keySet().forEach(key -> gone.put(key, null));

    k.change(gone);

    for (String key : all().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.NONEXISTENT);
    }
    String filter = save("ns1", "filter");
    assertThat(filter).doesNotContain("KVS-WEB").contains(":INPUT ACCEPT");
    assertThat(rules("ns1", "filter", "INPUT")).isEmpty();
    assertThat(rules("ns1", "nat", "POSTROUTING")).isEmpty();
    assertThat(k.sh("nsenter", "--net=/run/netns/ns1", "ip6tables-save")).doesNotContain("KVS-V6");
  }

  @Test
  void aResyncAfterARestartAdoptsTheChainsAndASecondOneDoesNothing() {
    k.change(all());
    k.restartAgent();

    RecordedTxn first = k.fullResync();
    RecordedTxn second = k.fullResync();

    assertThat(KernelFixture.sbOperations(first)).isEmpty();
    assertThat(KernelFixture.sbOperations(second)).isEmpty();
    for (String key : all().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
    }
  }

  @Test
  void aRuleChangedByHandIsRepairedByADownstreamResync() throws TransactionException {
    k.change(all());
    restoreByHand(
        "ns1",
        "*filter\n-R KVS-WEB 1 -p tcp --dport 81 -j DROP\n-A INPUT -j ACCEPT\nCOMMIT\n"
            + "*nat\n-F POSTROUTING\nCOMMIT\n");
    assertThat(rules("ns1", "filter", "KVS-WEB")).contains("-p tcp -m tcp --dport 81 -j DROP");

    long seq =
        k.kvs
            .startNBTransaction()
            .commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());

    assertThat(KernelFixture.sbOperations(k.kvs.recordedTransaction(seq).orElseThrow()))
        .containsExactlyInAnyOrder(
            "UPDATE " + key(WEB), "UPDATE " + key(INPUT), "UPDATE " + key(NAT));
    assertThat(rules("ns1", "filter", "KVS-WEB"))
        .containsExactly("-p tcp -m tcp --dport 80 -j DROP", "-s 10.0.0.1/32 -j ACCEPT");
    assertThat(rules("ns1", "filter", "INPUT")).containsExactly("-i lo -j ACCEPT", "-j KVS-WEB");
    assertThat(rules("ns1", "nat", "POSTROUTING")).containsExactly("-s 10.1.0.0/16 -j MASQUERADE");
    long again =
        k.kvs
            .startNBTransaction()
            .commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(KernelFixture.sbOperations(k.kvs.recordedTransaction(again).orElseThrow()))
        .isEmpty();
  }

  @Test
  void aChainDeletedByHandIsMadeAgainByAFullResync() {
    k.change(Map.of(key(WEB), WEB));
    restoreByHand("ns1", "*filter\n-F KVS-WEB\n-X KVS-WEB\nCOMMIT\n");

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync)).containsExactly("CREATE " + key(WEB));
    assertThat(rules("ns1", "filter", "KVS-WEB")).hasSize(2);
  }

  @Test
  void aRuleIptablesRejectsFailsItsChainWithIptablesMessageAndLeavesTheOthers() {
    RuleChain bad =
        custom("bad", "ns1", "KVS-BAD", "-j ACCEPT", "-p tcp --dportx 80 -j DROP").build();
    Map<String, Object> m = new LinkedHashMap<>(all());
    m.put(key(bad), bad);

    k.change(m);

    assertThat(k.state(key(bad))).isIn(ValueState.FAILED, ValueState.RETRYING);
    assertThat(k.status(key(bad)).value().error())
        .contains("unknown option \"--dportx\"")
        .contains("-A KVS-BAD -p tcp --dportx 80 -j DROP");
    for (String key : all().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(save("ns1", "filter")).doesNotContain("KVS-BAD");
    assertThat(rules("ns1", "filter", "KVS-WEB")).hasSize(2);

    // later, through the same restore process: the line is still the chain's own
    RuleChain later = custom("later", "ns1", "KVS-LATER", "-j ACCEPT", "-j ACCEPT", "-x").build();
    k.put(key(later), later);
    assertThat(k.status(key(later)).value().error())
        .contains("Error occurred at line: 6")
        .contains("in the line: -A KVS-LATER -x");
    assertThat(rules("ns1", "filter", "KVS-WEB")).hasSize(2);
  }

  @Test
  void aChainJumpingToAnotherWaitsForItAndIsRemovedBeforeIt() {
    k.put(key(INPUT), INPUT);
    assertThat(k.state(key(INPUT))).isEqualTo(ValueState.PENDING);

    k.put(key(WEB), WEB);
    assertThat(k.state(key(INPUT))).isEqualTo(ValueState.CONFIGURED);
    assertThat(rules("ns1", "filter", "INPUT")).containsExactly("-i lo -j ACCEPT", "-j KVS-WEB");

    k.put(key(WEB), null);
    assertThat(k.state(key(WEB))).isEqualTo(ValueState.NONEXISTENT);
    assertThat(k.state(key(INPUT))).isEqualTo(ValueState.PENDING);
    assertThat(save("ns1", "filter")).doesNotContain("KVS-WEB");
  }

  @Test
  void aChainWaitsForTheInterfacesItNames() {
    RuleChain withIface = WEB.toBuilder().addInterfaces("veth1").build();
    k.put(key(withIface), withIface);
    assertThat(k.state(key(withIface))).isEqualTo(ValueState.PENDING);
    assertThat(k.run("nsenter", "--net=/run/netns/ns1", "iptables-save").out())
        .doesNotContain("KVS-WEB");

    k.put(Values.key(Topology.VETH1), Topology.VETH1);
    k.put(Values.key(Topology.VETH2), Topology.VETH2);

    assertThat(k.state(key(withIface))).isEqualTo(ValueState.CONFIGURED);
    assertThat(rules("ns1", "filter", "KVS-WEB")).hasSize(2);
  }

  @Test
  void aChainWaitsForTheLinksItNamesAsForInterfaces() {
    RuleChain withBridge = WEB.toBuilder().addInterfaces("br9").build();
    k.put(key(withBridge), withBridge);
    assertThat(k.state(key(withBridge))).isEqualTo(ValueState.PENDING);
    assertThat(k.status(key(withBridge)).value().details()).containsExactly("interface-exists-br9");

    Link bridge =
        LinkKernelTest.link("br9", "ns1").setBridge(BridgeLink.getDefaultInstance()).build();
    k.put(LinkKernelTest.key(bridge), bridge);
    assertThat(k.state(LinkKernelTest.key(bridge))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(key(withBridge))).isEqualTo(ValueState.CONFIGURED);
    assertThat(rules("ns1", "filter", "KVS-WEB")).hasSize(2);

    // the link removed: the chain waits again, and leaves the kernel
    k.put(LinkKernelTest.key(bridge), null);
    assertThat(k.state(key(withBridge))).isEqualTo(ValueState.PENDING);
    assertThat(save("ns1", "filter")).doesNotContain("KVS-WEB");
  }
}
