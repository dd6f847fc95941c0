"""Running a scenario in qoslab and in ns-2 or ns-3 side by side (``qoslab crosscheck``).

Both simulators get the same resolved scenario (``qoslab.ns2`` writes the ns-2 script,
``qoslab.ns3`` the ns-3 program's input; ``against`` chooses) and the same seeds; random start
times are drawn from the same distribution, not the same values, so the comparison is
statistical: each metric is shown as mean ± 95 % CI over the seeds in both, with the relative
difference of the means, and judged (:data:`FAMILIES`): it disagrees when the difference
exceeds the family's tolerance and Welch's test over the seeds says the means differ. Against
ns-2 the qoslab side runs the ``ns2`` flavour of every dsRED mechanism by default; against ns-3
(which has no DiffServ mechanisms) the scenario as written, and the families and tolerances
are :data:`FAMILIES_NS3` (issue 22's: per-flow throughput 10 %, Jain's index 0.03, mean
queueing delay 15 %).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qoslab import _core, ns2, ns3, schema
from qoslab.ns2.flavour import ns2_flavoured
from qoslab.report.frames import typed_rows
from qoslab.runs.simulate import jain_index
from qoslab.runs.simulate import run as run_qoslab
from qoslab.scenario import Scenario, to_ns2_resolved
from qoslab.stats import Estimate, estimate, welch_p

COLOURS = ("green", "yellow", "red")


@dataclass
class Side:
    """Per-seed values of every compared metric, for one simulator."""

    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, v: float) -> None:
        self.values.setdefault(key, []).append(float(v))


class _FlowRow:  # the columns of a run's flows table read here
    name: str
    throughput_bps: float


class _LinkRow:  # and of its links table
    link_name: str
    direction: str
    arrivals: int
    utilization: float
    early_drops: int
    forced_drops: int
    overflow_drops: int
    window_admitted: int
    window_wait_ns: int
    window_early_drops: int
    window_forced_drops: int
    window_overflow_drops: int
    window_marks: int


#: ``process`` of a declared flow's row in the transfers table (an arrival process's index
#: otherwise).
DECLARED = 0xFFFFFFFF


def finite_flows(resolved: dict[str, Any]) -> list[str]:
    """The names of the declared TCP flows that are finite transfers (``size``)."""
    return [f["name"] for f in resolved["flows"] if f["kind"] == "tcp" and f.get("size_bytes") is not None]


def _add_transfer(side: Side, name: str, fct_s: float) -> None:
    """A finite transfer's completion time (NaN when unfinished: left out of its estimate) and
    whether it was unfinished at the end of the run."""
    side.add(f"fct_s {name}", fct_s)
    side.add(f"unfinished {name}", float(fct_s != fct_s))


def _qoslab_metrics(sc: Scenario, seed: int, side: Side, *, queue_delay: bool = False) -> None:
    r = run_qoslab(sc, seed)
    finite = finite_flows(sc.resolved)
    bulk_thr = []
    for f in typed_rows(r.flows, _FlowRow):
        if f.name not in finite:
            side.add(f"throughput_kbps {f.name}", f.throughput_bps / 1e3)
            bulk_thr.append(f.throughput_bps)
        for c in COLOURS:
            side.add(f"{c} packets {f.name}", getattr(f, f"{c}_packets"))
    if not finite:
        side.add("jain index", r.fairness_index)
    elif len(bulk_thr) >= 2:
        side.add("jain index", jain_index(bulk_thr))
    t = r.raw["transfers"]
    declared = [f["name"] for f in sc.resolved["flows"]]
    fct = {
        declared[int(i)]: float(x)
        for p, i, x in zip(t["process"], t["id"], t["fct_s"], strict=True)
        if int(p) == DECLARED
    }
    for name in finite:  # a transfer that never started has no row: unfinished
        _add_transfer(side, name, fct.get(name, float("nan")))
    bn = sc.resolved["measurement"]["bottleneck"]
    for lk in typed_rows(r.links, _LinkRow):
        if lk.link_name != bn or lk.arrivals == 0:
            continue
        where = f"{lk.link_name}:{lk.direction}"
        side.add(f"utilisation {where}", lk.utilization)
        if queue_delay:  # against ns-3: everything inside the measurement window
            wait = lk.window_wait_ns / lk.window_admitted / 1e6 if lk.window_admitted else np.nan
            side.add(f"queue_delay_ms {where}", wait)
            window_drops = lk.window_early_drops + lk.window_forced_drops + lk.window_overflow_drops
            side.add(f"drops {where}", window_drops)
            side.add(f"ecn marks {where}", lk.window_marks)
            continue
        side.add(f"drops {where}", lk.early_drops + lk.forced_drops + lk.overflow_drops)
        for p in range(3):
            side.add(f"drops prec{p} {where}", getattr(lk, f"drops_prec{p}"))


def _external_flows(sc: Scenario, flows: list[dict[str, Any]], side: Side) -> float:
    """The flows' metrics from ns-2's or ns-3's output (the same fields in both): a finite
    transfer's completion time, a bulk flow's throughput, and the bulk flows' Jain index (all
    flows' when there is no transfer). Returns the flows' total throughput, bit/s."""
    finite = finite_flows(sc.resolved)
    bulk_thr = []
    for f in flows:
        if f["name"] in finite:
            _add_transfer(side, f["name"], f["fct_s"])
        else:
            side.add(f"throughput_kbps {f['name']}", f["throughput_bps"] / 1e3)
            bulk_thr.append(f["throughput_bps"])
    if not finite or len(bulk_thr) >= 2:
        side.add("jain index", jain_index(bulk_thr))
    return float(sum(f["throughput_bps"] for f in flows))


def _external_bottleneck(sc: Scenario, links: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(LINK:DIR, row)`` of each direction of the bottleneck that saw arrivals, from ns-2's or
    ns-3's output."""
    bn = sc.resolved["measurement"]["bottleneck"]
    for lk in links:
        if lk["name"] == bn and lk["arrivals"] != 0:
            yield f"{lk['name']}:{lk['direction']}", lk


