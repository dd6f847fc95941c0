"""The export plan: whether ns-2 can run a resolved scenario at all
(:func:`unsupported_reason`), and for DiffServ scenarios how every conditioner and
multi-precedence queue maps onto ns-2's dsRED queues (codepoints, policy tables, physical
and virtual queues) with the Tcl lines that configure them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from qoslab import _core, schema
from qoslab.ns2.capability import (
    ACK_DSCP,
    NS_MAX_CP,
    NS_MAX_POLICIES,
    NS_MAX_QUEUES,
    PRE_NOT_GREEN,
    SCHEDULERS,
    Refusal,
    conditioner_reason,
    core_export,
    ds_active,
    flow_reason,
    in_dsred,
    meter_policy,
    queue_reason,
)
from qoslab.ns2.literals import UNLIMITED_QUEUE_PKTS, is_int, tcl_number

#: What a codepoint stands for at the end: a DSCP, or "drop" (the packet is dropped).
Value: TypeAlias = int | Literal["drop"]
#: One policy entry of an edge queue: ``("null", (src, dst), dscp)`` passes packets with their
#: codepoint (``(src, dst)`` is None for the catch-all entry), ``("pf", conditioner, flow)`` is a
#: per-flow meter and ``("agg", conditioner)`` an aggregate one.
EntryId: TypeAlias = (
    tuple[Literal["null"], tuple[str, str] | None, int]
    | tuple[Literal["pf"], int, int]
    | tuple[Literal["agg"], int]
)
#: A codepoint key: ``("base", dscp)`` for packets as a host sent them, ``("e", direction, entry,
#: colour, value)`` for what a policy entry writes, and ``("drop",)`` for dropped packets once
#: keys are merged per DSCP (untagged plans). The last element is always what it stands for.
CpKey: TypeAlias = (
    tuple[Literal["base"], int] | tuple[Literal["e"], int, EntryId, str, Value] | tuple[Literal["drop"]]
)
#: How a flow's data packets are marked: ``("host", dscp)`` by its host, ``("edge", direction,
#: {cp: (colour, value)})`` by one edge queue's policy entry of its own.
Marking: TypeAlias = tuple[Literal["host"], int] | tuple[Literal["edge"], int, dict[int, tuple[str, Value]]]


def unsupported_reason(resolved: dict[str, Any]) -> str | None:
    """Return None if ns-2 can express ``resolved``, else a human-readable reason.

    ``resolved`` is a scenario the core has validated (:func:`qoslab.scenario.to_ns2_resolved`),
    so only what ns-2 lacks is asked here: each queue's export as its mechanism's file describes
    it (droptail, red and ared as ``Queue/*``; rio, wred and multi in ns-2's dsRED queues with
    the traffic conditioners, see "DiffServ" in the package documentation), reno/newreno TCP,
    tcp/cbr/onoff/poisson flows, at most one link per node pair, and a dsRED plan for the
    conditioners and multi-precedence queues.
    """
    pairs: set[frozenset[str]] = set()
    for link in resolved["links"]:
        where = f"link {link['name']!r}"
        pair = frozenset((link["a"], link["b"]))
        if pair in pairs:
            return f"{where}: ns-2 supports only one link between a pair of nodes"
        pairs.add(pair)
        if link.get("jitter_s"):
            return f"{where}: ns-2's links have no timing noise (`jitter`); set it to 0 to compare"
        for qkey in ("queue_ab", "queue_ba"):
            reason = queue_reason(f"{where} {qkey}", link[qkey])
            if reason:
                return reason
    for f in resolved["flows"]:
        reason = flow_reason(f"flow {f['name']!r}", f)
        if reason:
            return reason
    for a in resolved.get("arrivals", []):
        return (
            f"arrivals {a['name']!r}: flow-arrival processes are not supported by the ns-2 export "
            "(declare the transfers as [[flow]] tables with `size`)"
        )
    if ds_active(resolved):
        try:
            ds_plan(resolved)
        except Refusal as exc:
            return str(exc)
    return None


@dataclass
class _Stream:
    """Packets of one flow in one direction: its data, or (TCP) its ACKs."""

    index: int
    flow: int
    kind: str  # "data" or "ack"
    src: str
    dst: str
    dscp: int
    label: str


@dataclass
class _Entry:
    """One ns-2 policy-table entry of an edge queue (one meter)."""

    eid: EntryId
    cond: int | None  # conditioner index; None = Null policy (keep the codepoint)
    outputs: dict[str, Value]  # colour -> DSCP or "drop"
    pairs: set[tuple[str, str]] = field(default_factory=set)
    streams: list[int] = field(default_factory=list)
    keep_in: set[int] = field(default_factory=set)


@dataclass
class DsQueue:
    """The configuration of one dsRED queue (one link direction)."""

    edge: bool
    conf: dict[str, Any]  # the qoslab queue config of this direction
    entries: dict[EntryId, _Entry] = field(default_factory=dict)
    arriving: set[CpKey] = field(default_factory=set)  # cp keys its PHB table sees
    tcl: list[str] = field(default_factory=list)
    cp_value: dict[int, Value] = field(default_factory=dict)  # cp -> DSCP or "drop"
    cp_vq: dict[int, tuple[int, int]] = field(default_factory=dict)  # arriving cp -> (queue, prec)


@dataclass
class DsPlan:
    cp: dict[CpKey, int]  # cp key -> ns-2 codepoint
    tagged: bool  # every policy entry has codepoints of its own
    flow_cp: list[int]
    ack_cp: int
    queues: dict[int, DsQueue]  # by link-direction index (2 * link + 0 for ab, 1 for ba)
    marked: list[Marking | None]  # per flow; None: ns-2 cannot count its marking alone
    cond_cps: dict[int, list[tuple[int, int, str]]]  # conditioner -> [(direction, cp, colour)]


def _bfs_counts(adj: dict[str, list[str]], s: str) -> tuple[dict[str, int], dict[str, int]]:
    """Hop distances from ``s`` and the number of shortest paths to each node."""
    dist, count = {s: 0}, {s: 1}
    todo = deque([s])
    while todo:
        u = todo.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                count[v] = count[u]
                todo.append(v)
            elif dist[v] == dist[u] + 1:
                count[v] += count[u]
    return dist, count


def _classifies(
    cl: dict[str, Any], s: _Stream, flows: list[dict[str, Any]], dscps: set[int], where: str
) -> bool:
    kind, value = cl["kind"], cl.get("value")
    if kind == "any":
        return True
    if kind == "flow":  # a flow's data and its ACKs (qoslab classifies packets by flow)
        return bool(flows[s.flow]["name"] == value)
    if kind == "src":
        return s.src == value
    if kind == "dst":
        return s.dst == value
    if len(dscps) != 1:
        raise Refusal(
            f"{where}: {s.label} arrives with a codepoint an upstream conditioner chose per packet; "
            "ns-2 policies cannot classify on it (they match source/destination nodes only)"
        )
    return value in dscps


def ds_plan(resolved: dict[str, Any]) -> DsPlan:
    """Work out the dsRED configuration of every link direction, or raise Refusal.

    The steps, in order: refuse conditioners ns-2 has no policer for; find the dsRED queues
    (core queues, and the edge queues that carry conditioners); walk every packet stream along
    its route through them, giving each edge queue its policy entries; number the codepoints;
    write each queue's Tcl; and note how each flow's marking can be counted in ns-2's output.
    """
    conds = resolved.get("conditioners") or []
    _check_policers(conds, resolved)
    domain = _DsDomain.of(resolved)
    streams = _streams(resolved["flows"])
    conditioned: dict[int, list[tuple[int, EntryId]]] = {}  # stream -> [(j, eid)] of non-Null entries
    for s in streams:
        domain.walk(s, conditioned)
    _check_keep(domain)
    cp, tagged = _codepoints(streams, domain.queues)
    for j, dq in sorted(domain.queues.items()):
        dq.tcl = _dsred_tcl(j, dq, cp, resolved, domain.dname(j))
    flow_cp = [cp[("base", s.dscp)] for s in streams if s.kind == "data"]
    return DsPlan(
        cp,
        tagged,
        flow_cp,
        cp[("base", ACK_DSCP)],
        domain.queues,
        _markings(streams, conditioned, domain.queues, cp, tagged),
        _conditioner_codepoints(len(conds), domain.queues, cp, tagged),
    )


def _check_policers(conds: list[dict[str, Any]], resolved: dict[str, Any]) -> None:
    """Refuse the first conditioner ns-2 has no policer for."""
    for k, c in enumerate(conds):
        name = c.get("name") if isinstance(c, dict) else None
        reason = conditioner_reason(f"conditioner {name or k!r}", c, resolved)
        if reason:
            raise Refusal(reason)


def _streams(flows: list[dict[str, Any]]) -> list[_Stream]:
    """Every flow's data stream, each TCP flow's ACK stream right after it."""
    streams: list[_Stream] = []
    for i, f in enumerate(flows):
        streams.append(
            _Stream(len(streams), i, "data", f["src"], f["dst"], f.get("dscp", 0), f"flow {f['name']!r}")
        )
        if f["kind"] == "tcp":
            label = f"the ACKs of flow {f['name']!r}"
            streams.append(_Stream(len(streams), i, "ack", f["dst"], f["src"], ACK_DSCP, label))
    return streams


@dataclass
class _DsDomain:
    """The DS domain as ns-2 sees it (RFC 2475): link directions, static shortest-path routes by
    hop count, and the dsRED queue of every direction that has one (its edge queues carry the
    conditioners, whose policy entries the walk of each stream fills in)."""

    flows: list[dict[str, Any]]
    links: list[dict[str, Any]]
    conds: list[dict[str, Any]]
    dir_of: dict[tuple[str, str], int]  # (from, to) -> direction index (2 * link + 0 ab, 1 ba)
    adj: dict[str, list[str]]
    queues: dict[int, DsQueue]
    cond_at: dict[int, list[int]]  # direction -> conditioners on it, in order
    bfs: dict[str, tuple[dict[str, int], dict[str, int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, resolved: dict[str, Any]) -> _DsDomain:
        links = resolved["links"]
        conds = resolved.get("conditioners") or []
        dir_of: dict[tuple[str, str], int] = {}
        for k, lk in enumerate(links):
            dir_of[(lk["a"], lk["b"])] = 2 * k
            dir_of[(lk["b"], lk["a"])] = 2 * k + 1
        adj: dict[str, list[str]] = {n: [] for n in resolved["nodes"]}
        for a, b in dir_of:
            adj[a].append(b)
        for n in adj:
            adj[n].sort()
        queues: dict[int, DsQueue] = {}
        for k, lk in enumerate(links):
            for off, qk in ((0, "queue_ab"), (1, "queue_ba")):
                if in_dsred(lk[qk]):
                    queues[2 * k + off] = DsQueue(edge=False, conf=lk[qk])
        link_index = {lk["name"]: k for k, lk in enumerate(links)}
        cond_at: dict[int, list[int]] = {}
        for ci, c in enumerate(conds):
            j = 2 * link_index[c["link"]] + (0 if c["direction"] == "ab" else 1)
            cond_at.setdefault(j, []).append(ci)
            q = links[j // 2]["queue_ab" if j % 2 == 0 else "queue_ba"]
            queues.setdefault(j, DsQueue(edge=True, conf=q)).edge = True
        return cls(resolved["flows"], links, conds, dir_of, adj, queues, cond_at)

    def dname(self, j: int) -> str:
        return f"link {self.links[j // 2]['name']!r} {'ab' if j % 2 == 0 else 'ba'}"

    def tree(self, n: str) -> tuple[dict[str, int], dict[str, int]]:
        if n not in self.bfs:
            self.bfs[n] = _bfs_counts(self.adj, n)
        return self.bfs[n]

    def route(self, s: _Stream) -> list[int]:
        """The directions on ``s``'s shortest paths, in path order; refuse a tie at a conditioner."""
        ds, ns_ = self.tree(s.src)
        dt, nt = self.tree(s.dst)
        total = ns_[s.dst]
        steps = []
        for (u, v), j in self.dir_of.items():
            if u in ds and v in dt and ds[u] + 1 + dt[v] == ds[s.dst]:
                on_all = ns_[u] * nt[v] == total
                if j in self.cond_at and not on_all:
                    raise Refusal(
                        f"{s.label} has several shortest paths and only some pass the conditioner "
                        f"on {self.dname(j)}; ns-2 breaks such ties its own way"
                    )
                steps.append((ds[u], j))
        steps.sort()
        return [j for _, j in steps]

    def walk(self, s: _Stream, conditioned: dict[int, list[tuple[int, EntryId]]]) -> None:
        """Follow ``s`` along its route: each dsRED queue learns the cp keys arriving at it, each
        edge queue gets the policy entry that meters (or passes) ``s``; ``conditioned`` gets the
        metering entries."""
        keys: set[CpKey] = {("base", s.dscp)}
        dscps = {s.dscp}
        for j in self.route(s):
            if j not in self.queues:
                continue
            dq = self.queues[j]
            if not dq.edge:
                dq.arriving |= keys
                continue
            entry, outs = self._policy_entry(s, j, dscps)
            if entry.cond is not None:
                conditioned.setdefault(s.index, []).append((j, entry.eid))
            entry.pairs.add((s.src, s.dst))
            entry.streams.append(s.index)
            dq.arriving |= outs
            keys = {k for k in outs if k[-1] != "drop"}
            dscps = {k[-1] for k in keys if k[-1] != "drop"}  # all of them: keys has no "drop"
            if not keys:
                break  # every packet is dropped here

    def _classifier_match(self, s: _Stream, j: int, dscps: set[int]) -> int | None:
        """The one conditioner on direction ``j`` whose classifier takes ``s`` (None: none does)."""
        where = f"conditioner on {self.dname(j)}"
        conds = self.conds
        match = None
        seen_dscps = dscps
        for ci in self.cond_at[j]:  # qoslab applies every matching conditioner, in order
            if not _classifies(conds[ci]["classifier"], s, self.flows, seen_dscps, where):
                continue
            if match is not None:
                raise Refusal(
                    f"{s.label} matches both conditioner {conds[match]['name']!r} and "
                    f"{conds[ci]['name']!r} on {self.dname(j)}; an ns-2 edge queue applies one policy "
                    "per packet"
                )
            match = ci
            acts = conds[ci]["actions"]
            after = {acts[c] for c in _policy(conds[ci])["colours"]}
            seen_dscps = {d for d in after if is_int(d)} | (dscps if "keep" in after else set())
        return match

    def _policy_entry(self, s: _Stream, j: int, dscps: set[int]) -> tuple[_Entry, set[CpKey]]:
        """The policy entry of edge queue ``j`` for ``s`` arriving with ``dscps``, and the cp keys
        it writes: a Null entry keeping the codepoint, or the matching conditioner's meter."""
        dq = self.queues[j]
        pair = (s.src, s.dst)
        match = self._classifier_match(s, j, dscps)
        if match is None:
            if len(dscps) != 1:
                raise Refusal(
                    f"{s.label} reaches the edge queue of {self.dname(j)} with a codepoint an upstream "
                    "conditioner chose per packet; ns-2's edge queue would overwrite it with a fixed one"
                )
            d = next(iter(dscps))
            eid: EntryId = ("null", pair, d)
            return dq.entries.setdefault(eid, _Entry(eid, None, {"green": d})), {("base", d)}
        c = self.conds[match]
        policy = _policy(c)
        if c["meter"]["mode"] == "aware" and not policy["any_pre_colour"] and dscps & PRE_NOT_GREEN:
            raise Refusal(
                f"conditioner {c['name']!r}: ns-2's policers are colour-blind; a colour-aware "
                f"meter is exported only if all its packets arrive pre-coloured green (not AFx2 "
                f"or AFx3), but {s.label} arrives with {sorted(dscps)}"
            )
        eid = ("pf", match, s.flow) if c["scope"] == "per_flow" else ("agg", match)
        entry = dq.entries.setdefault(eid, _Entry(eid, match, {}))
        outs: set[CpKey] = set()
        for colour in policy["colours"]:
            act = c["actions"][colour]
            if act == "keep":
                if len(dscps) != 1:
                    raise Refusal(
                        f"conditioner {c['name']!r}: 'keep' needs a known incoming codepoint, "
                        f"but {s.label} arrives with one chosen per packet upstream"
                    )
                act = next(iter(dscps))
                entry.keep_in.add(act)
            entry.outputs[colour] = act
            outs.add(("e", j, eid, colour, act))
        return entry, outs


def _check_keep(domain: _DsDomain) -> None:
    """Refuse an aggregate meter whose 'keep' action would need several codepoints."""
    for j, dq in domain.queues.items():
        for e in dq.entries.values():
            if len(e.keep_in) > 1:
                assert e.cond is not None  # only a conditioner's entry keeps codepoints
                raise Refusal(
                    f"conditioner {domain.conds[e.cond]['name']!r} on {domain.dname(j)}: 'keep' with one "
                    f"aggregate meter over packets arriving with different codepoints {sorted(e.keep_in)}; "
                    "an ns-2 policy writes one codepoint per colour"
                )


def _codepoints(streams: list[_Stream], queues: dict[int, DsQueue]) -> tuple[dict[CpKey, int], bool]:
    """The ns-2 codepoint of every cp key, and whether the plan is tagged.

    Tagged: one set of codepoints per policy entry (per-flow marking counts); if that needs
    more than NS_MAX_CP, untagged: one codepoint per DSCP.
    """
    all_keys: list[CpKey] = [("base", ACK_DSCP)]
    for s in streams:
        all_keys.append(("base", s.dscp))
    for dq in queues.values():
        for key in sorted(dq.arriving, key=repr):
            all_keys.append(key)
    uniq = list(dict.fromkeys(all_keys))
    tagged = len(uniq) <= NS_MAX_CP

    def canon(key: CpKey) -> CpKey:
        if tagged or key[0] == "base":
            return key
        v = key[-1]
        return ("drop",) if v == "drop" else ("base", v)

    canon_keys = list(dict.fromkeys(canon(k) for k in uniq))
    if len(canon_keys) > NS_MAX_CP:
        raise Refusal(f"the scenario needs {len(canon_keys)} codepoints; ns-2's dsRED has {NS_MAX_CP}")
    cp_of = _number_codepoints(canon_keys)
    return {k: cp_of[canon(k)] for k in uniq}, tagged


def _number_codepoints(canon_keys: list[CpKey]) -> dict[CpKey, int]:
    """Number the codepoints: a DSCP below NS_MAX_CP keeps its own number where it can."""
    cp_of: dict[CpKey, int] = {}
    used: set[int] = set()
    for key in canon_keys:  # a DSCP below 40 keeps its own number where it can
        if key[0] == "base" and key[1] < NS_MAX_CP and key[1] not in used:
            cp_of[key] = key[1]
            used.add(key[1])
    for key in canon_keys:  # then marker outputs, where their DSCP's number is still free
        last = key[-1]
        if key not in cp_of and is_int(last) and last < NS_MAX_CP and last not in used:
            cp_of[key] = last
            used.add(last)
    free = (n for n in range(NS_MAX_CP) if n not in used)
    for key in canon_keys:
        if key not in cp_of:
            cp_of[key] = next(free)
    return cp_of


def _markings(
    streams: list[_Stream],
    conditioned: dict[int, list[tuple[int, EntryId]]],
    queues: dict[int, DsQueue],
    cp: dict[CpKey, int],
    tagged: bool,
) -> list[Marking | None]:
    """How each flow's data packets are marked, where ns-2's output can count that alone."""
    marked: list[Marking | None] = []
    for s in streams:
        if s.kind != "data":
            continue
        hits = conditioned.get(s.index, [])
        if not hits:
            marked.append(("host", s.dscp))
            continue
        j, eid = hits[0]
        e = queues[j].entries[eid]
        if tagged and len(hits) == 1 and e.streams == [s.index]:
            marked.append(("edge", j, {cp[("e", j, eid, c, v)]: (c, v) for c, v in e.outputs.items()}))
        else:
            marked.append(None)
    return marked


def _conditioner_codepoints(
    n_conds: int, queues: dict[int, DsQueue], cp: dict[CpKey, int], tagged: bool
) -> dict[int, list[tuple[int, int, str]]]:
    """Conditioner -> [(direction, codepoint, colour)] its meters write (empty if untagged)."""
    cond_cps: dict[int, list[tuple[int, int, str]]] = {ci: [] for ci in range(n_conds)}
    if tagged:
        for j, dq in queues.items():
            for e in dq.entries.values():
                if e.cond is not None:
                    cond_cps[e.cond] += [(j, cp[("e", j, e.eid, c, v)], c) for c, v in e.outputs.items()]
    return cond_cps


def _policy(c: dict[str, Any]) -> dict[str, Any]:
    """ns-2's dsRED policy of conditioner ``c``'s meter (checked by ``conditioner_reason``)."""
    policy = meter_policy(c["meter"]["type"])
    assert policy is not None, "checked by conditioner_reason"
    return policy


def _policy_arg(m: dict[str, Any], arg: dict[str, Any]) -> str:
    """One argument of a policy entry, read from the meter's key as its kind declares it."""
    if arg["format"] == "integer":
        return str(m[arg["key"]])
    v: Any = m.get(arg["key"])
    return tcl_number(arg["default"] if v is None and "default" in arg else v)


def precedences(q: dict[str, Any]) -> list[dict[str, Any]]:
    """The RED curves of an RIO or WRED queue's resolved form, by drop precedence: ``in``,
    ``mid`` (when given) and ``out``, each ``{min_th, max_th, max_p}``."""
    return [q[name] for name in ("in", "mid", "out") if name in q]


def _dsred_tcl(j: int, dq: DsQueue, cp: dict[CpKey, int], resolved: dict[str, Any], where: str) -> list[str]:
    """The Tcl lines configuring dsRED queue ``$q`` of direction ``j``; fills cp_value/cp_vq.

    A cp key's last element is what the codepoint stands for: a DSCP or "drop".
    """
    conf = dq.conf
    if conf.get("queues"):  # a multi queue: its physical queues
        subs = [(sub["dscp"], sub["queue"], sub.get("weight", 1)) for sub in conf["queues"]]
        sched = SCHEDULERS[conf["scheduler"]]
    else:
        subs = [(None, conf, 1)]
        sched = "PRI"
    # the RED physical queues (rio, wred); the others are DropTail (a Queue class of the core's)
    rq = [q for _, q, _ in subs if core_export(q) is None]
    limits = {q.get("limit_pkts") for q in rq}
    if rq:
        shared = next(iter(limits))
    else:
        lps = {q.get("limit_pkts") for _, q, _ in subs}
        shared = None if None in lps else max(lps)
    qlim = UNLIMITED_QUEUE_PKTS if shared is None else int(shared)
    mps = rq[0]["mean_pkt_size_bytes"] if rq else 1000
    nprec = max([len(precedences(q)) for q in rq], default=1)

    # codepoints that reach this queue's PHB table
    arriving = {cp[k]: k[-1] for k in dq.arriving}
    value_all = {cp[k]: k[-1] for k in cp}
    drop_cps = sorted(c for c, v in arriving.items() if v == "drop")
    nq = len(subs) + (1 if drop_cps else 0)
    if nq > NS_MAX_QUEUES:
        raise Refusal(f"{where}: needs {nq} physical queues; ns-2's dsRED has {NS_MAX_QUEUES}")
    if drop_cps and sched in ("RR", "WRR"):
        raise Refusal(
            f"{where}: a conditioner 'drop' action is exported as an extra always-empty dsRED queue, "
            "which would shift ns-2's round-robin pointer; use a priority scheduler here"
        )

    def classify(dscp: int) -> tuple[int, int] | None:
        listed = [qi for qi, (dl, _, _) in enumerate(subs) if dl is not None and dscp in dl]
        fallback = [qi for qi, (dl, _, _) in enumerate(subs) if dl is None]
        if not listed and not fallback:
            return None
        default = (listed or fallback)[0]
        q = subs[default][1]
        if core_export(q) is not None:
            return default, 0
        return default, min(_core.drop_precedence(dscp), len(precedences(q)) - 1)

    lines = [
        f"$q set numQueues_ {nq}",
        f"$q set limit_ {qlim}",
        f"$q setNumPrec {nprec}",
        f"$q meanPktSize {mps}",
    ]
    if any(q.get("ecn") for q in rq):  # one ecn_ per dsRED queue (the core refuses a mix)
        lines.append("$q set ecn_ 1")
    for qi, (_, q, _) in enumerate(subs):
        if core_export(q) is not None:
            th = UNLIMITED_QUEUE_PKTS if q.get("limit_pkts") is None else int(q["limit_pkts"])
            lines += [f"$q configQ {qi} {p} {th} {th} 1.0" for p in range(nprec)]
            lines.append(f"$q setMREDMode DROP {qi}")
            continue
        precs = precedences(q)
        for p in range(nprec):
            pr = precs[min(p, len(precs) - 1)]  # unused precedences copy the last one
            lines.append(
                f"$q configQ {qi} {p} {int(pr['min_th'])} {int(pr['max_th'])} "
                f"{tcl_number(pr['max_p'])} {tcl_number(q['w_q'])}"
            )
        mode = schema.queue_kinds()[q["type"]]["x-ns2-dsred"][q.get("mode", "")]
        lines.append(f"$q setMREDMode {mode} {qi}")
    if drop_cps:
        dqi = len(subs)
        lines += [f"$q configQ {dqi} {p} 0 0 1.0" for p in range(nprec)]
        lines.append(f"$q setMREDMode DROP {dqi}")
    for c in sorted(value_all):
        value = value_all[c]
        vq = (len(subs), 0) if value == "drop" else classify(value)
        if c in arriving:
            if vq is None:
                raise Refusal(
                    f"{where}: codepoint {value} reaches this multi queue, which has no queue for it "
                    "and no default queue"
                )
            dq.cp_value[c] = value
            dq.cp_vq[c] = vq
        elif vq is None or vq[0] >= nq:
            vq = (0, 0)  # never looked up: no such packet reaches this queue
        lines.append(f"$q addPHBEntry {c} {vq[0]} {vq[1]}")
    lines.append(f"$q setSchedularMode {sched}")
    if sched == "WRR":
        lines += [f"$q addQueueWeights {qi} {int(w)}" for qi, (_, _, w) in enumerate(subs)]
    if dq.edge:
        lines += _policy_tcl(j, dq, cp, resolved, where)
    return lines


def _policy_tcl(j: int, dq: DsQueue, cp: dict[CpKey, int], resolved: dict[str, Any], where: str) -> list[str]:
    """addPolicyEntry/addPolicerEntry lines for an edge queue (first match wins in ns-2)."""
    conds = resolved.get("conditioners") or []
    node_id = {n: i for i, n in enumerate(resolved["nodes"])}
    by_pair: dict[tuple[str, str], list[_Entry]] = {}
    for e in dq.entries.values():
        for pair in sorted(e.pairs):
            by_pair.setdefault(pair, []).append(e)
    for pair, es in by_pair.items():
        if len(es) > 1:
            what = []
            for e in es:
                if e.cond is None:
                    what.append(f"unconditioned codepoint {e.outputs['green']}")
                elif e.eid[0] == "pf":
                    what.append(f"a per-flow meter of conditioner {conds[e.cond]['name']!r}")
                else:
                    what.append(f"conditioner {conds[e.cond]['name']!r}")
            raise Refusal(
                f"{where}: ns-2 classifies by (source node, destination node) only, and packets from "
                f"{pair[0]!r} to {pair[1]!r} need different treatment here: {'; '.join(what)} "
                "(per-flow scope needs flows with distinct node pairs)"
            )
    exact: list[tuple[tuple[int, int], _Entry]] = []
    aggs: list[tuple[tuple[int, int], _Entry]] = []
    for e in dq.entries.values():
        if e.eid[0] == "agg":
            srcs = {node_id[p[0]] for p in e.pairs}
            dsts = {node_id[p[1]] for p in e.pairs}
            pat = (next(iter(srcs)) if len(srcs) == 1 else -1, next(iter(dsts)) if len(dsts) == 1 else -1)
            aggs.append((pat, e))
        else:
            if len(e.pairs) != 1:  # a Null entry has one pair: this is a per-flow meter's
                assert e.cond is not None
                raise Refusal(
                    f"{where}: one per-flow meter of conditioner {conds[e.cond]['name']!r} sees packets "
                    f"of several node pairs {sorted(e.pairs)}; ns-2 has one meter per (source, destination)"
                )
            (pair,) = e.pairs
            exact.append(((node_id[pair[0]], node_id[pair[1]]), e))
    aggs.sort(key=lambda pe: (pe[0][0] == -1) + (pe[0][1] == -1))

    def hits(pat: tuple[int, int], s: int, d: int) -> bool:
        return pat[0] in (s, -1) and pat[1] in (d, -1)

    for _, e in aggs:
        for pair in e.pairs:
            s, d = node_id[pair[0]], node_id[pair[1]]
            first = next(x for p, x in aggs if hits(p, s, d))
            if first is not e:
                assert e.cond is not None and first.cond is not None  # aggregate meters' entries
                raise Refusal(
                    f"{where}: the aggregate meters of conditioners {conds[e.cond]['name']!r} and "
                    f"{conds[first.cond]['name']!r} cannot be told apart by ns-2's (source, destination) "
                    "policy table"
                )
    table = exact + aggs
    if not any(p == (-1, -1) for p, _ in table):
        table.append(((-1, -1), _Entry(("null", None, ACK_DSCP), None, {"green": ACK_DSCP})))
    if len(table) > NS_MAX_POLICIES:
        raise Refusal(f"{where}: needs {len(table)} policy entries; ns-2 allows {NS_MAX_POLICIES}")
    lines: list[str] = []
    policers: dict[tuple[str, int], tuple[int, ...]] = {}
    key: tuple[str, int]
    down: tuple[int, ...]
    for (s, d), e in table:
        if e.cond is None:
            green = e.outputs["green"]
            assert green != "drop"  # a Null entry passes its packets with their own DSCP
            c0 = cp[("base", green)]
            lines.append(f"$q addPolicyEntry {s} {d} Null {c0}")
            key, down = ("Null", c0), ()
        else:
            m = conds[e.cond]["meter"]
            policy = _policy(conds[e.cond])
            ptype = policy["policy"]
            outs = [cp[("e", j, e.eid, c, e.outputs[c])] for c in policy["colours"]]
            args = [_policy_arg(m, a) for a in policy["args"]]
            lines.append(f"$q addPolicyEntry {s} {d} {ptype} {outs[0]} {' '.join(args)}")
            key, down = (ptype, outs[0]), tuple(outs[1:])
        if key in policers and policers[key] != down:
            raise Refusal(
                f"{where}: two {key[0]} meters write the same in-profile codepoint but different "
                "out-of-profile ones; ns-2 keys its policer table on (policer, in-profile codepoint)"
            )
        if key not in policers:
            policers[key] = down
            lines.append(f"$q addPolicerEntry {key[0]} {' '.join(str(x) for x in (key[1], *down))}")
    return lines
