#!/usr/bin/env bash
# The Linux plugin, hands on: runs the agent in a private network namespace (no root needed),
# brings up an example configuration, shows the traffic it carries, breaks things by hand and
# shows the agent repair them, then tears everything down. Exits non-zero as soon as a step does
# not do what it should.
#
#   examples/linux/demo.sh          examples/linux/config: two namespaces joined by a veth pair,
#                                   a route via a gateway, an ARP entry; then a route change that
#                                   breaks ping, committed with --confirm-within: the agent's ping
#                                   probe fails and the agent rolls the change back
#   examples/linux/demo.sh bridge   examples/linux/config-bridge: two namespaces joined by bridges
#                                   and a VXLAN tunnel, an iptables chain dropping TCP port 8081
#
# Needs: Linux with user and network namespaces, iproute2 (ip), ping, unshare and JDK 17; the
# bridge scenario also iptables (iptables-restore, iptables-save), python3, curl and timeout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

scenario=${1:-veth}
case "$scenario" in
  veth) tools="ip ping unshare java"; config=config ;;
  bridge) tools="ip ping unshare java iptables iptables-restore iptables-save python3 curl timeout"
    config=config-bridge ;;
  *) echo "usage: $0 [bridge]" >&2; exit 2 ;;
esac

if [ -z "${KVS_DEMO_INSIDE:-}" ]; then
  for tool in $tools; do
    command -v "$tool" >/dev/null 2>&1 || { echo "demo: '$tool' not found" >&2; exit 1; }
  done
  echo "== building the agent (first run only) =="
  "$root/bin/kvs-agent" run --help >/dev/null
  "$root/bin/kvsctl" --help >/dev/null
  echo "== entering a private user + network + mount namespace (nothing of the host is touched) =="
  exec unshare --user --map-root-user --net --mount --propagation private \
    env KVS_DEMO_INSIDE=1 "$0" "$@"
fi

