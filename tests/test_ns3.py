"""The ns-3 back end (qoslab.ns3, tools/ns3/qoslab_ns3.cc) and `qoslab crosscheck --against ns3`.

The exporter's mapping is tested on hand-written resolved dicts (always run, including the AQM
kinds the core is gaining: codel, fq_codel, pie, step); the runs need ns-3.37's headers and
libraries (`make ns3`) and are skipped with the reason otherwise.
"""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import QOSLAB, ROOT, SCENARIOS
from qoslab import ns3
from qoslab.crosscheck import (
    FAMILIES_NS3,
    CrosscheckRefused,
    Row,
    crosscheck,
    judge,
    linux_flavoured,
    verdicts,
)
from qoslab.ns3.export import BBR_FIRST_STREAM
from qoslab.ns3.mapping import Ns3Refusal, queue_disc, tcp_socket
from qoslab.runs.simulate import run
from qoslab.scenario import Scenario, load_scenario
from qoslab.stats import estimate

NS3_MISSING = ns3.ns3_missing()
needs_ns3 = pytest.mark.skipif(NS3_MISSING is not None, reason=f"ns-3 unavailable: {NS3_MISSING}")

LINK = {"name": "bn", "a": "r1", "b": "r2", "bandwidth_bps": 10e6, "delay_s": 0.01}


def _queue(kind: str, **kw: Any) -> dict[str, Any]:
    q: dict[str, Any] = {
        "type": kind,
        "limit_pkts": 100,
        "limit_bytes": None,
        "ecn": False,
        "byte_mode": False,
        "mean_pkt_size_bytes": 1500,
    }
    q.update(kw)
    return q


def _attrs(d: dict[str, Any]) -> dict[str, str]:
    return dict(d["attributes"])


# ---- queues ---------------------------------------------------------------------------------


def test_droptail_limits_leave_one_packet_to_the_device_queue() -> None:
    d = queue_disc("q", _queue("droptail"), LINK, 1500)
    assert d["type_id"] == "ns3::FifoQueueDisc" and _attrs(d) == {"MaxSize": "99p"}
    d = queue_disc("q", _queue("droptail", limit_pkts=None, limit_bytes=30000), LINK, 1500)
    assert _attrs(d)["MaxSize"] == "28500B"
    assert _attrs(queue_disc("q", _queue("droptail", limit_pkts=None), LINK, 1500))["MaxSize"] == "10000000p"
    with pytest.raises(Ns3Refusal, match="^link x: a limit below 2 packets"):
        queue_disc("link x", _queue("droptail", limit_pkts=1), LINK, 1500)


def test_red_sets_floyd_s_parameters_explicitly() -> None:
    q = _queue("red", min_th=15.0, max_th=45.0, max_p=0.1, w_q=0.002, gentle=True, wait=True, ecn=True)
    a = _attrs(queue_disc("q", q, LINK, 1500))
    assert a["MinTh"] == "14.0" and a["MaxTh"] == "44.0"  # one packet waits in the device
    assert a["LInterm"] == "10.0" and a["QW"] == "0.002"
    assert a["Gentle"] == "true" and a["Wait"] == "true" and a["UseEcn"] == "true"
    assert a["UseHardDrop"] == "true" and a["ARED"] == "false" and a["NLRED"] == "false"
    assert a["LinkBandwidth"] == "10000000bps" and a["MeanPktSize"] == "1500"
    # byte limit: thresholds in bytes, and byte mode must match the limit's unit
    qb = dict(q, limit_pkts=None, limit_bytes=150000, byte_mode=True)
    ab = _attrs(queue_disc("q", qb, LINK, 1500))
    assert ab["MaxSize"] == "148500B" and ab["MinTh"] == str(14.0 * 1500)
    with pytest.raises(Ns3Refusal, match="byte_mode must match"):
        queue_disc("q", dict(q, byte_mode=True), LINK, 1500)


def test_new_aqm_kinds_map_to_ns3_queue_discs() -> None:
    codel = _queue("codel", target_ns=5_000_000, interval_ns=100_000_000, ecn=True)
    d = queue_disc("q", codel, LINK, 1500)
    a = _attrs(d)
    assert d["type_id"] == "ns3::CoDelQueueDisc"
    assert a["Target"] == "5000000ns" and a["Interval"] == "100000000ns" and a["UseEcn"] == "true"
    # RFC 8289's `bytes() <= MAXPACKET` with ns-3's `GetNBytes() < MinBytes`
    assert a["MinBytes"] == "1501" and a["MaxSize"] == "99p"
    assert d["early_drop_reasons"] == ["Target exceeded drop"]

    fq = NEW_KINDS["fq_codel"]
    d = queue_disc("q", fq, LINK, 1500)
    a = _attrs(d)
    assert d["type_id"] == "ns3::FqCoDelQueueDisc" and d["quantum"] == 1514
    assert a["Flows"] == "1024" and a["DropBatchSize"] == "64" and a["Perturbation"] == "0"
    assert a["UseEcn"] == "false" and a["EnableSetAssociativeHash"] == "false"

    pie = _queue(
        "pie",
        target_ns=15_000_000,
        t_update_ns=15_000_000,
        alpha=0.125,
        beta=1.25,
        max_burst_ns=150_000_000,
        mark_ecn_th=0.1,
        derandomize=True,
        mean_pkt_size_bytes=1000,
    )
    d = queue_disc("q", pie, LINK, 1500)
    a = _attrs(d)
    assert d["type_id"] == "ns3::PieQueueDisc"
    assert a["QueueDelayReference"] == "15000000ns" and a["Tupdate"] == "15000000ns"
    assert a["A"] == "0.125" and a["B"] == "1.25" and a["MaxBurstAllowance"] == "150000000ns"
    assert a["UseDerandomization"] == "true" and a["UseDequeueRateEstimator"] == "false"

    step = _queue("step", threshold_pkts=20)
    d = queue_disc("q", step, LINK, 1500)
    # marks ECN-capable arrivals while more than K wait (K - 1 in the queue disc), drops nothing
    # early (a packet that is not ECN-capable only at the limit)
    assert d["type_id"] == "ns3::QoslabStepQueueDisc" and d["early_drop_reasons"] == []
    assert _attrs(d) == {"MaxSize": "99p", "Threshold": "19p"}
    sb = _queue("step", limit_pkts=None, limit_bytes=150000, threshold_bytes=30000.0, ecn=True)
    assert _attrs(queue_disc("q", sb, LINK, 1500)) == {"MaxSize": "148500B", "Threshold": "28500B"}
    with pytest.raises(Ns3Refusal, match="threshold in bytes needs a byte limit"):
        queue_disc("q", _queue("step", threshold_bytes=30000.0, ecn=True), LINK, 1500)