def _bottleneck_bps(sc: Scenario) -> float:
    bn = sc.resolved["measurement"]["bottleneck"]
    return float(next(lk["bandwidth_bps"] for lk in sc.resolved["links"] if lk["name"] == bn))


def _ns2_metrics(sc: Scenario, seed: int, side: Side) -> None:
    o = ns2.run_ns2(to_ns2_resolved(sc.resolved, seed), seed)
    total = _external_flows(sc, o["flows"], side)
    for f in o["flows"]:
        colored = f.get("colored") or {}
        for c in COLOURS:
            if c in colored and colored[c] is not None:
                side.add(f"{c} packets {f['name']}", colored[c])
    bw = _bottleneck_bps(sc)
    m = sc.resolved["measurement"]
    window = (m["end_ns"] - m["start_ns"]) / 1e9
    for where, lk in _external_bottleneck(sc, o["links"]):
        side.add(f"drops {where}", lk["drops"])
        if where.endswith(":ab"):
            side.add(f"utilisation {where}", total / bw if window > 0 else np.nan)
        by = lk.get("by_dscp")
        if by:
            prec = [0.0, 0.0, 0.0]
            for dscp, v in by.items():
                p = _core.drop_precedence(int(dscp))
                prec[p] += (v.get("early_drops") or 0) + (v.get("forced_drops") or 0)
            for p in range(3):
                side.add(f"drops prec{p} {where}", prec[p])


def _ns3_metrics(sc: Scenario, seed: int, side: Side) -> None:
    o = ns3.run_ns3(ns3.to_ns3_resolved(sc.resolved, seed), seed)
    total = _external_flows(sc, o["flows"], side)
    bw = _bottleneck_bps(sc)
    for where, lk in _external_bottleneck(sc, o["links"]):
        side.add(f"drops {where}", lk["window_drops"])
        side.add(f"queue_delay_ms {where}", lk["mean_queue_delay_s"] * 1e3)
        side.add(f"ecn marks {where}", lk["window_marks"])
        if where.endswith(":ab"):
            side.add(f"utilisation {where}", total / bw)


