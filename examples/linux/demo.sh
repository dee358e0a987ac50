#!/usr/bin/env bash
# The Linux plugin, hands on: runs the agent in a private network namespace (no root needed),
# brings up examples/linux/config (two namespaces joined by a veth pair, a route via a gateway,
# an ARP entry), pings across, breaks things by hand and shows the agent repair them, then tears
# everything down. Exits non-zero as soon as a step does not do what it should.
#
#   examples/linux/demo.sh
#
# Needs: Linux with user and network namespaces, iproute2 (ip), ping, unshare and JDK 17.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

if [ -z "${KVS_DEMO_INSIDE:-}" ]; then
  for tool in ip ping unshare java; do
    command -v "$tool" >/dev/null 2>&1 || { echo "demo: '$tool' not found" >&2; exit 1; }
  done
  echo "== building the agent (first run only) =="
  "$root/bin/kvs-agent" run --help >/dev/null
  echo "== entering a private user + network + mount namespace (nothing of the host is touched) =="
  exec unshare --user --map-root-user --net --mount --propagation private \
    env KVS_DEMO_INSIDE=1 "$0" "$@"
fi

# ---- from here on: inside the private namespace -------------------------------------------
mkdir -p /run/netns
mount -t tmpfs kvs-netns /run/netns   # named namespaces of our own
ip link set lo up
work=$(mktemp -d)
cp "$root"/examples/linux/config/*.yaml "$work/"
log=$work/agent.log
agent_pid=""

fail() {
  echo "demo: FAILED: $*" >&2
  echo "---- last lines of the agent's log ($log) ----" >&2
  tail -n 40 "$log" >&2 || true
  exit 1
}

start_agent() {
  "$root/bin/kvs-agent" run --linux --config-dir "$work" --rest off >>"$log" 2>&1 &
  agent_pid=$!
}

stop_agent() {
  if [ -n "$agent_pid" ]; then
    kill -TERM "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
    agent_pid=""
  fi
}
trap stop_agent EXIT

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
echo "== 7. tear down: stop the agent and leave the namespace (everything in it disappears) =="
stop_agent
echo "demo: all steps passed"