def test_fq_codel_s_hash_salt_is_drawn_per_run() -> None:
    """As qoslab's (the link's random stream) and Linux's (at qdisc creation): a fixed salt
    hashed the same flows to the same queues in every seed."""
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-fq_codel.toml")

    def salt(seed: int) -> str:
        doc = ns3.program_input(ns3.to_ns3_resolved(sc.resolved, seed), seed)
        bn = next(lk for lk in doc["links"] if lk["name"] == "bottleneck")
        return _attrs(bn["queue_ab"])["Perturbation"]

    assert salt(1) == salt(1) != salt(2)
    doc = ns3.program_input(ns3.to_ns3_resolved(sc.resolved, 1), 1)
    assert ["ns3::CoDelQueueDisc::MinBytes", "1501"] in doc["defaults"]  # FQ-CoDel's flow queues


@pytest.mark.parametrize("kind", ["rio", "wred", "multi", "ared", "something_new"])
def test_queues_ns3_lacks_are_refused_in_one_line(kind: str) -> None:
    with pytest.raises(Ns3Refusal) as e:
        queue_disc("link 'bn' queue_ab", _queue(kind), LINK, 1500)
    msg = str(e.value)
    assert msg.startswith("link 'bn' queue_ab: ") and "\n" not in msg


def test_each_kind_says_itself_whether_ns3_has_it() -> None:
    """The export asks the kind (its `NS3` in the core, the schema's `x-ns3`): every queue disc a
    kind names is configured by the mapping, every other kind is refused with its own reason,
    and the mapping names no queue kind."""
    from qoslab import schema
    from qoslab.ns3 import mapping

    kinds = schema.queue_kinds()
    named = {o["x-ns3"]["queue_disc"] for o in kinds.values() if "queue_disc" in o["x-ns3"]}
    assert named == set(mapping._QUEUE_DISCS)
    assert kinds["rio"]["x-ns3"] == {"refused": "RIO (multi-precedence RED) has no ns-3 queue disc"}
    assert kinds["rio_plus_o"]["x-ns3"]["refused"].startswith("queue type `rio_plus_o` has no ns-3")
    source = Path(mapping.__file__).read_text()
    assert not [k for k in kinds if f'"{k}"' in source or f"'{k}'" in source]


# ---- TCP ------------------------------------------------------------------------------------


def _flow(**tcp: Any) -> dict[str, Any]:
    t = {
        "variant": "newreno",
        "ack_size_bytes": 40,
        "window_pkts": 64,
        "initial_window_pkts": 2,
        "min_rto_s": 0.2,
        "max_rto_s": 60.0,
        "initial_rto_s": 3.0,
        "tick_s": 0.01,
        "delayed_ack": False,
        "delack_interval_s": 0.1,
        "max_burst": 0,
        "syn": True,
        "ecn": False,
    }
    t.update(tcp)
    return {"name": "f", "kind": "tcp", "packet_size_bytes": 1000, "stop_s": None, "tcp": t}


def test_tcp_settings_are_explicit() -> None:
    s = tcp_socket("flow 'f'", _flow())
    a = dict(s["socket"])
    assert s["congestion"] == "ns3::QoslabNewReno" and s["recovery"] == "ns3::TcpClassicRecovery"
    assert s["restart_rto_on_fast_retransmit"] is True
    # ns-3.37's departures from RFC 6298, RFC 5681 and Linux, corrected by the program's socket
    assert s["karn_backoff"] is s["loss_exit_increase"] is s["stop_idle_rto_timer"] is True
    assert s["raw_rtt_sample"] is s["linux_rate_estimator"] is True
    assert a["SegmentSize"] == "960" and a["InitialCwnd"] == "2"
    assert a["RcvBufSize"] == a["SndBufSize"] == a["InitialSlowStartThreshold"] == str(64 * 960)
    assert a["DelAckCount"] == "1" and a["Timestamp"] == "false" and a["UseEcn"] == "Off"
    assert a["MinRto"] == "200000000ns" and a["ClockGranularity"] == "10000000ns"
    assert a["LimitedTransmit"] == "true" and a["WindowScaling"] == "false" and a["ReTxThreshold"] == "3"
    assert dict(tcp_socket("f", _flow(dupack_threshold=5))["socket"])["ReTxThreshold"] == "5"
    assert a["Sack"] == ("true" if ns3.SACK_WORKAROUND else "false")
    assert dict(tcp_socket("f", _flow(), sack_workaround=False)["socket"])["Sack"] == "false"
    assert dict(tcp_socket("f", _flow(sack=True), sack_workaround=False)["socket"])["Sack"] == "true"
    d = dict(tcp_socket("f", _flow(delayed_ack=True, ecn=True))["socket"])
    assert d["DelAckCount"] == "2" and d["DelAckTimeout"] == "100000000ns" and d["UseEcn"] == "On"
    defaults = dict(s["defaults"])
    assert defaults["ns3::RttEstimator::InitialEstimation"] == "3000000000ns"
    assert defaults["ns3::TcpSocketState::EnablePacing"] == "false"


