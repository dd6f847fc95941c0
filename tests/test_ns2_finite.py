"""Finite TCP transfers (`size`) in the ns-2 export and the cross-check
(docs/validation/ns2-finite-flows.md).

qoslab sends the SYN (segment 0, 40 B) and n = ceil(size / packet_size) data segments, and a
transfer completes when the last one is acknowledged. The export makes ns-2.35 do the same:
FTP `produce n` (curseq_ = n; the SYN adds one) instead of an unlimited `start`, and the time
of `Agent/TCP done` (TcpAgent::finish, on the first ACK with highest_ack_ >= curseq_ - 1).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

import qoslab
from conftest import SCENARIOS, require
from qoslab import ns2
from qoslab.crosscheck import crosscheck, verdicts
from qoslab.scenario import to_ns2_resolved

FINITE = SCENARIOS / "finite-flows.toml"
#: The finite flows of finite-flows.toml and their data segments (1500 B packets), by hand.
SEGMENTS = {
    "xfer15m": 10_000,
    "xfer1500k": 1_000,
    "xfer150k_a": 100,
    "xfer150k_b": 100,
    "xfer15k_a": 10,
    "xfer15k_b": 10,
}


def _flow_blocks(script: str) -> dict[str, str]:
    """Each flow's Tcl block (from its ``# flow i:`` comment to the next section), by name."""
    blocks = re.split(r"(?m)^(?=# flow \d+: |# ---- measurement schedule)", script)
    out = {}
    for b in blocks:
        m = re.match(r"# flow \d+: (\S+) ", b)
        if m:
            out[m.group(1)] = b
    return out


def _script(sc: qoslab.Scenario, seed: int = 1) -> str:
    return ns2.to_tcl(to_ns2_resolved(sc.resolved, seed), seed, "/tmp/qoslab-unused.json")


def _starts(sc: qoslab.Scenario) -> dict[str, float]:
    return {f["name"]: f["start_s"] for f in to_ns2_resolved(sc.resolved, 1)["flows"]}


# ---- (a) the exported script, no ns-2 needed ------------------------------------------------


def test_finite_flow_produces_exactly_its_segments() -> None:
    sc = qoslab.load_scenario(FINITE)
    blocks = _flow_blocks(_script(sc))
    assert set(blocks) == {*SEGMENTS, "bulk"}
    for name, n in SEGMENTS.items():
        b = blocks[name]
        produce = re.findall(r'\$ns at (\S+) "\$app produce (\d+)"', b)
        assert produce == [(repr(_starts(sc)[name]), str(n))], (name, b)
        assert '"$app start"' not in b and "send -1" not in b, name
        assert f"set qoslab_nseg({list(blocks).index(name)}) {n}" in b
    assert '"$app start"' in blocks["bulk"] and "produce" not in blocks["bulk"]


def test_segments_match_qoslab_transfers() -> None:
    """The exported count is the core's: the transfers table's `segments` (no ns-2 needed)."""
    sc = qoslab.load_scenario(FINITE).with_overrides(["duration=6s", "measurement.end=6s"])
    r = qoslab.run(sc, 1)
    got = dict(zip(r.transfers["flow_name"], (int(x) for x in r.transfers["segments"]), strict=True))
    assert got == SEGMENTS


def test_size_not_a_multiple_of_the_packet_size_rounds_up() -> None:
    sc = qoslab.load_scenario(FINITE).with_overrides(["flow.xfer15k_a.size=15001B", "flow.xfer15k_b.size=1B"])
    blocks = _flow_blocks(_script(sc))
    assert '"$app produce 11"' in blocks["xfer15k_a"]
    assert '"$app produce 1"' in blocks["xfer15k_b"]


def test_bulk_flows_tcl_is_unchanged() -> None:
    """Without `size` every flow is the unlimited FTP it always was, and the script has none of
    the finite-transfer machinery; with finite flows beside it, a bulk flow's block is the
    same text."""
    table = qoslab.load_scenario(FINITE).table()
    for f in table["flow"]:
        f.pop("size", None)
    bulk_only = _script(qoslab.Scenario.from_table(table))
    for word in ("produce", "qoslab_done", "instproc done", "qoslab_transfer_pairs", "qoslab_nseg"):
        assert word not in bulk_only, word
    assert bulk_only.count('"$app start"') == len(table["flow"])
    mixed = _script(qoslab.load_scenario(FINITE))
    assert _flow_blocks(mixed)["bulk"] == _flow_blocks(bulk_only)["bulk"]


def test_finite_flow_with_stop_is_refused() -> None:
    sc = qoslab.load_scenario(FINITE).with_overrides(["flow.xfer15k_a.stop=4.1s"])
    reason = ns2.unsupported_reason(to_ns2_resolved(sc.resolved, 1))
    assert reason is not None and "xfer15k_a" in reason and "`stop`" in reason