# ---- from here on: inside the private namespace -------------------------------------------
mkdir -p /run/netns
mount -t tmpfs kvs-netns /run/netns   # named namespaces of our own
ip link set lo up
work=$(mktemp -d)
cp "$root"/examples/linux/"$config"/*.yaml "$work/"
side=$(mktemp -d)   # the agent's settings and what is pushed over REST: not in the config dir
log=$work/agent.log
agent_pid=""

fail() {
  echo "demo: FAILED: $*" >&2
  echo "---- last lines of the agent's log ($log) ----" >&2
  tail -n 40 "$log" >&2 || true
  exit 1
}

rest=127.0.0.1:9191 # the REST port of the private namespace's loopback
# the probe a confirmed commit must pass (step 7): ping from ns1 to the loopback of ns2
cat >"$side/settings.yaml" <<'YAML'
probes:
- name: ping-ns2
  command: [ping, -c, "1", -W, "1", 10.0.2.1]
  netns: ns1
  timeout: 5s
YAML
start_agent() {
  "$root/bin/kvs-agent" run --config "$side/settings.yaml" --linux --config-dir "$work" \
    --rest "$rest" --state-dir "$side/state" >>"$log" 2>&1 &
  agent_pid=$!
}

stop_agent() {
  if [ -n "$agent_pid" ]; then
    kill -TERM "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
    agent_pid=""
  fi
}
listener_pid=""
stop_all() {
  stop_agent
  if [ -n "$listener_pid" ]; then
    kill -TERM "$listener_pid" 2>/dev/null || true
    wait "$listener_pid" 2>/dev/null || true
  fi
}
trap stop_all EXIT

# waits up to $1 seconds for the command after it to succeed
wait_for() {
  local limit=$1; shift
  for _ in $(seq $((limit * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  return 1
}

can_ping() { ip netns exec ns1 ping -c 1 -W 1 10.0.2.1; }

# the status the agent's transaction log reports for each value, from line $1 of the log on
show_status() {
  tail -n "+$1" "$log" | awk '
    /^ *[0-9]+\. (CREATE|UPDATE|DELETE)/ {
      op = $2; sub(":", "", op); flags = ""
      if (match($0, /\[[^]]*\]/)) flags = substr($0, RSTART + 1, RLENGTH - 2)
      next
    }
    /^ *- key: / && op != "" {
      key = $3
      state = (op == "DELETE") ? "REMOVED" : "CONFIGURED"
      if (flags ~ /IS-PENDING|STILL-PENDING/) state = "PENDING"
      if (flags ~ /FAILED|STILL-FAILING/) state = "FAILED"
      if (flags ~ /OBTAINED/ && op != "DELETE") state = "OBTAINED"
      if (flags ~ /PROPERTY/) state = state " (property)"
      printf "    %-8s %-60s %s\n", op, key, state
      op = ""
      next
    }
    /^ *- error: / { sub(/^ *- error: /, ""); printf "             error: %s\n", $0 }'
}

log_mark() { wc -l <"$log" | tr -d ' '; }

# ---- the bridge scenario -------------------------------------------------------------------
if [ "$scenario" = bridge ]; then
  bridge_ping() { ip netns exec ns1 ping -c 1 -W 1 10.10.0.2; }
  # prints the listener's greeting when a TCP connection from ns1 to 10.10.0.2 port $1 is
  # accepted within 2 seconds; fails when it is refused or nothing answers (a dropped SYN)
  connect() {
    ip netns exec ns1 timeout 2 bash -c "exec 3<>/dev/tcp/10.10.0.2/$1 && head -n 1 <&3"
  }
  show_connect() {
    local out
    if out=$(connect "$1" 2>/dev/null); then
      echo "    TCP ns1 -> 10.10.0.2:$1: connected, read '$out'"
    else
      echo "    TCP ns1 -> 10.10.0.2:$1: no connection (timed out: the SYN was dropped)"
    fi
  }
  input_rules() { ip netns exec ns2 iptables -S INPUT | sed 's/^/    ns2: /'; }
  downstream_resync() {
    curl -sS --max-time 60 -X POST "http://$rest/scheduler/downstream-resync" >"$work/resync.json" \
      || fail "POST /scheduler/downstream-resync failed"
    echo "   its record (REST answer), the operations executed:"
    python3 - "$work/resync.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
print("    seq %s, %s, %s" % (t.get("SeqNum"), t.get("TxnType"), t.get("ResyncType")))
for op in t.get("Executed") or []:
    print("    %-7s %-55s -> %s" % (op.get("Operation"), op.get("Key"), op.get("NewState")))
PY
  }

  echo
  echo "== 1. start the agent with the Linux plugin on $work (REST on $rest) =="
  touch "$log"
  mark=$(log_mark)
  start_agent
  wait_for 90 bridge_ping || fail "ping from ns1 to 10.10.0.2 never worked"
  echo "   ping ns1 -> 10.10.0.2 (br1, vx1, the tunnel over u1/u2, vx2, br2): OK"
  echo "   values (operations of the agent's transactions):"
  show_status "$mark"
  echo "   the kernel:"
  ip -n ns1 -br addr show dev br1 | sed 's/^/    ns1: /'
  ip -n ns1 -d link show dev vx1 | sed -n 's/^ *\(vxlan id .*\)/    ns1: vx1 \1/p' | cut -c1-96
  ip -n ns1 -br link show master br1 | sed 's/^/    ns1: port of br1: /'
  ip -n ns2 -br link show master br2 | sed 's/^/    ns2: port of br2: /'
  input_rules

  echo
  echo "== 2. TCP listeners in ns2 on ports 8080 and 8081 (examples/linux/listen.py) =="
  exec 4< <(exec ip netns exec ns2 python3 "$root/examples/linux/listen.py" 8080 8081)
  listener_pid=$!
  read -r -t 20 ready <&4 && [ "$ready" = listening ] || fail "the listener did not start"
  connect 8080 >/dev/null || fail "port 8080 did not connect"
  if connect 8081 >/dev/null 2>&1; then fail "port 8081 connected though the chain drops it"; fi
  show_connect 8080
  show_connect 8081

  echo
  echo "== 3. break it by hand: ip netns exec ns2 iptables -D INPUT -p tcp --dport 8081 -j DROP =="
  ip netns exec ns2 iptables -D INPUT -p tcp --dport 8081 -j DROP
  input_rules
  connect 8081 >/dev/null || fail "port 8081 did not connect with the rule removed"
  show_connect 8081

  echo
  echo "== 4. downstream resync (curl -X POST $rest/scheduler/downstream-resync): the agent reads"
  echo "      the chain back, finds the rule missing and writes the chain again =="
  downstream_resync
  grep -q '"Key": *"config/linux/iptables/v2/rulechain/ns2-input"' "$work/resync.json" \
    || fail "the resync did not repair the chain"
  input_rules
  if connect 8081 >/dev/null 2>&1; then fail "port 8081 still connects after the resync"; fi
  show_connect 8081
  show_connect 8080

  echo
  echo "== 5. break the overlay by hand: ip -n ns1 link set dev vx1 nomaster (out of br1) =="
  ip -n ns1 link set dev vx1 nomaster
  if bridge_ping >/dev/null 2>&1; then fail "ping still works with vx1 out of br1"; fi
  echo "   ping ns1 -> 10.10.0.2: fails, as it should"
  echo "   a downstream resync puts the port back:"
  downstream_resync
  wait_for 10 bridge_ping || fail "the resync did not repair the bridge port"
  echo "   ping ns1 -> 10.10.0.2: OK again"

  echo
  echo "== 6. restart the agent: the kernel holds everything, the resync executes nothing =="
  stop_agent
  mark=$(log_mark)
  start_agent
  wait_for 90 sh -c "tail -n +$mark '$log' | grep -q 'resync from file'" || fail "no resync seen"
  wait_for 30 bridge_ping || fail "ping failed after the restart"
  sleep 1
  ops=$(show_status "$mark" | grep -c -E '^ +(CREATE|UPDATE|DELETE) +config/' || true)
  [ "$ops" -eq 0 ] || fail "the resync after a restart executed $ops operations on config values"
  echo "   operations on configuration values: $ops"

  echo
  echo "== 7. tear down: stop the agent and the listener, leave the namespace =="
  stop_all
  echo "demo: all steps passed"
  exit 0
fi

echo
echo "== 1. start the agent with the Linux plugin on $work =="
touch "$log"
mark=$(log_mark)
start_agent
wait_for 90 can_ping || fail "ping from ns1 to 10.0.2.1 never worked"
echo "   ping ns1 -> 10.0.2.1 (the loopback of ns2, via 10.0.1.2): OK"
echo "   values (operations of the agent's transactions):"
show_status "$mark"
echo "   the kernel:"
ip -n ns1 -br addr show dev veth1 | sed 's/^/    ns1: /'
ip -n ns1 route show 10.0.2.0/24 | sed 's/^/    ns1: /'
ip -n ns1 neigh show dev veth1 nud permanent | sed 's/^/    ns1: /'
ip -n ns2 -br addr show | sed 's/^/    ns2: /'

echo
echo "== 2. break it by hand: ip -n ns1 link del veth1 (takes veth2 along) =="
ip -n ns1 link del veth1
if can_ping >/dev/null 2>&1; then fail "ping still works after deleting veth1"; fi
echo "   ping ns1 -> 10.0.2.1: fails, as it should"

echo
echo "== 3. restart the agent: its first resync finds veth1/veth2 missing and re-creates them =="
stop_agent
mark=$(log_mark)
start_agent
wait_for 90 can_ping || fail "the resync did not repair the topology"
echo "   ping ns1 -> 10.0.2.1: OK again"
echo "   operations of the resync:"
show_status "$mark"

echo
echo "== 4. restart once more: the kernel already holds everything, the resync executes nothing =="
stop_agent
mark=$(log_mark)
start_agent
wait_for 90 sh -c "tail -n +$mark '$log' | grep -q 'resync from file'" || fail "no resync seen"
wait_for 30 can_ping || fail "ping failed after the second restart"
sleep 1
ops=$(show_status "$mark" | grep -c -E '^ +(CREATE|UPDATE|DELETE) +config/' || true)
[ "$ops" -eq 0 ] || fail "the resync after a restart executed $ops operations on config values"
echo "   operations on configuration values: $ops"

echo
echo "== 5. an EXISTING interface waits for a link someone else makes =="
mark=$(log_mark)
cat >"$work/.uplink.yaml.tmp" <<'YAML'
linuxConfig:
  interfaces:
  - name: uplink
    type: EXISTING
    hostIfName: uplink0
    enabled: true
    ipAddresses: [192.168.100.1/24]
  routes:
  - outgoingInterface: uplink
    dstNetwork: 10.200.0.0/16
    gwAddr: 192.168.100.254
YAML
mv "$work/.uplink.yaml.tmp" "$work/uplink.yaml"
wait_for 30 sh -c "tail -n +$mark '$log' | grep -q 'interface/uplink'" \
  || fail "the agent did not read uplink.yaml"
sleep 1
echo "   uplink.yaml added; uplink0 does not exist yet:"
show_status "$mark"
mark=$(log_mark)
echo "   ip link add uplink0 type veth peer name uplink0-peer; ip link set uplink0 up"
ip link add uplink0 type veth peer name uplink0-peer
ip link set uplink0-peer up
ip link set uplink0 up
wait_for 30 sh -c 'ip route show 10.200.0.0/16 | grep -q "via 192.168.100.254"' \
  || fail "the route through uplink0 was not configured"
show_status "$mark"
ip -br addr show dev uplink0 | sed 's/^/    /'
ip route show 10.200.0.0/16 | sed 's/^/    /'

echo
echo "== 6. ip link del uplink0: the interface, its address and its route turn PENDING =="
mark=$(log_mark)
ip link del uplink0
wait_for 30 sh -c "tail -n +$mark '$log' | grep -q 'IS-PENDING'" \
  || fail "no value turned PENDING after deleting uplink0"
sleep 1
show_status "$mark"

echo
echo "== 7. a confirmed commit that breaks ping: the route to 10.0.2.0/24 via 10.0.1.99 (no such"
echo "      gateway), put with kvsctl config put --confirm-within 2m; the agent's probe ping-ns2"
echo "      (ping 10.0.2.1 in ns1) fails, and the agent rolls the change back at once =="
cat >"$side/route.yaml" <<'YAML'
linuxConfig:
  routes:
  - outgoingInterface: veth1
    dstNetwork: 10.0.2.0/24
    gwAddr: 10.0.1.99
YAML
mark=$(log_mark)
"$root/bin/kvsctl" --agent "http://$rest" config put --confirm-within 2m "$side/route.yaml" \
  || fail "the confirmed commit was refused"
wait_for 30 sh -c "tail -n +$mark '$log' | grep -q 'rollback: probe'" \
  || fail "the probe did not roll the route change back"
echo "   the agent's log:"
tail -n "+$mark" "$log" | grep -E "confirmed commit #|rollback: probe" | sed 's/^/    /' | cut -c1-160
echo "   its transactions (the change, then the rollback):"
show_status "$mark"
wait_for 10 can_ping || fail "ping did not work again after the rollback"
ip -n ns1 route show 10.0.2.0/24 | grep -q "via 10.0.1.2" || fail "the route was not restored"
ip -n ns1 route show 10.0.2.0/24 | sed 's/^/    ns1: /'
echo "   ping ns1 -> 10.0.2.1: OK again"

echo
echo "== 8. tear down: stop the agent and leave the namespace (everything in it disappears) =="
stop_agent
echo "demo: all steps passed"
