"""The emulated network: one network namespace per scenario node (hosts and routers alike), one
veth pair per link, a /30 per link and a /32 identity address per node on its loopback, static
routes that follow the simulator's own minimum-hop routes, TSO/GSO/GRO off. Every link
direction a → b is handed to NFQUEUE (queue number = direction index) where its packets enter
b; the receivers count each flow's packets by DSCP. Also what the kernel counted, read back
after the traffic."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from qoslab import schema
from qoslab.emulation.host import namespace_sysctls, read_host_settings
from qoslab.emulation.machine import EmulationError, sh
from qoslab.emulation.signals import Signals
from qoslab.emulation.state import RunState
from qoslab.scenario import Scenario

#: First server port; flow f listens on PORT_BASE + f.
PORT_BASE = 5001


def _addr_link(i: int, side: int) -> str:
    """Address of link i's a (side 0) or b (side 1) end: one /30 per link."""
    base = i * 4
    return f"10.{100 + base // 65536}.{(base // 256) % 256}.{base % 256 + 1 + side}"


def addr_node(n: int) -> str:
    """A node's identity address (/32 on its loopback): what its flows use."""
    return f"10.99.{n // 250}.{n % 250 + 1}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]


@dataclass
class Net:
    """The run's network, as built: ``ns[i]`` is the namespace of ``nodes[i]``."""

    nodes: list[str]
    links: list[dict[str, Any]]
    flows: list[dict[str, Any]]
    ns: list[str]
    node_idx: dict[str, int]
    #: The scenario's TCP table (the first TCP flow's; empty without TCP).
    tcp: dict[str, Any]
    #: Per node index, the link directions whose packets enter it (its link daemon's ``dirs``).
    incoming: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: The directions the kernel serialises (the calibration's reference links).
    kernel_dirs: set[int] = field(default_factory=set)
    #: Per receiving node, its DSCP counting rules in order: (flow, IP protocol, DSCP).
    count_rules: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)

    @classmethod
    def named(cls, sc: Scenario, prefix: str) -> Net:
        r = sc.resolved
        nodes: list[str] = r["nodes"]
        flows: list[dict[str, Any]] = r["flows"]
        return cls(
            nodes=nodes,
            links=r["links"],
            flows=flows,
            ns=[f"{prefix}-{i}-{_safe(n)}" for i, n in enumerate(nodes)],
            node_idx={n: i for i, n in enumerate(nodes)},
            tcp=next((f["tcp"] for f in flows if f.get("tcp")), {}),
        )


def add_namespaces(net: Net, st: RunState, sig: Signals) -> None:
    for name in net.ns:
        st.add_namespace(name)  # recorded before it exists
        # and never interrupted: on Ctrl-C subprocess.run SIGKILLs the command and does not
        # wait, and an `ip netns add` still in the kernel then mounts it after the teardown
        # (what else the run creates lives inside its namespaces and goes with them)
        with sig.held():
            sh(["ip", "netns", "add", name])


def set_up_nodes(net: Net, cc: str) -> None:
    """Each namespace's sysctls (:func:`namespace_sysctls`), loopback and identity address."""
    for i, name in enumerate(net.ns):
        sysctl = namespace_sysctls(cc, net.tcp)
        sh(["ip", "netns", "exec", name, "sysctl", "-q", "-w", *(f"{k}={val}" for k, val in sysctl.items())])
        sh(["ip", "-n", name, "link", "set", "lo", "up"])
        sh(["ip", "-n", name, "addr", "add", f"{addr_node(i)}/32", "dev", "lo"])


def add_veths(net: Net) -> None:
    """The veth pairs, created directly inside the two namespaces."""
    ns, node_idx = net.ns, net.node_idx
    for li, lk in enumerate(net.links):
        a, b = node_idx[lk["a"]], node_idx[lk["b"]]
        va, vb = f"l{li}a", f"l{li}b"
        sh(["ip", "link", "add", va, "netns", ns[a], "type", "veth", "peer", "name", vb, "netns", ns[b]])
        for side, (n, v) in enumerate(((a, va), (b, vb))):
            sh(["ip", "-n", ns[n], "addr", "add", f"{_addr_link(li, side)}/30", "dev", v])
            sh(["ip", "-n", ns[n], "link", "set", v, "up"])
            sh(["ip", "netns", "exec", ns[n], "ethtool", "-K", v, "tso", "off", "gso", "off", "gro", "off"])


