package io.kvscheduler.agent.internal.northbound;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * Inputs for fuzzing the parsers: valid documents of every format mutated (cut, bytes removed, YAML
 * and JSON tokens inserted, lines repeated, moved or re-indented, characters YAML refuses), random
 * text over YAML's alphabet, and random JSON trees with the models' field names. Each input comes
 * from a seed jqwik draws, so a failure names its seed and shrinks.
 */
final class FuzzInputs {
  private FuzzInputs() {}

  static final String KEYED_YAML =
      """
      config/mock/v1/interfaces/tap1:
        name: tap1
        type: TAP
        enabled: true
        phys_address: "aa:bb:cc:00:00:01"
      config/mock/v1/interfaces/loop1:
        name: loop1
        type: LOOPBACK
      config/mock/v1/bridge-domain/bd1:
        name: bd1
        interfaces:
        - name: tap1
        - name: loop1
          bridged_virtual_interface: true
      config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10:
        phys_address: "aa:bb:cc:00:00:10"
        bridge_domain: bd1
        outgoing_interface: tap1
      """;

  static final String VPP_YAML =
      """
      mockConfig:
        Interface_list:
        - name: tap1
          type: TAP
          enabled: true
          physAddress: "aa:bb:cc:00:00:01"
        - name: loop1
          type: LOOPBACK
        BridgeDomain_list:
        - name: bd1
          interfaces:
          - name: tap1
          - name: loop1
            bridgedVirtualInterface: true
        FIBEntry_list:
        - physAddress: "aa:bb:cc:00:00:10"
          bridgeDomain: bd1
          outgoingInterface: tap1
          action: DROP
      """;

  static final String KEYED_JSON =
      """
      {"config/mock/v1/interfaces/tap1": {"name": "tap1", "type": "TAP", "enabled": true,
        "phys_address": "aa:bb:cc:00:00:01"},
       "config/mock/v1/interfaces/loop1": {"name": "loop1", "type": 1},
       "config/mock/v1/bridge-domain/bd1": {"name": "bd1", "interfaces": [{"name": "tap1"},
         {"name": "loop1", "bridgedVirtualInterface": true}]},
       "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10": {"physAddress": "aa:bb:cc:00:00:10",
         "bridge_domain": "bd1", "outgoing_interface": "tap1", "action": "FORWARD"}}
      """;

  static final String VPP_JSON =
      """
      {"mockConfig": {"Interface_list": [{"name": "tap1", "type": "TAP", "enabled": true},
        {"name": "loop1", "type": "LOOPBACK"}],
       "BridgeDomain_list": [{"name": "bd1", "interfaces": [{"name": "tap1"}]}],
       "FIBEntry_list": [{"physAddress": "aa:bb:cc:00:00:10", "bridgeDomain": "bd1",
         "outgoingInterface": "tap1"}]}}
      """;

  /** A value of each model, in its JSON (as etcd holds them), keyed by key. */
  static final List<String[]> MODEL_VALUES =
      List.of(
          new String[] {
            "config/mock/v1/interfaces/tap1",
            "{\"name\": \"tap1\", \"type\": \"TAP\", \"enabled\": true,"
                + " \"phys_address\": \"aa:bb:cc:00:00:01\"}"
          },
          new String[] {
            "config/mock/v1/bridge-domain/bd1",
            "{\"name\": \"bd1\", \"interfaces\": [{\"name\": \"tap1\"},"
                + " {\"name\": \"loop1\", \"bridged_virtual_interface\": true}]}"
          },
          new String[] {
            "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10",
            "{\"phys_address\": \"aa:bb:cc:00:00:10\", \"bridge_domain\": \"bd1\","
                + " \"action\": \"DROP\", \"outgoing_interface\": \"\"}"
          });

  /** Field names of the models (both spellings), and some others. */
  static final List<String> FIELD_NAMES =
      List.of(
          "name",
          "type",
          "enabled",
          "phys_address",
          "physAddress",
          "interfaces",
          "bridged_virtual_interface",
          "bridgedVirtualInterface",
          "bridge_domain",
          "bridgeDomain",
          "action",
          "outgoing_interface",
          "outgoingInterface",
          "mockConfig",
          "Interface_list",
          "BridgeDomain_list",
          "FIBEntry_list",
          "vppConfig",
          "config/mock/v1/interfaces/tap1",
          "config/mock/v1/interfaces/",
          "config/mock/v1/fib/x",
          "",
          " ",
          "nme",
          "__proto__",
          "ÿ",
          "名前",
          "a.b",
          "0");