def test_tcp_variants() -> None:
    assert tcp_socket("f", _flow(variant="reno"))["congestion"] == "ns3::QoslabNewReno"
    sack = tcp_socket("f", _flow(variant="sack"), sack_workaround=False)
    assert sack["congestion"] == "ns3::QoslabNewReno" and dict(sack["socket"])["Sack"] == "true"
    cubic = tcp_socket("f", _flow(variant="cubic"))
    assert cubic["congestion"] == "ns3::QoslabCubic"  # TcpCubic with RFC 9438's Reno-friendly region
    assert dict(cubic["defaults"])["ns3::TcpCubic::Beta"] == "0.7"
    assert dict(cubic["defaults"])["ns3::TcpCubic::HyStart"] == "true"
    dctcp = tcp_socket("f", _flow(variant="dctcp"))
    assert dctcp["congestion"] == "ns3::QoslabDctcp" and dict(dctcp["socket"])["UseEcn"] == "On"
    bbr = tcp_socket("f", _flow(variant="bbr", pacing=True))
    assert bbr["congestion"] == "ns3::TcpBbr" and bbr["pacing"] is True
    assert (
        bbr["rtt_estimator"] == cubic["rtt_estimator"] == dctcp["rtt_estimator"] == "ns3::QoslabRttPerRound"
    )
    with pytest.raises(Ns3Refusal, match="BBR without pacing"):
        tcp_socket("f", _flow(variant="bbr"))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"variant": "vegas"}, "TCP variant 'vegas' is not supported"),
        ({"syn": False}, "syn = false"),
        ({"ack_size_bytes": 52}, "ack_size 52 B"),
        ({"max_burst": 4}, "max_burst"),
        ({"max_rto_s": 10.0}, "max_rto must be 60 s"),
        (
            {"variant": "cubic", "linux_cc": {"beta": 512}},
            "tcp.cc.cubic sets the linux flavour's kernel module",
        ),
    ],
)
def test_tcp_refusals(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(Ns3Refusal, match=reason) as e:
        tcp_socket("flow 'f'", _flow(**change))
    assert str(e.value).startswith("flow 'f': ")
    stopped = dict(_flow(), stop_s=5.0)
    with pytest.raises(Ns3Refusal, match="with `stop`"):
        tcp_socket("flow 'f'", stopped)


# ---- whole scenarios ------------------------------------------------------------------------


def test_program_input_of_a_scenario() -> None:
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-red.toml")
    r = ns3.to_ns3_resolved(sc.resolved, 7)
    doc = ns3.program_input(r, 7)
    assert doc["rng_seed"] == ns3.RNG_SEED and doc["rng_run"] == 7
    assert len({f["port"] for f in doc["flows"]}) == len(doc["flows"]) == 5
    assert all(lk["device_queue"] == "1p" for lk in doc["links"])
    bn = next(lk for lk in doc["links"] if lk["name"] == "bottleneck")
    assert bn["queue_ab"]["type_id"] == "ns3::RedQueueDisc" and bn["data_rate"] == "10000000bps"
    assert doc["window"] == {"start_s": 10.0, "end_s": 60.0}
    assert ["ns3::TcpL4Protocol::RttEstimatorType", "ns3::QoslabRttPerRound"] in doc["defaults"]
    # start times: qoslab's distribution, drawn per seed
    assert all(0.0 <= f["start_s"] <= 1.0 for f in doc["flows"])
    assert ns3.program_input(ns3.to_ns3_resolved(sc.resolved, 7), 7) == doc


@pytest.mark.parametrize(
    ("name", "type_id", "congestion"),
    [
        ("codel", "ns3::CoDelQueueDisc", "ns3::QoslabNewReno"),
        ("fq_codel", "ns3::FqCoDelQueueDisc", "ns3::QoslabNewReno"),
        ("pie", "ns3::PieQueueDisc", "ns3::QoslabNewReno"),
        ("step-dctcp", "ns3::QoslabStepQueueDisc", "ns3::QoslabDctcp"),
        ("cubic", "ns3::FifoQueueDisc", "ns3::QoslabCubic"),
        ("bbr", "ns3::FifoQueueDisc", "ns3::TcpBbr"),
    ],
)
def test_the_core_s_new_kinds_export(name: str, type_id: str, congestion: str) -> None:
    """The core's own resolved dicts of the new queue kinds and congestion controls export."""
    sc = load_scenario(SCENARIOS / "ns3" / f"dumbbell-5-{name}.toml")
    doc = ns3.program_input(ns3.to_ns3_resolved(sc.resolved, 1), 1)
    bn = next(lk for lk in doc["links"] if lk["name"] == "bottleneck")
    assert bn["queue_ab"]["type_id"] == type_id
    assert {f["tcp"]["congestion"] for f in doc["flows"]} == {congestion}


def test_bbr_flows_draw_their_own_probe_bw_phases() -> None:
    """TcpBbr's random stream is 4 for every flow unless set: every flow of a run would draw the
    same ProbeBW phases (qoslab draws one per flow)."""
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-bbr.toml")
    doc = ns3.program_input(ns3.to_ns3_resolved(sc.resolved, 1), 1)
    streams = [dict(f["tcp"]["defaults"])["ns3::TcpBbr::Stream"] for f in doc["flows"]]
    assert len(set(streams)) == 5 and all(int(x) >= BBR_FIRST_STREAM for x in streams)


@pytest.mark.parametrize("variant", ["cubic", "bbr", "dctcp"])
def test_mixed_with_reno_scenarios_export_each_flow_s_congestion_control(variant: str) -> None:
    sc = load_scenario(SCENARIOS / "ns3" / f"dumbbell-6-{variant}-reno.toml")
    doc = ns3.program_input(ns3.to_ns3_resolved(sc.resolved, 1), 1)
    cc = {f["name"]: f["tcp"]["congestion"] for f in doc["flows"]}
    assert {cc[f"reno{i}"] for i in range(3)} == {"ns3::QoslabNewReno"}
    assert {cc[f"{variant}{i}"] for i in range(3)} == {ns3.CONGESTION[variant]}


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("ard-rio-4flows.toml", r"^conditioner '.*': DiffServ traffic conditioners"),
        ("rio-plus-o-baseline.toml", r"^conditioner 'marker0': DiffServ traffic conditioners"),
    ],
)
def test_unsupported_scenarios_are_refused_in_one_line(scenario: str, reason: str) -> None:
    sc = load_scenario(SCENARIOS / scenario)
    msg = ns3.unsupported_reason(ns3.to_ns3_resolved(sc.resolved, 1))
    assert msg is not None and "\n" not in msg
    assert re.match(reason, msg), msg


