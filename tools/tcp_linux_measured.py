"""The figures of docs/models/tcp-linux.md's "Measured" section, simulated at the checkout's
core on the scenarios of ``scenarios/linux/`` (exact timing, as the files run), written as JSON
with the core that simulated them.

    .venv/bin/python tools/tcp_linux_measured.py --out docs/models/tcp-linux-measured.json

- BBR beside CUBIC (``bbr-vs-cubic.toml``) at 0.5, 1, 2 and 4 BDP (17, 33, 67, 133 packets),
  seeds 1-3: BBR's share, drops and timeouts per flow over the whole run, the bottleneck's mean
  queueing delay;
- one flow alone (``single.toml``), BBR and CUBIC at 1, 2.4 and 4 BDP (33, 80, 133 packets),
  seed 1: utilisation, mean queueing delay, drops;
- five CUBIC flows of 20-100 ms (``five-cubic.toml``), seeds 1-3, the linux flavour and the ns2
  flavour's CUBIC with SACK: Jain's index and the shares;
- DCTCP (``scenarios/ns3/dumbbell-5-step-dctcp.toml``), seeds 1-3: the share of the bottleneck's
  arrivals it marks, the linux flavour with delayed ACKs off and on, and the ns2 flavour.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import qoslab
from qoslab.scenario import load_scenario
from qoslab.verdicts.currency import core_fingerprint

ROOT = Path(__file__).resolve().parent.parent
LINUX = ROOT / "scenarios" / "linux"


def _run(path: Path, sets: list[str], seed: int) -> Any:
    return qoslab.run(load_scenario(path).with_overrides(sets), seed)


def _bottleneck(r: Any) -> dict[str, Any]:
    lk = r.links
    row = lk[(lk["link_name"] == "bottleneck") & (lk["direction"] == "ab")].iloc[0]
    return {k: row[k] for k in lk.columns}


def _flows(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A run's summary's flows by name."""
    return {f["name"]: f for f in summary["flows"]}


def _queue_delay_ms(r: Any) -> float:
    """The bottleneck's mean queueing delay inside the measurement window."""
    b = _bottleneck(r)
    return float(b["window_wait_ns"]) / float(b["window_admitted"]) / 1e6


def bbr_beside_cubic() -> list[dict[str, Any]]:
    out = []
    for bdp, pkts in ((0.5, 17), (1, 33), (2, 67), (4, 133)):
        for seed in (1, 2, 3):
            r = _run(LINUX / "bbr-vs-cubic.toml", [f"link.bottleneck.queue_ab.limit={pkts}pkts"], seed)
            fl = _flows(r.summary())
            thr = {k: float(v["throughput_bps"]) for k, v in fl.items()}
            out.append(
                {
                    "bdp": bdp,
                    "limit_pkts": pkts,
                    "seed": seed,
                    "bbr_share": thr["bbr"] / sum(thr.values()),
                    "drops": {k: int(v["dropped_packets"]) for k, v in fl.items()},
                    "timeouts": {k: int(v["timeouts"]) for k, v in fl.items()},
                    "queue_delay_ms": _queue_delay_ms(r),
                }
            )
    return out


def alone() -> list[dict[str, Any]]:
    out = []
    for variant in ("bbr", "cubic"):
        for bdp, pkts in ((1, 33), (2.4, 80), (4, 133)):
            sets = [f"flow.single.tcp.variant={variant}", f"link.bottleneck.queue_ab.limit={pkts}pkts"]
            r = _run(LINUX / "single.toml", sets, 1)
            s = r.summary()
            out.append(
                {
                    "variant": variant,
                    "bdp": bdp,
                    "utilization": float(s["utilization"]),
                    "queue_delay_ms": _queue_delay_ms(r),
                    "drops": int(_flows(s)["single"]["dropped_packets"]),
                }
            )
    return out


def five_cubic() -> list[dict[str, Any]]:
    out = []
    for flavour, sets in (
        ("linux", []),
        ("ns2", ["tcp.flavour=ns2", "tcp.variant=cubic", "tcp.sack=true", "tcp.window=1000"]),
    ):
        for seed in (1, 2, 3):
            r = _run(LINUX / "five-cubic.toml", sets, seed)
            s = r.summary()
            fl = _flows(s)
            thr = {k: float(v["throughput_bps"]) for k, v in fl.items()}
            total = sum(thr.values())
            out.append(
                {
                    "flavour": flavour,
                    "seed": seed,
                    "jain": float(s["fairness_index"]),
                    "shares": {k: v / total for k, v in thr.items()},
                    "timeouts": sum(int(v["timeouts"]) for v in fl.values()),
                }
            )
    return out


def dctcp() -> list[dict[str, Any]]:
    path = ROOT / "scenarios" / "ns3" / "dumbbell-5-step-dctcp.toml"
    out = []
    for arm, sets in (
        ("linux, delayed ACKs off", ["tcp.flavour=linux", "tcp.delayed_ack=false"]),
        ("linux, delayed ACKs on", ["tcp.flavour=linux", "tcp.delayed_ack=true"]),
        ("ns2", ["tcp.flavour=ns2"]),
    ):
        for seed in (1, 2, 3):
            b = _bottleneck(_run(path, sets, seed))
            out.append({"arm": arm, "seed": seed, "marked_share": float(b["marks"]) / float(b["arrivals"])})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    doc = {
        "fingerprint": {"core": core_fingerprint(ROOT)},
        "command": "python tools/tcp_linux_measured.py",
        "bbr_beside_cubic": bbr_beside_cubic(),
        "alone": alone(),
        "five_cubic": five_cubic(),
        "dctcp": dctcp(),
    }
    a.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