  /** Pieces of YAML and JSON syntax inserted into documents. */
  private static final List<String> TOKENS =
      List.of(
          ": ",
          ":",
          "- ",
          "-",
          "? ",
          "{",
          "}",
          "[",
          "]",
          ",",
          "\"",
          "'",
          "\\",
          "\\u",
          "\\x",
          "\\U0010FFFF",
          "#",
          "# c\n",
          "\n",
          "\r\n",
          "\r",
          "\t",
          "  ",
          "    ",
          "&a ",
          "*a",
          "*b",
          "&a [x, *a]",
          "<<: *a\n",
          "!!binary ",
          "!!int ",
          "!!str ",
          "!!float ",
          "!!map ",
          "!!seq ",
          "!!python/object ",
          "!<tag:x> ",
          "!e! ",
          "|\n",
          "|-\n",
          ">+\n",
          "|2\n",
          "---\n",
          "...\n",
          "%YAML 1.2\n",
          "%TAG ! tag:x:\n",
          "~",
          "null",
          "Null",
          "true",
          "yes",
          "off",
          "y",
          "0x1F",
          "0o17",
          "017",
          "1_000",
          "1e999999",
          "-1e-999",
          ".inf",
          "-.Inf",
          ".nan",
          "2001-12-14t21:59:43.10-05:00",
          "12:30:45",
          "9223372036854775808",
          "-2147483649",
          "1.5",
          "0.0",
          "-0",
          "1e3",
          "\"\\ud800\"",
          "\"\\u0000\"",
          "@",
          "`",
          "%",
          "\uFEFF",
          "\u0085",
          "\u2028",
          "\u00A0",
          "\uD83D\uDE00",
          "tap1",
          "TAP",
          "LOOPBACK",
          "DROP",
          "UNDEFINED_TYPE",
          "name: tap1\n",
          "- name: x\n",
          "{}",
          "[]",
          "\"\"",
          "''",
          "{a: }");

  /** Characters of YAML's and JSON's syntax, and some letters and digits. */
  private static final String ALPHABET = " abcxyz019:-{}[],'\"#&*!|>%@`\n\t\\";

  /** Code points a document may happen to hold, YAML refusing some of them. */
  private static final int[] ODD = {
    0, 1, 7, 8, 0x0B, 0x0C, 0x1B, 0x7F, 0x80, 0x9F, 0xD800, 0xDFFF, 0xFFFE, 0xFFFF, 0x10FFFF,
    0xFEFF, 0x85, 0x2028
  };

  /** Mutations of the given documents. */
  static Arbitrary<String> mutationsOf(String... seeds) {
    return Combinators.combine(
            Arbitraries.of(seeds), Arbitraries.longs(), Arbitraries.integers().between(1, 6))
        .as((s, r, n) -> mutate(s, new Random(r), n));
  }

  /** Random text over YAML's and JSON's alphabet, and tokens. */
  static Arbitrary<String> randomText() {
    return Arbitraries.longs()
        .map(
            r -> {
              Random rnd = new Random(r);
              StringBuilder b = new StringBuilder();
              int n = rnd.nextInt(60);
              for (int i = 0; i < n; i++) {
                if (rnd.nextInt(3) == 0) {
                  b.append(TOKENS.get(rnd.nextInt(TOKENS.size())));
                } else {
                  b.append(ALPHABET.charAt(rnd.nextInt(ALPHABET.length())));
                }
              }
              return b.toString();
            });
  }

  /** Random trees rendered as JSON text (also YAML: flow style). */
  static Arbitrary<String> randomTreeText() {
    return randomTrees().map(JsonNode::toString);
  }

  /** Random JSON trees: objects with the models' field names, scalars of every type. */
  static Arbitrary<JsonNode> randomTrees() {
    return randomTrees(FIELD_NAMES);
  }

  /**
   * Random JSON trees whose objects take their field names (and some strings) from {@code names}.
   */
  static Arbitrary<JsonNode> randomTrees(List<String> names) {
    return Arbitraries.longs().map(r -> tree(new Random(r), 0, true, names));
  }

