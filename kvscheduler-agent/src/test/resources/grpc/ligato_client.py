"""A gRPC client generated from vpp-agent's own .proto files, driving a running agent.

usage: ligato_client.py STUBS_DIR HOST:PORT [--linux | --read-only]

Every check prints one line 'ok <what>'; the first failed check raises (exit status 1).
"""
import sys
import threading
import queue

sys.path.insert(0, sys.argv[1])
ADDRESS = sys.argv[2]
LINUX = "--linux" in sys.argv
READ_ONLY = "--read-only" in sys.argv

import grpc  # noqa: E402
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory  # noqa: E402
from ligato.configurator import configurator_pb2 as cfg, configurator_pb2_grpc  # noqa: E402
from ligato.generic import manager_pb2 as gen, manager_pb2_grpc, meta_pb2, meta_pb2_grpc  # noqa: E402
from ligato.linux import linux_pb2  # noqa: E402
from ligato.linux.interfaces import interface_pb2 as linux_if  # noqa: E402
from ligato.linux.interfaces import state_pb2 as linux_state  # noqa: E402
from ligato.vpp import vpp_pb2  # noqa: E402
from ligato.vpp.interfaces import interface_pb2 as vpp_if  # noqa: E402
from ligato.vpp.dns import dns_pb2 as vpp_dns  # noqa: E402
from mock import interface_pb2 as mock_if, bridge_domain_pb2 as mock_bd, fib_pb2 as mock_fib  # noqa: E402

channel = grpc.insecure_channel(ADDRESS)
grpc.channel_ready_future(channel).result(timeout=30)
configurator = configurator_pb2_grpc.ConfiguratorServiceStub(channel)
manager = manager_pb2_grpc.ManagerServiceStub(channel)
meta = meta_pb2_grpc.MetaServiceStub(channel)


