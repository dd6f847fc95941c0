"""``qoslab bench``: speed and peak memory on fixed workloads, with ns-2 run in the same
invocation when it is installed. Each qoslab measurement runs in a fresh process so that its
peak resident memory is its own."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from qoslab import _core
from qoslab.scenario import Scenario, load_scenario, to_ns2_resolved


def dumbbell_200(duration: str = "60s") -> dict[str, Any]:
    """200 TCP flows, RTTs spread evenly over 20-200 ms, 100 Mbps RED bottleneck, 1 Gbps access."""
    n = 200
    rtts_ms = [20 + 180 * i / (n - 1) for i in range(n)]
    return {
        "name": "bench-200flows-100Mbps",
        "duration": duration,
        "tcp": {"packet_size": "1000B", "window": 1000},
        "measurement": {"interval": "1s", "bottleneck": "bottleneck"},
        "node": [{"name": "s{i}", "count": n}, {"name": "r1"}, {"name": "r2"}, {"name": "d{i}", "count": n}],
        "link": [
            {
                "name": "access{i}",
                "count": n,
                "a": "s{i}",
                "b": "r1",
                "bandwidth": "1Gbps",
                "delay": [f"{r / 2 - 6:.4f}ms" for r in rtts_ms],
                "queue": {"type": "droptail", "limit": "1000pkts"},
            },
            {
                "name": "bottleneck",
                "a": "r1",
                "b": "r2",
                "bandwidth": "100Mbps",
                "delay": "5ms",
                "queue_ab": {
                    "type": "red",
                    "limit": "1500pkts",
                    "min_th": 250,
                    "max_th": 750,
                    "max_p": 0.1,
                    "w_q": 0.0002,
                    "mean_pkt_size": "1000B",
                },
                "queue_ba": {"type": "droptail", "limit": "1500pkts"},
            },
            {
                "name": "exit{i}",
                "count": n,
                "a": "r2",
                "b": "d{i}",
                "bandwidth": "1Gbps",
                "delay": "1ms",
                "queue": {"type": "droptail", "limit": "1000pkts"},
            },
        ],
        "flow": [{"name": "ftp{i}", "count": n, "src": "s{i}", "dst": "d{i}", "start": "uniform(0s, 1s)"}],
    }


def workloads() -> dict[str, Scenario]:
    from importlib.resources import files

    del files
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    return {
        "red-5flows-1Mbps-100s": load_scenario(root / "scenarios" / "fdd-red-s1.toml"),
        "red-200flows-100Mbps-60s": Scenario.from_table(dumbbell_200()),
    }


def _worker(name: str, duration_scale: float) -> None:
    sc = workloads()[name]
    if duration_scale != 1.0:
        d = sc.resolved["duration_ns"] * duration_scale / 1e9
        sc = sc.with_overrides([f'duration="{d:g}s"', f'measurement.end="{d:g}s"', 'measurement.start="0s"'])
    t0 = time.perf_counter()
    raw = _core.simulate_resolved(sc.core, 1, [], None, 1)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "wall_s": wall,
                "hops": int(raw["packet_hops"]),
                "events": int(raw["events"]),
                "sim_s": sc.resolved["duration_ns"] / 1e9,
                "peak_rss_mb": peak_kb / 1024,
            }
        )
    )


def _measure(name: str, scale: float = 1.0) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "qoslab.bench", "--worker", name, str(scale)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(p.stdout)


def main(only: list[str] | None = None, use_ns2: bool = True) -> list[dict[str, Any]]:
    from rich.console import Console
    from rich.table import Table

    from qoslab import ns2

    con = Console()
    have_ns2 = ns2.ns2_available() if use_ns2 else None
    if use_ns2 and not have_ns2:
        con.print("ns-2 (`ns`) not found: printing qoslab figures only (install with `make ns2`).")
    rows = []
    for name, sc in workloads().items():
        if only and name not in only:
            continue
        con.print(f"[bold]{name}[/bold]: running qoslab …")
        q = _measure(name)
        half = _measure(name, 0.5)
        row: dict[str, Any] = {"workload": name, "qoslab": q, "qoslab_half_duration": half}
        if have_ns2:
            con.print(f"[bold]{name}[/bold]: running ns-2 …")
            o = ns2.run_ns2(to_ns2_resolved(sc.resolved, 1), 1)
            row["ns2"] = {"wall_s": o["wall_time_s"], "hops": o["packet_hops"]}
        rows.append(row)
    t = Table(title=f"qoslab {_core.__version__} benchmark (1 core, seed 1)")
    for c in (
        "workload",
        "wall s",
        "M hops/s",
        "sim s / wall s",
        "peak RSS MB (T/2 → T)",
        "ns-2 wall s",
        "ns-2 M hops/s",
        "speed-up vs ns-2",
    ):
        t.add_column(c, justify="right")
    for r in rows:
        q, h = r["qoslab"], r["qoslab_half_duration"]
        n = r.get("ns2")
        t.add_row(
            r["workload"],
            f"{q['wall_s']:.3f}",
            f"{q['hops'] / q['wall_s'] / 1e6:.1f}",
            f"{q['sim_s'] / q['wall_s']:.0f}",
            f"{h['peak_rss_mb']:.0f} → {q['peak_rss_mb']:.0f}",
            f"{n['wall_s']:.2f}" if n else "-",
            f"{n['hops'] / n['wall_s'] / 1e6:.2f}" if n else "-",
            f"{n['wall_s'] / q['wall_s']:.0f}×" if n else "-",
        )
    con.print(t)
    con.print("ns-2 wall time is the whole `ns` process (setup included); qoslab's is the simulation call.")
    return rows


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    else:
        main()