@pytest.mark.parametrize("name", ["single", "bbr-vs-cubic"])
def test_a_linux_flavour_flow_is_refused_in_one_line_naming_it_and_its_flavour(name: str) -> None:
    """The ns-3 export translates the ns2 flavour's settings; a linux-flavour sender (Linux's
    initial window, delayed ACKs, no SYN) is refused for what it is, not for one of its keys."""
    sc = load_scenario(SCENARIOS / "linux" / f"{name}.toml")
    msg = ns3.unsupported_reason(ns3.to_ns3_resolved(sc.resolved, 1))
    first = sc.resolved["flows"][0]["name"]
    assert msg is not None and "\n" not in msg
    assert msg.startswith(
        f'flow {first!r}: its TCP sender is the linux flavour\'s (tcp.flavour = "linux")'
    ), msg
    own = sc.with_overrides(['tcp.flavour="ns2"', f'flow.{first}.tcp.flavour="linux"'])
    msg = ns3.unsupported_reason(ns3.to_ns3_resolved(own.resolved, 1))
    assert msg is not None and msg.startswith(f"flow {first!r}: its TCP sender is the linux flavour's"), msg


def test_arrivals_drawn_sizes_and_other_flow_kinds_are_refused() -> None:
    r = ns3.to_ns3_resolved(load_scenario(SCENARIOS / "finite-flows.toml").resolved, 1)
    assert ns3.unsupported_reason(r) is None
    with_arrivals = dict(r, arrivals=[{"name": "web"}])
    assert ns3.unsupported_reason(with_arrivals) == (
        "arrivals 'web': flow-arrival processes are not supported by the ns-3 export "
        "(declare the transfers as [[flow]] tables with `size`)"
    )
    f = dict(r["flows"][0], packet_size_dist="exponential")
    msg = ns3.unsupported_reason(dict(r, flows=[f]))
    assert msg is not None and msg.startswith(f"flow {f['name']!r}: packet sizes drawn")
    u = dict(r["flows"][0], kind="pareto", tcp=None, rate_bps=1e6)
    msg = ns3.unsupported_reason(dict(r, flows=[u]))
    assert msg is not None and "flow kind 'pareto' is not supported" in msg


def test_ns3_tolerances_are_issue_22_s() -> None:
    def row(metric: str, ours: list[float], theirs: list[float]) -> Row:
        return Row(metric, estimate(ours), estimate(theirs), families=FAMILIES_NS3)

    rows = judge(
        [
            row("throughput_kbps a", [108.0] * 3, [100.0] * 3),  # 8 %: inside 10 %
            row("jain index", [0.95] * 3, [0.975] * 3),  # 0.025: inside 0.03
            row("queue_delay_ms bn:ab", [86.0, 86.1, 85.9], [100.0, 100.1, 99.9]),  # -14 %
            row("queue_delay_ms bn:ba", [0.05] * 3, [0.0] * 3),  # under the 0.1 ms floor
        ]
    )
    assert [r.verdict for r in rows] == ["agree"] * 4
    bad = judge([row("queue_delay_ms bn:ab", [80.0, 80.1, 79.9], [100.0, 100.1, 99.9])])
    assert {v.family: v.verdict for v in verdicts(bad)} == {"queueing delay": "disagree"}


# ---- runs -----------------------------------------------------------------------------------

CBR = """
name = "cbr-overload"
duration = "6s"
[measurement]
start = "2s"
end = "6s"
bottleneck = "bn"
[[node]]
name = "a"
[[node]]
name = "b"
[[node]]
name = "c"
[[link]]
name = "acc"
a = "a"
b = "b"
bandwidth = "100Mbps"
delay = "1ms"
queue = { type = "droptail", limit = "1000pkts" }
[[link]]
name = "bn"
a = "b"
b = "c"
bandwidth = "10Mbps"
delay = "10ms"
queue = { type = "droptail", limit = "100pkts" }
[[flow]]
name = "u"
type = "cbr"
src = "a"
dst = "c"
rate = "20Mbps"
packet_size = "1500B"
start = "0s"
"""


@needs_ns3
def test_a_full_droptail_queue_holds_the_limit_in_both() -> None:
    """An overloaded DropTail of 100 packets: every admitted packet waits for about 100
    transmissions in both simulators (ns-3's wire carries 2 more bytes of PPP per packet)."""
    sc = Scenario.from_toml(CBR)
    r = run(sc, 1)
    q = r.links[(r.links.link_name == "bn") & (r.links.direction == "ab")].iloc[0]
    ours = q.window_wait_ns / q.window_admitted / 1e9
    o = ns3.run_ns3(ns3.to_ns3_resolved(sc.resolved, 1), 1)
    bn = next(lk for lk in o["links"] if lk["name"] == "bn" and lk["direction"] == "ab")
    assert ours == pytest.approx(100 * 1500 * 8 / 10e6, rel=0.01)
    assert bn["mean_queue_delay_s"] == pytest.approx(ours * 1502 / 1500, rel=0.01)
    assert o["flows"][0]["throughput_bps"] == pytest.approx(10e6 * 1500 / 1502, rel=0.005)
    assert bn["drops"] == bn["forced_drops"] > 0 and bn["early_drops"] == 0