#: Metric families of the verdict: (name, key prefix, tolerance, relative?, absolute floor).
#: A row disagrees when ``|qoslab - ns-2|`` exceeds the tolerance (relative to ns-2's mean, or
#: absolute) *and* Welch's test over the seeds says the means differ (:func:`judge`). Counts
#: get a floor of a few packets: a difference of 3 drops in 20 seconds is no evidence.
#:
#: A finite transfer's completion time (``fct_s``, from its SYN to the ACK of its last segment)
#: is compared instead of its throughput (see :func:`crosscheck`), within 10 %. An FCT is a sum
#: of round trips (the SYN's, one per slow-start round, one per loss recovery, or an RTO), each
#: including the queueing delay that the competing flows cause. A short transfer's FCT is a
#: handful of them (15 KB of 1500 B segments: the SYN and three rounds), so 10 % is under half
#: a round trip: less than the smallest difference of mechanism (one more round, one RTO). A
#: long transfer's FCT is its size over its throughput during its own life, a few seconds that
#: include other flows' arrivals, so it gets twice the 5 % of a per-flow throughput over a
#: long window. On an idle path the two give the same FCT to a serialisation time
#: (tests/test_ns2_finite.py): the tolerance is for the load, not for the TCP model.
#: ``unfinished`` (1 when a transfer had not completed by the end of the run) is judged
#: exactly: any difference of the fraction of seeds counts, subject to Welch's test.
FAMILIES: tuple[tuple[str, str, float, bool, float], ...] = (
    ("per-flow throughput", "throughput_kbps ", 0.05, True, 0.0),
    ("flow completion time", "fct_s ", 0.10, True, 0.0),
    ("unfinished transfers", "unfinished ", 0.0, False, 0.0),
    ("Jain index", "jain index", 0.02, False, 0.0),
    ("drops", "drops ", 0.15, True, 5.0),
    ("marks", "", 0.15, True, 5.0),  # colour counts and ECN marks: whatever is left
    ("utilisation", "utilisation ", 0.02, False, 0.0),
)

#: The families against ns-3 (issue 22): per-flow throughput within 10 %, Jain's index within
#: 0.03 and the bottleneck's mean queueing delay (``queue_delay_ms LINK:DIR``: from admission to
#: the start of transmission, over the packets admitted inside the measurement window) within
#: 15 %, with a floor of 0.1 ms for a direction that hardly queues (the ACKs'); the other
#: families as against ns-2. ns-3's TCP is a different implementation (byte-based, SACK, a
#: three-way handshake), not a port of the same agents, hence the wider throughput tolerance.
#: Against ns-3 drops and ECN marks are counted inside the measurement window, as throughput
#: and delay are: over the whole run they are dominated by the start-up's slow-start overshoot
#: (63 % of dumbbell-5-droptail's drops fall in its first 10 s), a transient of the two TCPs'
#: loss recovery rather than the steady state compared.
FAMILIES_NS3: tuple[tuple[str, str, float, bool, float], ...] = (
    ("per-flow throughput", "throughput_kbps ", 0.10, True, 0.0),
    ("flow completion time", "fct_s ", 0.10, True, 0.0),
    ("unfinished transfers", "unfinished ", 0.0, False, 0.0),
    ("Jain index", "jain index", 0.03, False, 0.0),
    ("queueing delay", "queue_delay_ms ", 0.15, True, 0.1),
    ("drops", "drops ", 0.15, True, 5.0),
    ("marks", "", 0.15, True, 5.0),  # ECN marks
    ("utilisation", "utilisation ", 0.02, False, 0.0),
)
ALPHA = 0.05

Families = tuple[tuple[str, str, float, bool, float], ...]


def family(metric: str, families: Families = FAMILIES) -> str:
    for name, prefix, *_ in families:
        if prefix and metric.startswith(prefix):
            return name
    return "marks"


@dataclass
class Row:
    """One metric in both simulators; ``ns2`` is the reference simulator's estimate (ns-2's or
    ns-3's, as the cross-check's ``against``), ``families`` the tolerances it is judged by."""

    metric: str
    qoslab: Estimate
    ns2: Estimate

    @property
    def rel_diff(self) -> float:
        if self.ns2.n == 0 or self.qoslab.n == 0 or self.ns2.mean == 0:
            return float("nan")
        return self.qoslab.mean / self.ns2.mean - 1.0

    @property
    def family(self) -> str:
        return family(self.metric, self.families)

    @property
    def tolerance(self) -> float:
        """The largest difference of the means that counts as agreement, in the metric's unit."""
        _, _, tol, relative, floor = next(f for f in self.families if f[0] == self.family)
        return max(tol * abs(self.ns2.mean), floor) if relative else tol

    @property
    def p_value(self) -> float:
        return welch_p(self.qoslab, self.ns2)

    #: Set by :func:`judge`: ``agree`` (within tolerance), ``noise`` (outside it, but the
    #: seeds do not show the means differ: more seeds would decide), ``disagree`` or ``n/a``.
    verdict: str = "n/a"
    families: Families = FAMILIES

    @property
    def zero(self) -> bool:
        """Zero in every seed of both simulators (left out of the table)."""
        return all(e.n == 0 or (e.minimum == 0 and e.maximum == 0) for e in (self.qoslab, self.ns2))