def add_routes(net: Net, plan: dict[str, Any]) -> None:
    """The simulator's paths (the link daemon's ``plan``), hop by hop, to each flow's
    destination and back; a flow's end hosts start TCP at the scenario's initial window."""
    nodes, links, flows, node_idx = net.nodes, net.links, net.flows, net.node_idx
    hosts = {node_idx[f["src"]] for f in flows} | {node_idx[f["dst"]] for f in flows}
    routes: dict[tuple[int, int], tuple[str, str]] = {}

    def walk(path: list[int], dest: int) -> None:
        for d in path:
            li, ab = d // 2, d % 2 == 0
            lk = links[li]
            here = node_idx[lk["a"] if ab else lk["b"]]
            via = _addr_link(li, 1 if ab else 0)
            dev = f"l{li}{'a' if ab else 'b'}"
            prev = routes.setdefault((here, dest), (via, dev))
            if prev != (via, dev):
                raise EmulationError(
                    f"node {nodes[here]} needs two routes to {nodes[dest]} (flows take different "
                    "equal-length paths): emulation needs destination-based routing"
                )

    for f, fp in zip(flows, plan["flows"], strict=True):
        walk(fp["fwd"], node_idx[f["dst"]])
        walk(fp["rev"], node_idx[f["src"]])
    for (here, dest), (via, dev) in routes.items():
        iw = []
        if here in hosts and net.tcp:
            iw = ["initcwnd", str(net.tcp.get("initial_window_pkts", 2))]
        sh(
            [
                "ip",
                "-n",
                net.ns[here],
                "route",
                "replace",
                f"{addr_node(dest)}/32",
                "via",
                via,
                "dev",
                dev,
                *iw,
            ]
        )


def sending_host_settings(net: Net) -> dict[str, Any]:
    """:func:`read_host_settings` of the first flow's sender, on its first link's veth."""
    node_idx, links = net.node_idx, net.links
    first_src = node_idx[net.flows[0]["src"]] if net.flows else 0
    host_dev = next(
        (
            f"l{li}{'a' if node_idx[lk['a']] == first_src else 'b'}"
            for li, lk in enumerate(links)
            if first_src in (node_idx[lk["a"]], node_idx[lk["b"]])
        ),
        "lo",
    )
    return read_host_settings(net.ns[first_src], host_dev, net.nodes[first_src])


def add_nfqueue_rules(net: Net, sc: Scenario, kernel_links: tuple[str, ...]) -> None:
    """NFQUEUE rules where each direction's packets enter (:attr:`Net.incoming`), and kernel
    serialisation on the sender's veth for the calibration's reference links."""
    ns, node_idx = net.ns, net.node_idx
    net.kernel_dirs = {sc.link_direction_index(k, d) for k in kernel_links for d in ("ab", "ba")}
    net.incoming = {i: [] for i in range(len(net.nodes))}
    for li, lk in enumerate(net.links):
        for d, (frm, to, q) in enumerate(
            ((lk["a"], lk["b"], lk["queue_ab"]), (lk["b"], lk["a"], lk["queue_ba"]))
        ):
            di = li * 2 + d
            to_i, frm_i = node_idx[to], node_idx[frm]
            net.incoming[to_i].append({"dir_idx": di, "queue_num": di, "delay_only": di in net.kernel_dirs})
            if di in net.kernel_dirs:
                fifo = schema.queue_kinds()[q["type"]]["x-ns3"].get("queue_disc") == "ns3::FifoQueueDisc"
                if not fifo or q.get("limit_pkts") is None:
                    raise EmulationError(f"kernel link {lk['name']}: only DropTail with a packet limit")
                _serialise_in_kernel(ns[frm_i], f"l{li}{'a' if d == 0 else 'b'}", lk["bandwidth_bps"], q)
    for i, name in enumerate(ns):
        if not net.incoming[i]:
            continue
        rules = ["*mangle"]
        for e in net.incoming[i]:
            li, d = e["dir_idx"] // 2, e["dir_idx"] % 2
            dev = f"l{li}{'b' if d == 0 else 'a'}"
            rules.append(f"-A PREROUTING -i {dev} -j NFQUEUE --queue-num {e['queue_num']}")
        rules.append("COMMIT")
        sh(["ip", "netns", "exec", name, "iptables-restore"], input="\n".join(rules) + "\n")