NEW_KINDS = {
    "codel": _queue("codel", target_ns=5_000_000, interval_ns=100_000_000),
    "fq_codel": _queue(
        "fq_codel",
        target_ns=5_000_000,
        interval_ns=100_000_000,
        quantum_bytes=1514,
        flows=1024,
        drop_batch=64,
    ),
    "pie": _queue(
        "pie",
        target_ns=15_000_000,
        t_update_ns=15_000_000,
        alpha=0.125,
        beta=1.25,
        max_burst_ns=150_000_000,
        mark_ecn_th=0.1,
        derandomize=False,
    ),
    "step": _queue("step", threshold_pkts=20),
}


@needs_ns3
@pytest.mark.parametrize("kind", list(NEW_KINDS))
def test_new_aqm_kinds_run_in_ns3(kind: str) -> None:
    """Each new kind's queue disc accepts every attribute the mapping sets and acts: early drops
    (CoDel, FQ-CoDel, PIE) or marks (step, with DCTCP), the link full, the delay held near the
    target rather than at the 100-packet limit (120 ms)."""
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-red.toml").with_overrides(
        ["duration=20s", "measurement.end=20s"]
    )
    r = ns3.to_ns3_resolved(sc.resolved, 1)
    bn = next(lk for lk in r["links"] if lk["name"] == "bottleneck")
    bn["queue_ab"] = NEW_KINDS[kind]
    if kind == "step":
        for f in r["flows"]:
            f["tcp"]["variant"] = "dctcp"
    o = ns3.run_ns3(r, 1)
    q = next(lk for lk in o["links"] if lk["name"] == "bottleneck" and lk["direction"] == "ab")
    assert sum(f["throughput_bps"] for f in o["flows"]) > 0.95 * 10e6 * 1500 / 1502
    assert q["mean_queue_delay_s"] < 0.03, q
    if kind == "step":
        assert q["marks"] > 100 and q["drops"] == 0, q
    else:
        # forced drops: the start-up's slow-start overshoot, before PIE's controller reacts
        assert q["early_drops"] > 100 and q["early_drops"] > 2 * q["forced_drops"], q


@needs_ns3
def test_runs_are_deterministic_per_seed_and_differ_between_seeds(tmp_path: Any) -> None:
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-red.toml").with_overrides(
        ["duration=20s", "measurement.end=20s"]
    )
    r = ns3.to_ns3_resolved(sc.resolved, 3)
    a = ns3.run_ns3(r, 3, workdir=str(tmp_path / "a"))
    b = ns3.run_ns3(copy.deepcopy(r), 3, workdir=str(tmp_path / "b"))
    c = ns3.run_ns3(ns3.to_ns3_resolved(sc.resolved, 4), 4)
    strip = ("wall_time_s",)
    assert {k: v for k, v in a.items() if k not in strip} == {k: v for k, v in b.items() if k not in strip}
    assert a["flows"] != c["flows"]
    assert (tmp_path / "a" / "scenario.json").exists() and (tmp_path / "a" / "results.json").exists()


@needs_ns3
def test_crosscheck_dumbbell_5_red_agrees_against_ns3_short() -> None:
    """The suite's version of the agreement table (3 seeds of 30 s; the ten-seed table is
    test_ten_seed_agreement_against_ns3, slow)."""
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-red.toml").with_overrides(
        ["duration=30s", "measurement.end=30s"]
    )
    rows, notes = crosscheck(sc, [1, 2, 3], against="ns3")
    vs = {v.family: v for v in verdicts(rows)}
    assert set(vs) >= {"per-flow throughput", "Jain index", "queueing delay", "drops", "utilisation"}
    assert all(v.verdict == "agree" for v in vs.values()), [(v.family, v.worst) for v in vs.values()]
    delay = next(r for r in rows if r.metric == "queue_delay_ms bottleneck:ab")
    assert abs(delay.rel_diff) < 0.15 and not np.isnan(delay.ns2.mean)
    assert any("SACK" in n for n in notes) == ns3.SACK_WORKAROUND


def _short(name: str, seconds: int = 20) -> Scenario:
    return load_scenario(SCENARIOS / "ns3" / f"{name}.toml").with_overrides(
        [f"duration={seconds}s", f"measurement.end={seconds}s"]
    )


def _bottleneck(o: dict[str, Any]) -> dict[str, Any]:
    return next(lk for lk in o["links"] if lk["name"] == "bottleneck" and lk["direction"] == "ab")


@needs_ns3
def test_fq_codel_s_flow_queues_keep_one_packet_as_rfc_8289() -> None:
    """CoDel may not drop from a queue holding one MTU or less (RFC 8289 `bytes() <= MAXPACKET`):
    with ns-3's `< MinBytes` and MinBytes = MTU, FQ-CoDel's flow queues of a packet or two were
    dropped from, the link idled 1.5 % of the time and queued 15 % less than qoslab."""
    sc = _short("dumbbell-5-fq_codel")
    r = run(sc, 1)
    q = r.links[(r.links.link_name == "bottleneck") & (r.links.direction == "ab")].iloc[0]
    ours = q.window_wait_ns / q.window_admitted / 1e6
    o = ns3.run_ns3(ns3.to_ns3_resolved(sc.resolved, 1), 1)
    assert _bottleneck(o)["mean_queue_delay_s"] * 1e3 == pytest.approx(ours, rel=0.08)
    assert sum(f["throughput_bps"] for f in o["flows"]) > 0.995 * 10e6 * 1500 / 1502