def judge(rows: list[Row]) -> list[Row]:
    """Sets each row's verdict. Outside its tolerance a row disagrees when Welch's test rejects
    equal means at ``ALPHA`` after Holm's correction over the rows of its family (ten flows'
    throughputs are ten tests; without the correction one in two ten-flow cross-checks of two
    identical simulators would find a "disagreement")."""
    for name, *_ in rows[0].families if rows else FAMILIES:
        fam = [r for r in rows if r.family == name and r.qoslab.n and r.ns2.n]
        ps = sorted((r.p_value if r.p_value == r.p_value else 1.0, i) for i, r in enumerate(fam))
        rejected: set[int] = set()
        for k, (p, i) in enumerate(ps):
            if p >= ALPHA / (len(ps) - k):
                break
            rejected.add(i)
        for i, r in enumerate(fam):
            if abs(r.qoslab.mean - r.ns2.mean) <= r.tolerance:
                r.verdict = "agree"
            else:
                r.verdict = "disagree" if i in rejected else "noise"
    for r in rows:
        if not (r.qoslab.n and r.ns2.n):
            r.verdict = "n/a"
    return rows


@dataclass
class Verdict:
    family: str
    verdict: str  # agree / disagree / n/a
    rows: int
    disagree: list[str]
    noise: list[str]
    worst: str


def verdicts(rows: list[Row]) -> list[Verdict]:
    """One verdict per metric family: it disagrees when any of its rows does."""
    out = []
    for name, _, tol, relative, floor in rows[0].families if rows else FAMILIES:
        rs = [r for r in rows if r.family == name and r.verdict != "n/a"]
        if not rs:
            continue
        bad = [r.metric for r in rs if r.verdict == "disagree"]
        noisy = [r.metric for r in rs if r.verdict == "noise"]
        if relative:
            worst_r = max(rs, key=lambda r: abs(r.rel_diff) if r.rel_diff == r.rel_diff else -1.0)
            worst = f"largest difference {worst_r.rel_diff * 100:+.1f} % ({worst_r.metric})"
            limit = f"{tol:.0%}" + (f" or {floor:g}" if floor else "")
        else:
            worst_r = max(rs, key=lambda r: abs(r.qoslab.mean - r.ns2.mean))
            worst = f"largest difference {worst_r.qoslab.mean - worst_r.ns2.mean:+.3f} ({worst_r.metric})"
            limit = f"{tol:g}"
        out.append(
            Verdict(name, "disagree" if bad else "agree", len(rs), bad, noisy, f"{worst}; tolerance {limit}")
        )
    return out


AGAINST = ("ns2", "ns3")


class CrosscheckRefused(RuntimeError):
    """The reference simulator cannot express the scenario (one line: the element and why)."""