# ---- (b) one transfer on an idle path: the same FCT in both --------------------------------

IDLE = """
name = "idle-transfer"
duration = "10s"
[tcp]
variant = "newreno"
packet_size = "1000B"
window = 1000
[[node]]
name = "s"
[[node]]
name = "d"
[[link]]
name = "path"
a = "s"
b = "d"
bandwidth = "10Mbps"
delay = "20ms"
queue = { type = "droptail", limit = "1000pkts" }
[[flow]]
name = "t"
src = "s"
dst = "d"
size = "100KB"
start = "1s"
"""
#: One data packet's serialisation time on the idle path (1000 B at 10 Mbps).
SERIALISATION_S = 1000 * 8 / 10e6


def _both(overrides: list[str]) -> tuple[Any, dict[str, Any]]:
    sc = qoslab.Scenario(IDLE).with_overrides(overrides)
    r = qoslab.run(sc, 1)
    o = ns2.run_ns2(to_ns2_resolved(sc.resolved, 1), 1)
    (f,) = o["flows"]
    return r.transfers.iloc[0], f


@pytest.mark.ns2
@pytest.mark.parametrize(
    "overrides",
    [
        [],
        ["flow.t.size=1B"],
        ["flow.t.size=15KB"],
        ["flow.t.size=1500001B"],
        ["tcp.variant=reno", "tcp.initial_window=4"],
        ["tcp.packet_size=1500B", "flow.t.size=150KB", "tcp.max_burst=3"],
        # ns-2 sends segment 0 without its 40 header bytes when syn_ is false (tcp.cc output():
        # the header is added in the `else` of `seqno == 0`): 32 µs shorter at 10 Mbps
        ["tcp.syn=false"],
    ],
    ids=["100KB", "1B", "15KB", "1.5MB+1B", "reno-iw4", "1500B-maxburst", "no-syn"],
)
def test_idle_path_fct_agrees_within_a_serialisation_time(overrides: list[str]) -> None:
    require("ns")
    q, n = _both(overrides)
    segments = int(q["segments"])
    syn = "tcp.syn=false" not in overrides
    # delivered_packets is the sink's bytes over the packet size: without the SYN, ns-2's
    # segment 0 is 40 B short, so it counts one less
    assert n["segments"] == segments and n["delivered_packets"] == segments - (not syn)
    assert n["sent_packets"] == segments + syn and n["retransmitted_packets"] == 0
    assert math.isfinite(q["fct_s"]) and math.isfinite(n["fct_s"])
    assert abs(q["fct_s"] - n["fct_s"]) <= SERIALISATION_S, (q["fct_s"], n["fct_s"])


@pytest.mark.ns2
def test_idle_path_fct_with_delayed_acks() -> None:
    # Both acknowledge the SYN at once (ns-2's SYN_immediate_ack_, tcp-sink.cc DelAckSink::recv);
    # qoslab once delayed it, and every FCT was 100 ms (delack_interval) longer.
    require("ns")
    q, n = _both(["tcp.delayed_ack=true"])
    assert abs(q["fct_s"] - n["fct_s"]) <= SERIALISATION_S, (q["fct_s"], n["fct_s"])


@pytest.mark.ns2
def test_unfinished_transfer_is_nan_in_both() -> None:
    require("ns")
    q, n = _both(["flow.t.size=15MB", "duration=2s"])
    assert math.isnan(q["fct_s"]) and math.isnan(n["fct_s"]) and math.isnan(n["end_s"])
    assert 0 < n["delivered_packets"] < n["segments"] == int(q["segments"]) == 15_000


# ---- (c) the cross-check of finite-flows.toml --------------------------------------------


@pytest.mark.ns2
def test_crosscheck_of_finite_flows_agrees_on_fct() -> None:
    require("ns")
    sc = qoslab.load_scenario(FINITE)
    seeds = [1, 2, 3]
    rows, notes = crosscheck(sc, seeds)
    by = {r.metric: r for r in rows}
    for name in SEGMENTS:
        r = by[f"fct_s {name}"]
        assert r.qoslab.n == r.ns2.n == len(seeds), name  # finished in every seed, both sides
        # three seeds of one 1.5 MB transfer are 2.4 to 5 s: a row may be `noise`, never `disagree`
        assert r.verdict in ("agree", "noise"), (name, r.qoslab.mean, r.ns2.mean)
        assert f"throughput_kbps {name}" not in by  # replaced by the FCT
        assert f"unfinished {name}" not in by  # zero on both sides
    assert "throughput_kbps bulk" in by
    fam = {v.family: v for v in verdicts(rows)}
    assert fam["flow completion time"].verdict == "agree" and fam["flow completion time"].rows == 6
    assert any("finite transfers" in note for note in notes)