@needs_ns3
def test_cubic_grows_in_the_reno_friendly_region(monkeypatch: pytest.MonkeyPatch) -> None:
    """QoslabCubic (RFC 9438 section 4.3) grows faster than ns-3.37's TcpCubic after a reduction
    at this BDP (about 25 packets a flow), so it overflows the buffer more often: about 65 %
    more fast retransmits over ten seeds (qoslab's count), here in 20 s of one seed."""
    r = ns3.to_ns3_resolved(_short("dumbbell-5-cubic").resolved, 1)
    friendly = ns3.run_ns3(r, 1)
    monkeypatch.setitem(ns3.mapping.CONGESTION, "cubic", "ns3::TcpCubic")
    plain = ns3.run_ns3(copy.deepcopy(r), 1)
    fr = [sum(f["fast_retransmits"] for f in o["flows"]) for o in (friendly, plain)]
    assert fr[0] > 1.3 * fr[1], fr


@needs_ns3
def test_bbr_keeps_its_delivery_rate_and_its_timer_after_a_timeout() -> None:
    """Seed 3 of dumbbell-5-bbr: with ns-3.37's delivery-rate estimator, smoothed-RTT RTprop and
    retransmission timer left running with nothing in flight, two of the five flows collapsed to
    50 kb/s and timed out every 280 ms (365 timeouts in 60 s); corrected, every flow keeps near
    its 2 Mb/s share."""
    o = ns3.run_ns3(ns3.to_ns3_resolved(_short("dumbbell-5-bbr").resolved, 3), 3)
    assert sum(f["timeouts"] for f in o["flows"]) < 30, [f["timeouts"] for f in o["flows"]]
    assert min(f["throughput_bps"] for f in o["flows"]) > 1e6, [f["throughput_bps"] for f in o["flows"]]


@needs_ns3
def test_dctcp_keeps_two_segments_and_step_drops_nothing_early() -> None:
    """DCTCP's reduction keeps two segments (Linux's dctcp_ssthresh; ns-3.37's TcpDctcp can
    leave half a segment and stall: seed 3, two of five flows at 0), and the step queue marks
    ECN-capable packets above K but drops NewReno's only at the limit (ns-3's RED would drop
    them at K)."""
    o = ns3.run_ns3(ns3.to_ns3_resolved(_short("dumbbell-5-step-dctcp").resolved, 3), 3)
    assert min(f["throughput_bps"] for f in o["flows"]) > 1e6
    mixed = ns3.run_ns3(ns3.to_ns3_resolved(_short("dumbbell-6-dctcp-reno").resolved, 1), 1)
    q = _bottleneck(mixed)
    assert q["marks"] > 100 and q["drops"] == q["forced_drops"] > 0 and q["early_drops"] == 0, q
    assert q["mean_queue_delay_s"] > 0.06  # NewReno fills the 100 packets, not K = 20


#: The agreement table of docs/validation/ns3.md, ten seeds each: scenario (scenarios/ns3/ or
#: scenarios/), overrides, and the metric families that disagree there (findings explained in
#: docs/validation/ns3.md; a change that makes one agree must update the document).
AGREEMENT: list[tuple[str, list[str], set[str]]] = [
    ("dumbbell-5-droptail", [], set()),
    ("dumbbell-5-red", [], set()),
    ("dumbbell-5-red", ["link[1].queue_ab.ecn=true", "tcp.ecn=true"], set()),
    ("dumbbell-5-droptail", ['tcp.variant="sack"'], set()),
    ("dumbbell-5-red", ['tcp.variant="sack"'], set()),
    ("dumbbell-5-codel", [], set()),
    ("dumbbell-5-pie", [], set()),
    ("dumbbell-5-fq_codel", [], set()),
    ("dumbbell-5-step-dctcp", [], set()),
    ("dumbbell-5-cubic", [], set()),
    # qoslab's (ns2-flavour) BBR holds its window through loss recovery and cannot repair a lost
    # retransmission without a timeout: since its send quanta (5cf9e91) the delay agrees (+7.2 %)
    # and throughput, Jain, drops (x10) and utilisation disagree (docs/validation/ns3.md)
    ("dumbbell-5-bbr", [], {"per-flow throughput", "Jain index", "drops", "utilisation"}),
    ("dumbbell-6-cubic-reno", [], set()),
    # and freezes its window through loss recovery (both qoslab findings, docs/validation/ns3.md)
    ("dumbbell-6-bbr-reno", [], {"per-flow throughput", "Jain index", "queueing delay", "drops"}),
    ("dumbbell-6-dctcp-reno", [], set()),
    ("dumbbell-50-droptail", [], set()),
    ("dumbbell-50-red", [], set()),
    ("dumbbell-50-codel", [], set()),
    ("dumbbell-50-fq_codel", [], set()),
    # windows under one packet a round trip: fairness follows how flows leave RTO backoff
    ("dumbbell-50-pie", [], {"Jain index"}),
    # one row of five exchangeable flows (ftp0, -11.2 %, p = 0.008); seeds 11-20 all agree
    ("fdd-red-s1", [], {"per-flow throughput"}),
    ("fdd-red-s3", [], set()),
    ("finite-flows", [], set()),
]


@pytest.mark.slow
@needs_ns3
@pytest.mark.parametrize(
    ("scenario", "overrides", "findings"), AGREEMENT, ids=[" ".join([a[0], *a[1]]) for a in AGREEMENT]
)
def test_ten_seed_agreement_against_ns3(scenario: str, overrides: list[str], findings: set[str]) -> None:
    path = SCENARIOS / "ns3" / f"{scenario}.toml"
    sc = load_scenario(path if path.exists() else SCENARIOS / f"{scenario}.toml")
    rows, _ = crosscheck(sc.with_overrides(overrides) if overrides else sc, list(range(1, 11)), against="ns3")
    disagree = {v.family for v in verdicts(rows) if v.verdict == "disagree"}
    assert disagree == findings, [(v.family, v.worst) for v in verdicts(rows)]


