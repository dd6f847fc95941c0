"""Why RTT × C / √n falls short at 100 flows in buffer-sizing's rule sweep: the flows' windows
measured (:mod:`qoslab.report.synchrony`) on the sweep's own scenarios (mean RTT, the full
reproduction's 100 s runs measured from 20 s), with the windows sampled every 10 ms.

    .venv/bin/python tools/buffer_sizing_synchrony.py    # 16, 64, 100, 400 flows; Reno, SACK; seeds 1-3
    .venv/bin/python tools/buffer_sizing_synchrony.py --n 100 --seeds 1

Prints one markdown row per sender and n: the link's utilisation, the aggregate window's
standard deviation over independent windows' (1: desynchronised), each window's coefficient
of variation against the sawtooth's 0.192, the aggregate's against the model's 0.192 / √n, and
the retransmission timeouts a flow took in the window (means over the seeds).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import qoslab
from qoslab.report.synchrony import window_synchrony
from qoslab.studies.buffer_sizing import study as bs
from qoslab.studies.buffer_sizing.topology import bdp_pkts, buffer_scenario, rtts_ms

DURATION_S, FROM_S, INTERVAL_S = 100.0, 20.0, 0.01


def measure(n: int, sender: str, seed: int) -> dict[str, float]:
    """One run of the rule sweep's point (n, mean RTT, sender) with 10 ms window samples."""
    rate = bs.rule_rate(n)
    rtt = bs.rtt_of("mean", rtts_ms(n, bs.RTT_LO, bs.RTT_HI))
    sc = buffer_scenario(
        n,
        max(1, round(bdp_pkts(rate, rtt) / math.sqrt(n))),
        rate_bps=rate,
        rtt_lo_ms=bs.RTT_LO,
        rtt_hi_ms=bs.RTT_HI,
        duration_s=DURATION_S,
        measure_from_s=FROM_S,
        tcp=bs.tcp_of(sender),
        interval_s=INTERVAL_S,
        name=f"buffer-sizing-synchrony-n{n}-{sender}",
    )
    r = qoslab.run(sc, seed)
    s = window_synchrony(r.series_flow, int(FROM_S * 1e9))
    summary = r.summary()
    return {
        "utilization": float(summary["utilization"]),
        "ratio": s.ratio,
        "per_flow_cv": s.per_flow_cv,
        "aggregate_cv": s.aggregate_cv,
        "model_aggregate_cv": s.model_aggregate_cv,
        "timeouts": float(np.mean([f["window"]["timeouts"] for f in summary["flows"]])),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[16, 64, 100, 400])
    ap.add_argument("--senders", nargs="+", default=["reno", "sack"], choices=["reno", "sack"])
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    if a.seeds < 1 or any(n < 2 for n in a.n):
        print("buffer_sizing_synchrony: --seeds must be at least 1 and every --n at least 2", file=sys.stderr)
        return 2
    print(
        "| sender | n | utilisation | σ(ΣW) / independent | window's CV (sawtooth 0.192) "
        "| ΣW's CV (model 0.192/√n) | timeouts a flow |"
    )
    print("|---|---|---|---|---|---|---|")
    for sender in a.senders:
        for n in a.n:
            rows = [measure(n, sender, seed) for seed in range(1, a.seeds + 1)]
            m = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
            print(
                f"| {sender} | {n} | {m['utilization']:.3f} | {m['ratio']:.2f} | {m['per_flow_cv']:.2f} "
                f"| {m['aggregate_cv']:.3f} ({m['model_aggregate_cv']:.3f}) | {m['timeouts']:.1f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