  /** The field names of the iptables rule chain, its enum names, and the models' field names. */
  static final List<String> RULE_CHAIN_NAMES =
      java.util.stream.Stream.concat(
              List.of(
                  "namespace",
                  "reference",
                  "NSID",
                  "protocol",
                  "IPV6",
                  "table",
                  "NAT",
                  "chain_type",
                  "chainType",
                  "CUSTOM",
                  "POSTROUTING",
                  "chain_name",
                  "chainName",
                  "default_policy",
                  "defaultPolicy",
                  "DROP",
                  "rules",
                  "-j ACCEPT")
                  .stream(),
              FIELD_NAMES.stream())
          .toList();

  /** The field names of an address allocation, references, and the models' field names. */
  static final List<String> IP_ALLOCATION_NAMES =
      java.util.stream.Stream.concat(
              List.of(
                  "network_name",
                  "networkName",
                  "interface_name",
                  "interfaceName",
                  "address",
                  "gw",
                  "10.0.1.1/24",
                  "2001:db8::1",
                  "alloc:net1/GW")
                  .stream(),
              FIELD_NAMES.stream())
          .toList();

  private static JsonNode tree(Random r, int depth, boolean object, List<String> names) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    int pick = object ? 0 : r.nextInt(depth > 4 ? 8 : 10);
    switch (pick) {
      case 0 -> {
        ObjectNode o = f.objectNode();
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
          o.set(names.get(r.nextInt(names.size())), tree(r, depth + 1, false, names));
        }
        return o;
      }
      case 1 -> {
        return f.textNode(TOKENS.get(r.nextInt(TOKENS.size())));
      }
      case 2 -> {
        return f.textNode(names.get(r.nextInt(names.size())));
      }
      case 3 -> {
        return f.numberNode(r.nextInt(3) == 0 ? r.nextLong() : r.nextInt(5) - 1);
      }
      case 4 -> {
        return f.numberNode(r.nextBoolean() ? r.nextDouble() * 1e6 : 1.0);
      }
      case 5 -> {
        return f.booleanNode(r.nextBoolean());
      }
      case 6 -> {
        return f.nullNode();
      }
      case 7 -> {
        return f.numberNode(new BigInteger(80, r));
      }
      case 8 -> {
        ArrayNode a = f.arrayNode();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
          a.add(tree(r, depth + 1, false, names));
        }
        return a;
      }
      default -> {
        return tree(r, depth + 1, true, names);
      }
    }
  }

  static String mutate(String s, Random r, int ops) {
    StringBuilder b = new StringBuilder(s);
    for (int k = 0; k < ops; k++) {
      int at = b.length() == 0 ? 0 : r.nextInt(b.length() + 1);
      switch (r.nextInt(9)) {
        case 0 -> b.setLength(at);
        case 1 -> b.delete(at, Math.min(b.length(), at + 1 + r.nextInt(20)));
        case 2, 3 -> b.insert(at, TOKENS.get(r.nextInt(TOKENS.size())));
        case 4 -> {
          if (at < b.length()) {
            b.setCharAt(at, ALPHABET.charAt(r.nextInt(ALPHABET.length())));
          }
        }
        case 5 -> b.insert(at, Character.toChars(ODD[r.nextInt(ODD.length)]));
        case 6 -> {
          String[] lines = b.toString().split("\n", -1);
          int i = r.nextInt(lines.length);
          int j = r.nextInt(lines.length);
          String line = lines[i];
          b.setLength(0);
          for (int x = 0; x < lines.length; x++) {
            b.append(lines[x]).append(x + 1 < lines.length ? "\n" : "");
            if (x == j) {
              b.append(line).append("\n"); // the line repeated (a duplicate key, an item more)
            }
          }
        }
        case 7 -> {
          String[] lines = b.toString().split("\n", -1);
          int i = r.nextInt(lines.length);
          lines[i] =
              r.nextBoolean() ? " ".repeat(1 + r.nextInt(4)) + lines[i] : lines[i].stripLeading();
          b.setLength(0);
          b.append(String.join("\n", lines));
        }
        default -> {
          if (b.length() > 0) {
            int from = r.nextInt(b.length());
            int to = Math.min(b.length(), from + 1 + r.nextInt(40));
            b.insert(at, b.substring(from, to)); // a piece copied elsewhere
          }
        }
      }
    }
    return b.toString();
  }
}
