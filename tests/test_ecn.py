"""ECN end to end (RFC 3168 as ns-2's ecn_): RED marks ECN-capable packets instead of
dropping them early, the receiver echoes CE until CWR, the sender halves once per window and
retransmits nothing. Paired seeds against the same scenario without ECN, the mechanism
disabled at each end, and agreement with ns-2.35 on fdd-red-s1 with ECN on."""

from __future__ import annotations

import pytest

import qoslab
from conftest import SCENARIOS, require

ECN_QUEUE = "link.bottleneck.queue_ab.ecn=true"
SEEDS = (1, 2, 3)


def _run(overrides: list[str], seed: int) -> dict[str, float]:
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(overrides)
    r = qoslab.run(sc, seed=seed)
    bn = r.links[(r.links.link_name == "bottleneck") & (r.links.direction == "ab")].iloc[0]
    f = r.flows
    return {
        "drops": float(bn.early_drops + bn.forced_drops + bn.overflow_drops),
        "marks": float(f.ecn_marks.sum()),
        "responses": float(f.ecn_responses.sum()),
        "retransmits": float(f.retransmitted_packets.sum()),
        "timeouts": float(f.timeouts.sum()),
        "throughput": float(f.throughput_bps.sum()),
    }


def test_ecn_replaces_early_drops_by_marks_and_the_senders_respond() -> None:
    for seed in SEEDS:
        off = _run([], seed)
        on = _run(["tcp.ecn=true", ECN_QUEUE], seed)
        # RED's early drops become marks; what remains are drops above max_th / at the buffer.
        assert on["marks"] > 50, on
        assert on["drops"] < 0.7 * off["drops"], (on, off)
        # At most one response per window: never more responses than marks, and some.
        assert 0 < on["responses"] <= on["marks"], on
        # Marks cost no retransmission: fewer retransmissions than without ECN, same link use.
        assert on["retransmits"] < off["retransmits"], (on, off)
        assert on["throughput"] == pytest.approx(off["throughput"], rel=0.02)


@pytest.mark.parametrize("half", [["tcp.ecn=true"], [ECN_QUEUE]])
def test_ecn_at_one_end_only_changes_nothing(half: list[str]) -> None:
    # Not-ECT senders are dropped, not marked; an ECN sender behind a dropping RED sees no CE.
    for seed in SEEDS[:2]:
        off = _run([], seed)
        one = _run(half, seed)
        assert one["marks"] == 0 and one["responses"] == 0
        assert one["drops"] == off["drops"] and one["throughput"] == off["throughput"]


def test_ecn_agrees_with_ns2() -> None:
    require("ns")
    from qoslab.crosscheck import crosscheck, verdicts

    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(["tcp.ecn=true", ECN_QUEUE])
    rows, _ = crosscheck(sc, list(range(1, 11)))
    v = {x.family: x for x in verdicts(rows)}
    assert all(x.verdict == "agree" for x in v.values()), [
        (x.family, x.worst, x.disagree) for x in v.values()
    ]
    drops = next(r for r in rows if r.metric == "drops bottleneck:ab")
    # Before the ECN response existed: 775 drops in qoslab against ns-2's 122.
    assert abs(drops.rel_diff) < 0.15, (drops.qoslab, drops.ns2)