def crosscheck(
    sc: Scenario,
    seeds: list[int],
    progress: Callable[[str], None] | None = None,
    flavour: str = "ns2",
    against: str = "ns2",
    tcp_flavour: str = "ns2",
) -> tuple[list[Row], list[str]]:
    """Runs every seed in qoslab and in ``against`` (``"ns2"``, the default, or ``"ns3"``); one
    row per metric that is not zero on both sides, and notes on the qoslab side's flavour.
    Against ns-2, ``flavour="ns2"`` (the default) runs every mechanism that has an ns-2 flavour
    in it (``qoslab.ns2.flavour``); ``"reference"`` runs the scenario as written (always the
    case against ns-3). Against ns-3, ``tcp_flavour="linux"`` runs qoslab's TCP senders in the
    linux transport flavour (:func:`linux_flavoured`). Raises :class:`qoslab.ns2.Ns2Error`
    (ns-2) or :class:`CrosscheckRefused` (ns-3) when the scenario cannot be expressed, and
    :class:`qoslab.ns3.Ns3Error` when ns-3 is missing or fails."""
    if against not in AGAINST:
        raise ValueError(f"--against must be 'ns2' or 'ns3', not {against!r}")
    if flavour not in ("ns2", "reference"):
        raise ValueError(f"--flavour must be 'ns2' or 'reference', not {flavour!r}")
    if tcp_flavour not in ("ns2", "linux"):
        raise ValueError(f"--tcp-flavour must be 'ns2' or 'linux', not {tcp_flavour!r}")
    if tcp_flavour == "linux" and against != "ns3":
        raise ValueError(
            "--tcp-flavour linux compares with ns-3 (--against ns3), whose senders follow Linux's; "
            "ns-2's one-way agents are what the ns2 flavour models"
        )
    if against == "ns3":
        return _crosscheck_ns3(sc, seeds, progress, tcp_flavour)
    reason = ns2.unsupported_reason(to_ns2_resolved(sc.resolved, seeds[0]))
    if reason:
        raise ns2.Ns2Error(f"ns-2 cannot express this scenario: {reason}")
    ours, notes = ns2_flavoured(sc) if flavour == "ns2" else (sc, ["qoslab side: the scenario as written"])
    finite = finite_flows(sc.resolved)
    if finite:
        bulk = len(sc.resolved["flows"]) - len(finite)
        notes = [
            *notes,
            f"finite transfers ({', '.join(finite)}): their completion times (fct_s) are compared, "
            "not their throughput over the measurement window (a transfer inside the window "
            "delivers its size in both simulators whatever its timing; one straddling an edge "
            "counts the bytes on one side of it, a function of its completion time); the Jain "
            "index is over the bulk flows" + ("" if bulk >= 2 else " (fewer than two: not compared)"),
        ]
    q, n = Side(), Side()
    for s in seeds:
        if progress:
            progress(f"seed {s}: qoslab")
        _qoslab_metrics(ours, s, q)
        if progress:
            progress(f"seed {s}: ns-2")
        _ns2_metrics(sc, s, n)
    return _rows(q, n, FAMILIES), notes


def _finite_note(sc: Scenario) -> list[str]:
    finite = finite_flows(sc.resolved)
    if not finite:
        return []
    bulk = len(sc.resolved["flows"]) - len(finite)
    return [
        f"finite transfers ({', '.join(finite)}): their completion times (fct_s) are compared, "
        "not their throughput over the measurement window; the Jain index is over the bulk flows"
        + ("" if bulk >= 2 else " (fewer than two: not compared)")
    ]


def _rows(q: Side, n: Side, families: Families) -> list[Row]:
    keys = list(q.values)
    keys += [k for k in n.values if k not in q.values]
    rows = [
        Row(k, estimate(q.values.get(k, [])), estimate(n.values.get(k, [])), families=families) for k in keys
    ]
    return judge([r for r in rows if not r.zero])


def linux_flavoured(sc: Scenario) -> tuple[Scenario, list[str]]:
    """The qoslab side of a cross-check of the linux transport flavour against ns-3: every TCP
    sender as Linux runs it (``tcp.flavour = "linux"``), its receivers delaying ACKs as the
    scenario's do (ns-3's are set from the scenario; the flavour's own default is Linux's
    delayed ACKs), and notes on what still differs from the ns-3 side. A scenario with finite
    transfers is refused: the flavour opens no connection where ns-3's TCP does a handshake,
    so their completion times would differ by a round trip."""
    finite = finite_flows(sc.resolved)
    if finite:
        raise CrosscheckRefused(
            f"the linux flavour opens no connection and ns-3's TCP does a handshake, so the finite "
            f"transfers' completion times ({', '.join(finite)}) would differ by a round trip; "
            "cross-check the linux flavour on long-lived flows"
        )
    tcp = [f["tcp"] for f in sc.resolved["flows"] if f["kind"] == "tcp"]
    if not tcp:
        return sc, ["qoslab side: the scenario has no TCP sender, so the transport flavour changes nothing"]
    delack = sorted({bool(t["delayed_ack"]) for t in tcp})
    if len(delack) > 1:
        raise CrosscheckRefused(
            "the linux flavour's cross-check sets one delayed-ACK setting for every receiver; "
            "this scenario's TCP flows differ in `tcp.delayed_ack`"
        )
    ours = sc.with_overrides(
        ['tcp.flavour="linux"', f"tcp.delayed_ack={'true' if delack == [True] else 'false'}"]
    )
    return ours, [
        "qoslab side: every TCP sender in the linux transport flavour (docs/models/tcp-linux.md), "
        f"its receivers {'delaying' if delack == [True] else 'not delaying'} ACKs as the scenario's "
        "(ns-3's run the scenario as written). Still different: the linux flavour opens no "
        "connection (ns-3's flows start a round trip later, with a handshake), starts at "
        "Linux's initial window of 10 segments and has Linux's RTO bounds (200 ms to 120 s); "
        "the measurement window should start after the start-up",
    ]