#: The linux transport flavour against ns-3 (docs/validation/ns3.md, "The linux transport flavour
#: against ns-3"): the NewReno rows as Linux's reno (with SACK), and the findings.
AGREEMENT_LINUX = [
    ("dumbbell-5-droptail", ['tcp.variant="sack"'], set()),
    ("dumbbell-5-red", ['tcp.variant="sack"'], set()),
    # five flows of one RTT lock into one phase pattern under CoDel: two flows slow in every
    # seed (Jain and the per-flow throughput; ns3.md)
    ("dumbbell-5-codel", ['tcp.variant="sack"'], {"per-flow throughput", "Jain index"}),
    ("dumbbell-5-pie", ['tcp.variant="sack"'], set()),
    ("dumbbell-5-fq_codel", ['tcp.variant="sack"'], set()),
    ("dumbbell-5-step-dctcp", [], set()),
    ("dumbbell-5-cubic", [], set()),
    # five BBR flows queue 48 % longer than ns-3's; the kernel's queue is longer still
    # (test_five_bbr_flows_queue_shorter_in_ns3_than_in_the_kernel_and_the_linux_flavour)
    ("dumbbell-5-bbr", [], {"queueing delay"}),
    # one CUBIC flow 12 % below ns-3's (Welch's p 0.007), the Reno flows keeping 0.363 of the
    # link against ns-3's 0.340 (ns3.md; seeds 11-20 disagree too)
    ("dumbbell-6-cubic-reno", ['tcp.variant="sack"'], {"per-flow throughput"}),
    # ns-3's Reno flows keep more beside its BBR (one segment at a time; ns3.md)
    ("dumbbell-6-bbr-reno", ['tcp.variant="sack"'], {"per-flow throughput"}),
    ("dumbbell-6-dctcp-reno", ['tcp.variant="sack"'], set()),
]


@pytest.mark.slow
@needs_ns3
@pytest.mark.parametrize(
    ("scenario", "overrides", "findings"),
    AGREEMENT_LINUX,
    ids=[" ".join([a[0], *a[1]]) for a in AGREEMENT_LINUX],
)
def test_ten_seed_agreement_of_the_linux_flavour_against_ns3(
    scenario: str, overrides: list[str], findings: set[str]
) -> None:
    sc = load_scenario(SCENARIOS / "ns3" / f"{scenario}.toml").with_overrides(overrides)
    rows, _ = crosscheck(sc, list(range(1, 11)), against="ns3", tcp_flavour="linux")
    disagree = {v.family for v in verdicts(rows) if v.verdict == "disagree"}
    assert disagree == findings, [(v.family, v.worst) for v in verdicts(rows)]