def ok(what):
    print("ok " + what, flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(number, payload):
    """A length-delimited field: how a message field is written on the wire."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def mock_config(interfaces=(), bridge_domains=(), fibs=()):
    """A ligato Config carrying the agent's mock domain (its field 100, unknown to ligato's
    protos: written on the wire by hand, as the agent defines it)."""
    data = b"".join(field(10, i.SerializeToString()) for i in interfaces)
    data += b"".join(field(20, b.SerializeToString()) for b in bridge_domains)
    data += b"".join(field(21, f.SerializeToString()) for f in fibs)
    return cfg.Config.FromString(field(100, data))


def tap(name):
    return mock_if.Interface(name=name, type=mock_if.Interface.TAP, enabled=True)


def packed(msg):
    a = any_pb2.Any()
    a.Pack(msg, type_url_prefix="models.ligato.io/")
    return a


def item(msg, labels=None):
    return gen.UpdateItem(item=gen.Item(data=gen.Data(any=packed(msg))), labels=labels or {})


def grpc_items():
    return {i.item.id.model + "/" + i.item.id.name: i
            for i in manager.GetConfig(gen.GetConfigRequest(), timeout=10).items}


DROP_FIB = mock_fib.FIBEntry(phys_address="aa:bb:cc:dd:ee:ff", bridge_domain="bd1",
                             action=mock_fib.FIBEntry.DROP)

# --- a read-only agent (--read-only): every change refused, reads served -------------------
if READ_ONLY:
    changes = (
        ("Update", lambda: configurator.Update(
            cfg.UpdateRequest(update=mock_config([tap("ro1")])), timeout=10)),
        ("Delete", lambda: configurator.Delete(
            cfg.DeleteRequest(delete=mock_config([tap("ro1")])), timeout=10)),
        ("SetConfig", lambda: manager.SetConfig(
            gen.SetConfigRequest(updates=[item(tap("ro1"))]), timeout=10)),
    )
    for name, change in changes:
        try:
            change()
            raise AssertionError(name + " applied on a read-only agent")
        except grpc.RpcError as e:
            expect(e.code() == grpc.StatusCode.PERMISSION_DENIED, "%s: %s" % (name, e.code()))
            expect("read-only" in e.details(), "%s names the mode: %s" % (name, e.details()))
    expect(not grpc_items(), "nothing applied: %s" % grpc_items())
    configurator.Get(cfg.GetRequest(), timeout=10)
    ok("read-only: Update, Delete, SetConfig refused with PERMISSION_DENIED; reads served")
    print("all checks passed", flush=True)
    sys.exit(0)

# --- ConfiguratorService -------------------------------------------------------------------
_, call = configurator.Update.with_call(
    cfg.UpdateRequest(update=mock_config([tap("tap1"), tap("tap2")])), timeout=10)
seqnum = dict(call.initial_metadata()).get("seqnum")
expect(seqnum is not None and seqnum.isdigit(), "Update sends the seqnum header: %r"
       % (call.initial_metadata(),))
items = grpc_items()
expect(items["mock.interfaces/tap1"].status.status == "CONFIGURED", "tap1 CONFIGURED")
ok("Update (no wait_done) applied tap1, tap2; seqnum header " + seqnum)

got = configurator.Get(cfg.GetRequest(), timeout=10).config
expect(b"tap1" in got.SerializeToString() and b"tap2" in got.SerializeToString(),
       "Get returns the mock values (in the agent's mock field)")
ok("Get lists the desired values")

waiting = cfg.UpdateRequest(update=mock_config(fibs=[DROP_FIB]), wait_done=True)
try:
    configurator.Update(waiting, timeout=0.5)
    raise AssertionError("wait_done on a PENDING value returned before its deadline")
except grpc.RpcError as e:
    expect(e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, "deadline: %s" % e.code())
ok("Update wait_done on a PENDING value: DEADLINE_EXCEEDED at the deadline")
future = configurator.Update.future(waiting, timeout=20)
configurator.Update(cfg.UpdateRequest(update=mock_config(
    bridge_domains=[mock_bd.BridgeDomain(name="bd1")])), timeout=10)
future.result()
expect(grpc_items()["mock.fib/bd1/mac/aa:bb:cc:dd:ee:ff"].status.status == "CONFIGURED",
       "FIB CONFIGURED")
ok("Update wait_done returns once the value is no longer PENDING")

configurator.Delete(cfg.DeleteRequest(delete=mock_config([mock_if.Interface(name="tap2")])),
                    timeout=10)
expect("mock.interfaces/tap2" not in grpc_items(), "tap2 deleted")
ok("Delete removed tap2")

configurator.Update(cfg.UpdateRequest(update=mock_config([tap("tap3")]), full_resync=True),
                    timeout=10)
keys = set(grpc_items())
expect(keys == {"mock.interfaces/tap3"}, "full resync left only tap3: %s" % keys)
ok("Update full_resync replaced the gRPC values")

# --- our extension: request metadata dry-run plans and applies nothing --------------------
_, call = configurator.Update.with_call(
    cfg.UpdateRequest(update=mock_config([tap("tap9")])), metadata=(("dry-run", "true"),),
    timeout=10)
headers = dict(call.initial_metadata())
expect(headers.get("dry-run-operations", "").isdigit()
       and int(headers["dry-run-operations"]) >= 1, "dry-run-operations header: %r" % (headers,))
expect("tap9" in headers.get("dry-run-plan", ""), "dry-run-plan names tap9: %r" % (headers,))
expect(set(grpc_items()) == {"mock.interfaces/tap3"}, "nothing applied: %s" % set(grpc_items()))
ok("Update with dry-run: %s operation(s) planned, nothing applied"
   % headers["dry-run-operations"])

for md, what in (((("dry-run", "true"), ("confirm-within", "30s")), "dry-run with confirm-within"),
                 ((("confirm-within", "0s"),), "confirm-within 0s")):
    try:
        configurator.Update(cfg.UpdateRequest(update=mock_config([tap("tap9")])), metadata=md,
                            timeout=10)
        raise AssertionError(what + " accepted")
    except grpc.RpcError as e:
        expect(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "%s: %s" % (what, e.code()))
        expect("confirm-within" in e.details() or "duration" in e.details(),
               "%s names what is wrong: %s" % (what, e.details()))
expect(set(grpc_items()) == {"mock.interfaces/tap3"}, "nothing applied: %s" % set(grpc_items()))
ok("dry-run with confirm-within, and confirm-within 0s: INVALID_ARGUMENT, nothing applied")

try:
    configurator.Update(cfg.UpdateRequest(update=cfg.Config(
        vpp_config=vpp_pb2.ConfigData(interfaces=[vpp_if.Interface(name="memif1")]))), timeout=10)
    raise AssertionError("VPP content accepted")
except grpc.RpcError as e:
    expect(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "VPP content: %s" % e.code())
    expect("vpp_config.interfaces" in e.details(), "names what is refused: " + e.details())
    refused = e.details()
ok("VPP content refused: INVALID_ARGUMENT (%s)" % refused)

try:
    # a single VPP message with every field at its default: on the wire, present and empty
    configurator.Update(cfg.UpdateRequest(update=cfg.Config(
        vpp_config=vpp_pb2.ConfigData(dns_cache=vpp_dns.DNSCache()))), timeout=10)
    raise AssertionError("an empty VPP message accepted")
except grpc.RpcError as e:
    expect(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "empty VPP message: %s" % e.code())
    expect("vpp_config.dns_cache" in e.details(), "names what is refused: " + e.details())
    refused = e.details()
ok("an empty VPP message refused: INVALID_ARGUMENT (%s)" % refused)

try:
    manager.SetConfig(gen.SetConfigRequest(updates=[item(vpp_if.Interface(name="x"))]),
                      timeout=10)
    raise AssertionError("a value of an unknown model accepted")
except grpc.RpcError as e:
    expect(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "unknown model: %s" % e.code())
ok("unknown model refused: INVALID_ARGUMENT")

if not LINUX:
    try:
        configurator.Update(cfg.UpdateRequest(update=cfg.Config(
            linux_config=linux_pb2.ConfigData(interfaces=[linux_if.Interface(name="veth1")]))),
            timeout=10)
        raise AssertionError("a Linux value accepted without the Linux plugin")
    except grpc.RpcError as e:
        expect(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "Linux value: %s" % e.code())
        expect("linux_config.interfaces[0]" in e.details(), "names the value: " + e.details())
    ok("Update of a model not registered (Linux, plugin off) refused: INVALID_ARGUMENT")

# --- ManagerService ------------------------------------------------------------------------
r = manager.SetConfig(gen.SetConfigRequest(updates=[
    item(tap("red"), {"colour": "red"}), item(tap("blue"), {"colour": "blue"})]), timeout=10)
results = {x.key: x.status for x in r.results}
expect(results["config/mock/v1/interfaces/red"].status == "CONFIGURED", "red CONFIGURED")
expect(results["seqnum"].status == "NONEXISTENT" and results["seqnum"].message.isdigit(),
       "synthetic seqnum result")
red = manager.GetConfig(gen.GetConfigRequest(labels={"colour": "red"}), timeout=10).items
expect([i.item.id.name for i in red] == ["red"], "label filter: %s" % red)
unlabelled = manager.GetConfig(gen.GetConfigRequest(labels={"!colour": ""}), timeout=10).items
expect("red" not in [i.item.id.name for i in unlabelled], "'!' label filter")
value = mock_if.Interface()
red[0].item.data.any.Unpack(value)
expect(value.name == "red" and value.type == mock_if.Interface.TAP, "GetConfig's data")
ok("SetConfig with labels, results with states and seqnum; GetConfig by labels")

# --- MetaService: a model learnt at run time ------------------------------------------------
known = meta.KnownModels(meta_pb2.KnownModelsRequest(), timeout=10).known_models
bd = [m for m in known if m.proto_name == "mock.l2.BridgeDomain"][0]
proto_file = [o.values[0] for o in bd.options if o.key == "protoFile"][0]
fd = meta.ProtoFileDescriptor(meta_pb2.ProtoFileDescriptorRequest(
    full_proto_file_name=proto_file), timeout=10)
pool = descriptor_pool.DescriptorPool()
for f in fd.file_import_descriptors.file:
    pool.Add(f)
pool.Add(fd.file_descriptor)
Learnt = message_factory.GetMessageClass(pool.FindMessageTypeByName(bd.proto_name)) \
    if hasattr(message_factory, "GetMessageClass") \
    else message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(bd.proto_name))
learnt = Learnt(name="learnt")
r = manager.SetConfig(gen.SetConfigRequest(updates=[item(learnt)]), timeout=10)
expect({x.key: x.status.status for x in r.results}["config/mock/v1/bridge-domain/learnt"]
       == "CONFIGURED", "learnt BD CONFIGURED")
ok("KnownModels + ProtoFileDescriptor (%s): built and set a %s learnt at run time"
   % (proto_file, bd.proto_name))

# --- Subscribe: PENDING, then CONFIGURED ---------------------------------------------------
states = queue.Queue()
stream = manager.Subscribe(gen.SubscribeRequest(subscriptions=[
    gen.Subscription(id=gen.Item.ID(model="mock.fib"))]))


def read():
    try:
        for resp in stream:
            for n in resp.notifications:
                states.put((n.item.id.name, n.status.status))
    except grpc.RpcError:
        pass


threading.Thread(target=read, daemon=True).start()
fib2 = mock_fib.FIBEntry(phys_address="aa:bb:cc:dd:ee:02", bridge_domain="bd2",
                         action=mock_fib.FIBEntry.DROP)
import time  # noqa: E402
time.sleep(0.5)  # the subscription is in place once the stream is open
manager.SetConfig(gen.SetConfigRequest(updates=[item(fib2)]), timeout=10)
manager.SetConfig(gen.SetConfigRequest(updates=[item(mock_bd.BridgeDomain(name="bd2"))]),
                  timeout=10)
seen = [states.get(timeout=10), states.get(timeout=10)]
stream.cancel()
expect(seen == [("bd2/mac/aa:bb:cc:dd:ee:02", "PENDING"),
                ("bd2/mac/aa:bb:cc:dd:ee:02", "CONFIGURED")], "Subscribe: %s" % seen)
ok("Subscribe: PENDING -> CONFIGURED")

# --- Linux values through the configurator's own fields -------------------------------------
if LINUX:
    links = queue.Queue()
    notify = configurator.Notify(cfg.NotifyRequest(filters=[cfg.Notification(
        linux_notification=linux_pb2.Notification(interface=linux_state.InterfaceNotification(
            type=linux_state.InterfaceNotification.UPDOWN)))]))

    def follow():
        try:
            for resp in notify:
                links.put(resp.notification.linux_notification.interface.state)
        except grpc.RpcError:
            pass

    threading.Thread(target=follow, daemon=True).start()

    # a Linux model learnt at run time: its proto file imports another (the namespace)
    known = meta.KnownModels(meta_pb2.KnownModelsRequest(**{"class": "config"}), timeout=10)
    lif = [m for m in known.known_models if m.proto_name == "ligato.linux.interfaces.Interface"][0]
    proto_file = [o.values[0] for o in lif.options if o.key == "protoFile"][0]
    fd = meta.ProtoFileDescriptor(meta_pb2.ProtoFileDescriptorRequest(
        full_proto_file_name=proto_file), timeout=10)
    imported = [f.name for f in fd.file_import_descriptors.file]
    expect("ligato/linux/namespace/namespace.proto" in imported, "imports: %s" % imported)
    pool = descriptor_pool.DescriptorPool()
    for f in fd.file_import_descriptors.file:
        pool.Add(f)
    pool.Add(fd.file_descriptor)
    desc = pool.FindMessageTypeByName(lif.proto_name)
    Learnt = message_factory.GetMessageClass(desc) if hasattr(message_factory, "GetMessageClass") \
        else message_factory.MessageFactory(pool).GetPrototype(desc)
    learnt = Learnt(name="veth9", type=desc.enum_types_by_name["Type"].values_by_name["VETH"].number,
                    namespace={"type": 1, "reference": "/run/netns/x"})
    mine = linux_if.Interface.FromString(learnt.SerializeToString())
    expect(mine.name == "veth9" and mine.type == linux_if.Interface.VETH
           and mine.namespace.reference == "/run/netns/x", "learnt message: %s" % mine)
    ok("ProtoFileDescriptor of %s with its imports %s: a Linux interface built at run time"
       % (proto_file, imported))

    veth = cfg.Config(linux_config=linux_pb2.ConfigData(interfaces=[
        linux_if.Interface(name="veth1", type=linux_if.Interface.VETH, enabled=True,
                           ip_addresses=["10.11.0.1/24"],
                           veth=linux_if.VethLink(peer_if_name="veth2")),
        linux_if.Interface(name="veth2", type=linux_if.Interface.VETH, enabled=True,
                           veth=linux_if.VethLink(peer_if_name="veth1"))]))
    # veth1 alone waits for its peer: Update without wait_done returns, veth1 PENDING
    configurator.Update(cfg.UpdateRequest(update=cfg.Config(linux_config=linux_pb2.ConfigData(
        interfaces=[veth.linux_config.interfaces[0]]))), timeout=30)
    status = {i.item.id.name: i.status.status for i in manager.GetConfig(gen.GetConfigRequest(
        ids=[gen.Item.ID(model="linux.interfaces.interface", name="veth1")]), timeout=10).items}
    expect(status == {"veth1": "PENDING"}, "GetConfig: %s" % status)
    expect(not configurator.Dump(cfg.DumpRequest(), timeout=10).dump.linux_config.interfaces,
           "Dump with veth1 PENDING")
    ok("Linux veth1 without its peer: Update without wait_done returned, veth1 PENDING")
    configurator.Update(cfg.UpdateRequest(update=veth, wait_done=True), timeout=30)
    got = configurator.Get(cfg.GetRequest(), timeout=10).config.linux_config.interfaces
    expect(sorted(i.name for i in got) == ["veth1", "veth2"], "Get: %s" % got)
    dumped = configurator.Dump(cfg.DumpRequest(), timeout=10).dump.linux_config.interfaces
    expect(sorted(i.name for i in dumped) == ["veth1", "veth2"], "Dump: %s" % dumped)
    ok("Linux veth pair: Update wait_done, Get, Dump from the kernel")
    seen = {}
    while "veth1" not in seen:
        st = links.get(timeout=10)
        seen[st.internal_name] = st
    expect(seen["veth1"].type == linux_if.Interface.VETH
           and seen["veth1"].name.startswith("/vnf-agent/vpp1/veth1") and seen["veth1"].if_index > 0,
           "Notify: %s" % seen["veth1"])
    notify.cancel()
    ok("Notify: the watcher reported veth1 (%s, index %d)" % (seen["veth1"].name,
                                                              seen["veth1"].if_index))
    configurator.Delete(cfg.DeleteRequest(delete=veth, wait_done=True), timeout=30)
    expect(not configurator.Dump(cfg.DumpRequest(), timeout=10).dump.linux_config.interfaces,
           "Dump after Delete")
    ok("Linux veth pair deleted")

# --- an iptables rule chain through the generic API (the configurator's Linux data has none) --
if LINUX:
    import subprocess
    from ligato.linux.iptables import iptables_pb2 as ipt
    web = ipt.RuleChain(name="web", protocol=ipt.RuleChain.IPV4, table=ipt.RuleChain.FILTER,
                        chain_type=ipt.RuleChain.CUSTOM, chain_name="KVS-WEB",
                        rules=["-p tcp --dport 80 -j DROP", "-s 10.0.0.1 -j ACCEPT"])
    r = manager.SetConfig(gen.SetConfigRequest(updates=[item(web)]), timeout=30)
    results = {x.key: x.status for x in r.results}
    key = "config/linux/iptables/v2/rulechain/web"
    expect(results[key].status == "CONFIGURED", "web: %s" % results[key])
    saved = subprocess.run(["iptables-save", "-t", "filter"], capture_output=True, text=True,
                           check=True).stdout
    expect("-A KVS-WEB -p tcp -m tcp --dport 80 -j DROP\n-A KVS-WEB -s 10.0.0.1/32 -j ACCEPT"
           in saved, "iptables-save: %s" % saved)
    got = grpc_items()["linux.iptables.rulechain/web"]
    back = ipt.RuleChain()
    got.item.data.any.Unpack(back)
    expect(back == web and got.status.status == "CONFIGURED", "GetConfig: %s" % got)
    bad = ipt.RuleChain(name="bad", chain_type=ipt.RuleChain.CUSTOM, chain_name="KVS-BAD",
                        rules=["-p tcp --dportx 80 -j DROP"])
    refused = None
    try:
        manager.SetConfig(gen.SetConfigRequest(updates=[item(bad)]), timeout=30)
    except grpc.RpcError as e:
        refused = e
    expect(refused is not None and "--dportx" in refused.details(),
           "bad: %r" % ((refused.code(), refused.details()) if refused else None,))
    manager.SetConfig(gen.SetConfigRequest(updates=[gen.UpdateItem(item=gen.Item(
        id=gen.Item.ID(model="linux.iptables.rulechain", name=n))) for n in ("web", "bad")]),
        timeout=30)
    saved = subprocess.run(["iptables-save"], capture_output=True, text=True, check=True).stdout
    expect("KVS-WEB" not in saved and "KVS-BAD" not in saved, "deleted: %s" % saved)
    ok("Linux RuleChain: SetConfig made KVS-WEB (iptables-save), GetConfig, a rule iptables"
       " rejects refused with its message (%s), deleted" % refused.code())

# --- an error stays readable: a megabyte invalid value -------------------------------------
if not LINUX:
    huge = mock_if.Interface(name="huge", type=mock_if.Interface.TAP, enabled=True,
                             phys_address="x" * (1 << 20))
    refused = None
    try:
        configurator.Update(cfg.UpdateRequest(update=mock_config([huge])), timeout=30)
    except grpc.RpcError as e:
        refused = e
    expect(refused is not None, "a megabyte invalid value accepted")
    # grpcio reads at most 8 KiB of trailing metadata: a longer description is not readable
    expect(refused.code() == grpc.StatusCode.FAILED_PRECONDITION,
           "invalid value: %s %s" % (refused.code(), (refused.details() or "")[:300]))
    details = refused.details()
    expect(len(details) < 4096 and "huge" in details and "phys_address" in details,
           "bounded details naming the key and the field: %d characters" % len(details))
    ok("a megabyte invalid value: FAILED_PRECONDITION, %d characters of details" % len(details))

print("all checks passed", flush=True)