def _crosscheck_ns3(
    sc: Scenario, seeds: list[int], progress: Callable[[str], None] | None, tcp_flavour: str = "ns2"
) -> tuple[list[Row], list[str]]:
    reason = ns3.unsupported_reason(ns3.to_ns3_resolved(sc.resolved, seeds[0]))
    if reason:
        raise CrosscheckRefused(f"ns-3 cannot express this scenario: {reason}")
    ours, ours_note = linux_flavoured(sc) if tcp_flavour == "linux" else (sc, [])
    notes = [
        *(ours_note or ["qoslab side: the scenario as written"]),
        "ns-3 side: ns-3.37 (tools/ns3/qoslab_ns3.cc), settings in docs/validation/ns3.md",
        *_finite_note(sc),
    ]
    tcp = [f for f in sc.resolved["flows"] if f["kind"] == "tcp"]
    senders = schema.sender_kinds()
    if (
        tcp_flavour == "ns2"
        and ns3.SACK_WORKAROUND
        and any(not (f["tcp"].get("sack") or senders[f["tcp"]["variant"]]["x-sack"]) for f in tcp)
    ):
        notes.append(
            "ns-3's TCP runs with SACK (ns-3.37's recovery without SACK is defective: "
            "qoslab.ns3.mapping.SACK_WORKAROUND); qoslab's as the scenario says"
        )
    for variant in dict.fromkeys(f["tcp"]["variant"] for f in tcp):
        note = senders[variant]["x-exports"]["ns3"].get("note")
        if note:
            notes.append(f"TCP {variant}: {note}")
    q, n = Side(), Side()
    for s in seeds:
        if progress:
            progress(f"seed {s}: qoslab")
        _qoslab_metrics(ours, s, q, queue_delay=True)
        if progress:
            progress(f"seed {s}: ns-3")
        _ns3_metrics(sc, s, n)
    return _rows(q, n, FAMILIES_NS3), notes


def as_records(rows: list[Row], against: str = "ns2") -> list[dict[str, Any]]:
    """The rows as plain records; the reference simulator's columns are ``{against}_mean`` and
    ``{against}_ci``."""
    return [
        {
            "metric": r.metric,
            "family": r.family,
            "qoslab_mean": r.qoslab.mean,
            "qoslab_ci": r.qoslab.half_width,
            f"{against}_mean": r.ns2.mean,
            f"{against}_ci": r.ns2.half_width,
            "difference": r.rel_diff,
            "tolerance": r.tolerance,
            "welch_p": r.p_value,
            "verdict": r.verdict,
        }
        for r in rows
    ]


def _strict(v: Any) -> Any:
    """NaN (no value) as None, so that the document is strict JSON."""
    if isinstance(v, float) and v != v:
        return None
    if isinstance(v, dict):
        return {k: _strict(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_strict(x) for x in v]
    return v


def as_document(rows: list[Row], notes: list[str], **about: Any) -> dict[str, Any]:
    """The comparison as one JSON-ready document: ``about`` (scenario, seeds, flavour, against,
    …), the notes, every row with its verdict, the verdict per family and whether all agree."""
    vs = verdicts(rows)
    doc: dict[str, Any] = _strict(
        {
            **about,
            "version": _core.__version__,
            "notes": notes,
            "rows": as_records(rows, str(about.get("against", "ns2"))),
            "verdicts": [v.__dict__ for v in vs],
            "agree": all(v.verdict == "agree" for v in vs),
        }
    )
    return doc