def _serialise_in_kernel(ns_name: str, dev: str, bandwidth_bps: int, q: dict[str, Any]) -> None:
    """htb at the link's rate and pfifo of the queue's packet limit on ``dev``."""
    rate = f"{bandwidth_bps}bit"
    tc = ["ip", "netns", "exec", ns_name, "tc"]
    # htb meters skb->len, which on a veth includes the 14-byte Ethernet header; the
    # size table takes it off, so that both serialise IP bytes at the link's rate
    sh(
        [*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:"]
        + ["stab", "overhead", "-14", "linklayer", "ethernet", "htb", "default", "1"]
    )
    sh(
        [*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb"]
        + ["rate", rate, "ceil", rate]
    )
    sh(
        [*tc, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo"]
        + ["limit", str(q["limit_pkts"])]
    )


def add_dscp_counters(net: Net, conditioners: list[dict[str, Any]]) -> None:
    """Per-DSCP counters at each flow's receiver (data packets only): its own DSCP and every
    one a conditioner marks."""
    marks = {c[k] for c in conditioners for k in ("green", "yellow", "red") if isinstance(c[k], int)}
    for fi, f in enumerate(net.flows):
        proto = 6 if f["kind"] == "tcp" else 17
        for v in sorted(marks | {f["dscp"]}):
            net.count_rules.setdefault(net.node_idx[f["dst"]], []).append((fi, proto, v))
    for n, rl in net.count_rules.items():
        lines = ["*filter", ":QLAB_DSCP - [0:0]", "-A INPUT -j QLAB_DSCP"]
        for fi, proto, dscp in rl:
            l4 = "tcp" if proto == 6 else "udp"
            lines.append(f"-A QLAB_DSCP -p {l4} --dport {PORT_BASE + fi} -m dscp --dscp {dscp} -j RETURN")
        lines.append("COMMIT")
        sh(["ip", "netns", "exec", net.ns[n], "iptables-restore"], input="\n".join(lines) + "\n")


def read_dscp_counters(net: Net) -> list[dict[str, Any]]:
    """The receivers' DSCP counters: one row per (flow, DSCP)."""
    dscp_rows = []
    for n, rl in net.count_rules.items():
        txt = sh(
            [
                "ip",
                "netns",
                "exec",
                net.ns[n],
                "iptables",
                "-t",
                "filter",
                "-L",
                "QLAB_DSCP",
                "-v",
                "-x",
                "-n",
            ]
        )
        rows = [ln.split() for ln in txt.splitlines()[2:] if ln.strip()]
        for (fi, _, dscp), row in zip(rl, rows, strict=True):
            dscp_rows.append(
                {
                    "flow": fi,
                    "flow_name": net.flows[fi]["name"],
                    "dscp": dscp,
                    "packets": int(row[0]),
                    "bytes": int(row[1]),
                }
            )
    return dscp_rows


def read_kernel_stats(net: Net) -> dict[int, dict[str, int]]:
    """Per kernel-serialised direction, what its pfifo sent and dropped."""
    kernel_stats = {}
    for di in sorted(net.kernel_dirs):
        li, d = di // 2, di % 2
        lk = net.links[li]
        frm = net.node_idx[lk["a"] if d == 0 else lk["b"]]
        dev = f"l{li}{'a' if d == 0 else 'b'}"
        txt = sh(["ip", "netns", "exec", net.ns[frm], "tc", "-s", "qdisc", "show", "dev", dev])
        m = re.search(r"qdisc pfifo 10:.*?Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", txt, re.S)
        if m:
            kernel_stats[di] = {"departures": int(m.group(2)), "overflow_drops": int(m.group(3))}
    return kernel_stats