@needs_ns3
def test_cli_against_ns3_refuses_in_one_line_with_exit_2() -> None:
    p = subprocess.run(
        [QOSLAB, "crosscheck", str(SCENARIOS / "ard-rio-4flows.toml"), "--against", "ns3", "--seeds", "1"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "ns-3 cannot express this scenario: conditioner" in lines[0]


def test_cli_rejects_an_unknown_reference_simulator() -> None:
    p = subprocess.run(
        [QOSLAB, "crosscheck", str(SCENARIOS / "fdd-red-s1.toml"), "--against", "ns4"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1 and "--against must be 'ns2' or 'ns3'" in p.stderr


def test_the_linux_flavour_side_keeps_the_scenario_s_receivers_and_refuses_finite_transfers() -> None:
    """``crosscheck --against ns3 --tcp-flavour linux``: qoslab's senders in the linux flavour,
    its receivers delaying ACKs as the scenario's (not the flavour's own default, Linux's
    delayed ACKs), so both sides ACK alike; finite transfers are refused in one line (the
    flavour opens no connection, ns-3's TCP does a handshake), and so is the flavour against
    ns-2."""
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-step-dctcp.toml")
    ours, notes = linux_flavoured(sc)
    tcp = [f["tcp"] for f in ours.resolved["flows"]]
    assert {t["flavour"] for t in tcp} == {"linux"} and {t["delayed_ack"] for t in tcp} == {False}
    assert any("linux transport flavour" in n and "not delaying" in n for n in notes)
    default = sc.with_overrides(['tcp.flavour="linux"']).resolved["flows"][0]["tcp"]
    assert default["delayed_ack"], "without the override the flavour would delay ACKs"
    with pytest.raises(CrosscheckRefused, match="handshake.*completion times"):
        linux_flavoured(load_scenario(SCENARIOS / "finite-flows.toml"))
    with pytest.raises(ValueError, match="--tcp-flavour linux compares with ns-3"):
        crosscheck(sc, [1], against="ns2", tcp_flavour="linux")


@needs_ns3
def test_five_bbr_flows_queue_shorter_in_ns3_than_in_the_kernel_and_the_linux_flavour() -> None:
    """The kernel-validation grid's five BBR flows of one RTT (ns-3's dumbbell-5-bbr bottleneck,
    with the grid's SACK and delayed ACKs; docs/validation/linux.md): over the whole run, as the
    link daemon measured the kernel's runs, ns-3.37's standing queue is more than 15 % short of
    the kernel's (committed runs: 109 ms), the linux flavour's within 15 % of it (seeds 1-5).
    So where the two simulators disagree on this queue (ns3.md), ns-3 is the one off Linux."""
    import json

    from qoslab.emulation import validation as vl

    p = {q.name: q for q in vl.GRID}["bbr5-30ms-4bdp"]
    kernel = json.loads((ROOT / "docs" / "validation" / "linux" / "kernel.json").read_text())
    kq = float(np.mean([r["qdelay_ms"] for r in kernel["points"][p.name]["runs"] if r["kept"]]))
    sc = vl.scenario(p).with_overrides(
        ["tcp.delayed_ack=true", 'tcp.delack_interval="40ms"', 'measurement.start="0s"']
    )
    rows, _ = crosscheck(sc, [1, 2, 3, 4, 5], against="ns3", tcp_flavour="linux")
    q = next(r for r in rows if r.metric == "queue_delay_ms bottleneck:ab")
    assert q.ns2.mean < 0.85 * kq, (q.ns2.mean, kq)
    assert abs(q.qoslab.mean / kq - 1) < 0.15, (q.qoslab.mean, kq)


@needs_ns3
def test_three_bbr_beside_three_reno_flows_ns3_gives_reno_more_than_the_kernel() -> None:
    """The grid's three BBR and three Reno flows through ns-3's dumbbell-6-bbr-reno bottleneck,
    with the grid's SACK and delayed ACKs (docs/validation/linux.md): the kernel's Reno flows keep
    0.246 ± 0.041 of the link over ten runs; ns-3.37's keep more than the kernel's mean and two
    sd (0.356 over seeds 1-10: its BBR sends one segment at a time, where Linux's sends
    two-segment skbs), the linux flavour's less, within them (0.303 with this exact timing; 0.258
    with the testbed's noise, tests/test_validate_linux.py). Where ns-3 and the linux flavour
    disagree on this split (ns3.md), ns-3 is the further off Linux."""
    import json

    from qoslab.emulation import validation as vl

    p = {q.name: q for q in vl.GRID}["bbr3-reno3-30ms-4bdp"]
    kernel = json.loads((ROOT / "docs" / "validation" / "linux" / "kernel.json").read_text())
    kept = [r for r in kernel["points"][p.name]["runs"] if r["kept"]]
    reno = [sum(f["share"] for f in r["flows"][3:]) for r in kept]
    km, ksd = float(np.mean(reno)), float(np.std(reno, ddof=1))
    sc = vl.scenario(p).with_overrides(["tcp.delayed_ack=true", 'tcp.delack_interval="40ms"'])
    rows, _ = crosscheck(sc, list(range(1, 11)), against="ns3", tcp_flavour="linux")
    thr = {r.metric: r for r in rows if r.metric.startswith("throughput_kbps")}
    total = {side: sum(getattr(r, side).mean for r in thr.values()) for side in ("qoslab", "ns2")}
    share = {
        side: sum(getattr(r, side).mean for m, r in thr.items() if "reno" in m) / total[side]
        for side in total
    }
    assert abs(share["qoslab"] - km) < 2 * ksd < share["ns2"] - km, (share, km, ksd)


@needs_ns3
def test_five_bbr_flows_of_mixed_rtts_are_as_unfair_in_ns3_as_in_the_kernel() -> None:
    """The grid's five BBR flows of RTTs 20-100 ms (docs/validation/linux.md, 'Five BBR flows'):
    ns-3.37's BBR splits the link as unevenly as the kernel's ten runs do (Jain 0.733 over seeds
    1-10; the kernel's 0.735 +- 0.132; the linux flavour's 0.789 with exact timing, 0.813 with
    the testbed's timing noise): each within the kernel's 2 sd and below a fair split. It gives
    the 60 ms flow the most, where the kernel's winners are the 40 and 80 ms flows. (The rows' ``ns2`` field
    holds the reference simulator's side.)"""
    import json

    from qoslab.emulation import validation as vl
    from qoslab.emulation import validation_report as vr

    p = {q.name: q for q in vl.GRID}["bbr5-1bdp"]
    kernel = json.loads((ROOT / "docs" / "validation" / "linux" / "kernel.json").read_text())
    kj = [r["jain"] for r in kernel["points"][p.name]["runs"] if r["kept"]]
    km, ksd = float(np.mean(kj)), float(np.std(kj, ddof=1))
    sc = vl.scenario(p).with_overrides(["tcp.delayed_ack=true", 'tcp.delack_interval="40ms"'])
    rows, _ = crosscheck(sc, list(range(1, 11)), against="ns3", tcp_flavour="linux")
    jain = next(r for r in rows if r.metric == "jain index")
    for side in (jain.ns2, jain.qoslab):
        assert vr.holds(side.mean, km, ksd, vr.JAIN_TOL) and side.mean < 0.8, (jain, km, ksd)
    thr = {r.metric.split()[-1]: r.ns2.mean for r in rows if r.metric.startswith("throughput_kbps")}
    assert max(thr, key=thr.__getitem__) == "bbr2", thr  # the 60 ms flow


@needs_ns3
def test_linux_flavour_dctcp_agrees_with_ns3_short() -> None:
    """The linux flavour's DCTCP (``tcp_dctcp.c``: growth per acknowledged segment, one
    reduction per window) against ns-3's TcpDctcp, which follows Linux's; the host kernel has no
    ``tcp_dctcp`` to judge it against (docs/validation/linux.md). Three seeds of 20 s (the
    ten-seed rows are on docs/validation/ns3.md): every family agrees, marks within 15 %
    (+12.9 % over ten seeds of 60 s, every seed above ns-3's)."""
    rows, notes = crosscheck(_short("dumbbell-5-step-dctcp"), [1, 2, 3], against="ns3", tcp_flavour="linux")
    vs = {v.family: v for v in verdicts(rows)}
    assert set(vs) >= {"per-flow throughput", "Jain index", "queueing delay", "marks", "utilisation"}
    assert all(v.verdict == "agree" for v in vs.values()), [(v.family, v.worst) for v in vs.values()]
    marks = next(r for r in rows if r.metric == "ecn marks bottleneck:ab")
    assert abs(marks.rel_diff) < 0.15, marks.rel_diff
    assert not any("SACK" in n for n in notes), "the linux flavour always runs SACK"
