"""How long BBR flows spend in `tcp_bbr.c`'s long-term ("policer", lt_bw) mode: the kernel's
flows through the emulation testbed against the model's, read the same way. Evidence for
docs/validation/linux.md (five BBR flows of mixed RTTs).

    sudo .venv/bin/python tools/bbr_lt_mode.py kernel --seeds 1-10 \\
        --out docs/validation/linux/bbr5-lt-kernel.json
    cargo build --release -p qoslab-core --example run   # with tools/bbr-lt-trace.patch applied
    .venv/bin/python tools/bbr_lt_mode.py model --run target/release/examples/run --seeds 1-10 \\
        --out docs/validation/linux/bbr5-lt-model.json
    .venv/bin/python tools/bbr_lt_mode.py compare docs/validation/linux/bbr5-lt-kernel.json \\
        docs/validation/linux/bbr5-lt-model.json

The kernel does not report the mode; it shows in what `ss -tin` prints of a BBR socket: while
`lt_use_bw` is set, `bbr_bw()` is the frozen long-term rate and `bbr_update_gains` holds the
pacing gain at 1 (PROBE_BW's cycle otherwise visits 1.25 and 0.75 within eight round trips,
and the windowed maximum moves within ten). An *episode* is a run of samples in PROBE_BW
(cwnd gain 2) at pacing gain 1 with the same `bw`, at least ``--min-s`` long (2.5 s; the mode
lasts 48 round trips, 3.6-7.5 s here). The model is read the same way from its own 100 ms
samples of the same quantities (the trace patch prints them, with the exact flag, which checks
the reading). The kernel is sampled every ~0.17 s (an `ss` per sending namespace in turn); losses are
counted over windows of one length on both sides, their ends interpolated (`lossy_windows`).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from qoslab.runs.simulate import jain_index  # noqa: E402

POINT = "bbr5-1bdp"
SS_BBR = re.compile(
    r"bbr:\(bw:([0-9.]+)([KMG]?)bps,mrtt:([0-9.]+),pacing_gain:([0-9.]+),cwnd_gain:([0-9.]+)\)"
)
#: `ss`'s cumulative retransmissions (`retrans:now/total`, absent while none) and segments
#: delivered (`tcpi_delivered`).
SS_RETRANS = re.compile(r"\bretrans:\d+/(\d+)")
SS_DELIVERED = re.compile(r"\bdelivered:(\d+)")
UNIT = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
#: A sample: (s, bw, pacing gain, cwnd gain, segments lost so far, segments delivered so far).
#: The kernel's losses are its retransmissions (`tcpi_total_retrans`; 98-99.5 % of its drops
#: here), the model's its `tp->lost` (its drops).
Sample = tuple[float, float, float, float, float, float]
#: `bbr_lt_loss_thresh`: an interval whose losses reach this share of what it delivers is lossy.
LT_LOSS_THRESH = 50 / 256
#: The pacing and window gains BBR sets per mode (tcp_bbr.c: bbr_high_gain 2885/1000,
#: bbr_drain_gain its inverse, bbr_cwnd_gain 2, ProbeRTT 1), as `ss` prints them.
HIGH_GAIN = 2.88672


def seeds_of(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def parse_ss(line: str) -> tuple[float, float, float, float, float] | None:
    """(bw b/s, pacing gain, cwnd gain, retransmissions so far, segments delivered so far)
    from the line `ss -tin` prints under a BBR socket; None for any other line."""
    b = SS_BBR.search(line)
    if not b:
        return None
    rtx, dlv = SS_RETRANS.search(line), SS_DELIVERED.search(line)
    return (
        float(b.group(1)) * UNIT[b.group(2)],
        float(b.group(4)),
        float(b.group(5)),
        float(rtx.group(1)) if rtx else 0.0,
        float(dlv.group(1)) if dlv else 0.0,
    )


def nearest(values: Sequence[float], x: float) -> int:
    """The index of the value nearest ``x``."""
    return min(range(len(values)), key=lambda i: abs(values[i] - x))


def _at(samples: list[Sample], t: float, k: int) -> float:
    """Cumulative counter ``k`` of the samples at time ``t``, interpolated linearly."""
    for x, y in zip(samples, samples[1:], strict=False):
        if x[0] <= t <= y[0]:
            w = (t - x[0]) / (y[0] - x[0]) if y[0] > x[0] else 0.0
            return x[k] + w * (y[k] - x[k])
    raise ValueError(f"t {t} outside the samples")


def lossy_windows(samples: list[Sample], window_s: float, start_s: float) -> tuple[int, int]:
    """(windows, lossy ones): the flow's consecutive windows of ``window_s`` from ``start_s``
    after its first sample to its last (the cumulative counts interpolated at their ends, so
    that both sides' windows have one length whatever their sampling), and those whose losses
    reach :data:`LT_LOSS_THRESH` of what they deliver (`bbr_lt_bw_interval_done`'s test)."""
    if len(samples) < 2:
        return 0, 0
    n = lossy = 0
    t = samples[0][0] + start_s
    while t + window_s <= samples[-1][0] + 1e-9:
        lost = _at(samples, t + window_s, 4) - _at(samples, t, 4)
        dlv = _at(samples, t + window_s, 5) - _at(samples, t, 5)
        if lost + dlv > 0:
            n += 1
            lossy += lost >= LT_LOSS_THRESH * dlv
        t += window_s
    return n, lossy


def episodes(samples: Sequence[Sequence[float]], min_s: float) -> list[list[float]]:
    """(start s after the flow's first sample, length s, bw) of each run of samples (t, bw,
    pacing gain, cwnd gain, ...) at pacing gain 1 and cwnd gain 2 with one `bw`, at least
    ``min_s`` long."""
    out: list[list[float]] = []
    i = 0
    while i < len(samples):
        t, bw, pg, cg = samples[i][:4]
        j = i
        if pg == 1.0 and cg == 2.0:
            while j + 1 < len(samples) and tuple(samples[j + 1][1:4]) == (bw, 1.0, 2.0):
                j += 1
            if samples[j][0] - t >= min_s:
                out.append([round(t - samples[0][0], 2), round(samples[j][0] - t, 2), bw])
        i = j + 1
    return out


def kernel(seeds: list[int]) -> list[dict[str, Any]]:
    from qoslab import emulation as emulate
    from qoslab.emulation import validation as vl

    p = next(q for q in vl.GRID if q.name == POINT)
    sc = vl.scenario(p)
    runs = []
    for seed in seeds:
        rows: dict[int, list[Sample]] = collections.defaultdict(list)
        stop = threading.Event()

        def sample(rows: dict[int, list[Sample]] = rows, stop: threading.Event = stop) -> None:
            t0 = time.monotonic()
            while not stop.is_set():
                listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
                for ns in (ln.split()[0] for ln in listed.splitlines() if ln.strip()):
                    m = re.search(r"-(\d+)-h(\d+)$", ns)  # the sending hosts h0..h4 (vl.scenario)
                    if not m:
                        continue
                    ss = subprocess.run(
                        ["ip", "netns", "exec", ns, "ss", "-tinH"], capture_output=True, text=True
                    )
                    for ln in ss.stdout.splitlines():
                        got = parse_ss(ln)
                        if got:
                            rows[int(m.group(2))].append((time.monotonic() - t0, *got))
                stop.wait(0.1)

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        try:
            res = emulate.run(sc, seed)
        finally:
            stop.set()
            th.join()
        late = res.lateness()
        thr = [float(x) for x in res.flows["throughput_bps"]]
        runs.append(
            {
                "seed": seed,
                "lateness_max_us": float(late["max_us"].max()),
                "lateness_p99_us": float(late["p99_us"].max()),
                "throughput_bps": thr,
                "samples": {str(k): v for k, v in sorted(rows.items())},
            }
        )
        print(f"kernel seed {seed}: shares {[round(x / sum(thr), 3) for x in thr]}", file=sys.stderr)
    return runs


def model(run: str, seeds: list[int]) -> list[dict[str, Any]]:
    """The trace build's `TS` rows (flow id, s, mode, lt flag, cycle index, bw) as `ss` would
    print the gains, per flow; the flow's index is found from its base RTT (20, 40, ... ms)."""
    from qoslab.emulation import validation as vl

    p = next(q for q in vl.GRID if q.name == POINT)
    sc = vl.scenario(p, "linux").with_overrides(vl.sim_overrides("linux", vl.TESTBED_JITTER_US))
    toml = Path(tempfile.mkdtemp()) / f"{POINT}.toml"
    toml.write_text(sc.text)
    runs = []
    for seed in seeds:
        pr = subprocess.run(
            [run, str(toml), str(seed)], capture_output=True, text=True, env={**os.environ, "BBR5_TS": "1"}
        )
        thr = [float(m[1]) for m in re.finditer(r"bbr\d\s+(\d+) bps", pr.stdout)]
        by: dict[str, list[Sample]] = collections.defaultdict(list)
        exact: dict[str, float] = collections.defaultdict(float)
        base: dict[str, float] = {}
        for ln in pr.stderr.splitlines():
            if not ln.startswith("TS "):
                continue
            f = ln.split()
            kv = dict(zip(f[3::2], f[4::2], strict=False))
            mode, lt, cyc = kv["mode"], int(kv["lt"]), int(kv["cyc"])
            gains = {
                "Startup": (HIGH_GAIN, HIGH_GAIN),
                "Drain": (round(1 / HIGH_GAIN, 5), HIGH_GAIN),
                "ProbeRtt": (1.0, 1.0),
            }
            pg, cg = gains.get(mode, (1.0 if lt else {0: 1.25, 1: 0.75}.get(cyc, 1.0), 2.0))
            by[f[1]].append((float(f[2]), float(kv["bw_pps"]), pg, cg, float(kv["lost"]), float(kv["deliv"])))
            exact[f[1]] += 0.1 * lt
            base[f[1]] = min(base.get(f[1], 1e9), float(kv["minrtt_ms"]))
        # a flow's index: the point's RTT nearest its smallest sample (20.85 ms for the 20 ms flow)
        idx = {k: nearest(p.rtts_ms, base[k]) for k in by}
        if sorted(idx.values()) != list(range(len(p.rtts_ms))):
            raise SystemExit(f"seed {seed}: flows not told apart by their base RTTs: {base}")
        runs.append(
            {
                "seed": seed,
                "throughput_bps": thr,
                "samples": {str(idx[k]): v for k, v in sorted(by.items(), key=lambda kv: idx[kv[0]])},
                "exact_lt_s": {str(idx[k]): round(v, 1) for k, v in exact.items()},
            }
        )
    return runs


#: The loss windows: half a second (about four round trips of the 100 ms flow with its queue,
#: the span of a short lt interval), from 5 s (past the start-up's losses).
WINDOW_S, START_S = 0.5, 5.0


def lossy_share(flows: list[dict[str, Any]]) -> float:
    n = sum(f["windows"] for f in flows)
    return round(sum(f["lossy_windows"] for f in flows) / n, 3) if n else float("nan")


def summary(runs: list[dict[str, Any]], min_s: float) -> dict[str, Any]:
    flows = []
    for r in runs:
        tot = sum(r["throughput_bps"])
        for k, s in r["samples"].items():
            eps = episodes(s, min_s)
            windows, lossy = lossy_windows(s, WINDOW_S, START_S)
            flows.append(
                {
                    "seed": r["seed"],
                    "flow": int(k),
                    "share": r["throughput_bps"][int(k)] / tot,
                    "samples": len(s),
                    "episodes": eps,
                    "lt_s": round(sum(e[1] for e in eps), 2),
                    "windows": windows,
                    "lossy_windows": lossy,
                    **({"exact_lt_s": r["exact_lt_s"][k]} if "exact_lt_s" in r else {}),
                }
            )
    n = len(flows)
    starving = [f for f in flows if f["share"] < 0.1]
    rest = [f for f in flows if f["share"] >= 0.1]

    def mean(xs: list[float]) -> float:
        return round(sum(xs) / len(xs), 2) if xs else float("nan")

    per_run: list[dict[str, Any]] = []
    for r in runs:
        thr = r["throughput_bps"]
        per_run.append(
            {
                "seed": r["seed"],
                "jain": round(jain_index(thr), 3),
                **{k: round(r[k]) for k in ("lateness_max_us", "lateness_p99_us") if k in r},
            }
        )
    return {
        "flow_runs": n,
        "episodes_per_flow": mean([len(f["episodes"]) for f in flows]),
        "lt_s_per_flow": mean([f["lt_s"] for f in flows]),
        "flow_runs_with_an_episode": round(sum(1 for f in flows if f["episodes"]) / n, 2),
        "lt_s_by_flow": [mean([f["lt_s"] for f in flows if f["flow"] == i]) for i in range(5)],
        "starving_flow_runs": round(len(starving) / n, 2),
        "lt_s_starving": mean([f["lt_s"] for f in starving]),
        "lt_s_rest": mean([f["lt_s"] for f in rest]),
        "lossy_window_share": lossy_share(flows),
        "lossy_window_share_starving": lossy_share(starving),
        "lossy_window_share_rest": lossy_share(rest),
        **(
            {"exact_lt_s_per_flow": mean([f["exact_lt_s"] for f in flows])}
            if "exact_lt_s" in flows[0]
            else {}
        ),
        "runs": per_run,
        "flows": flows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kernel")
    m = sub.add_parser("model")
    m.add_argument("--run", required=True, help="the trace build's examples/run")
    for sp in (k, m):
        sp.add_argument("--seeds", default="1-10")
        sp.add_argument("--min-s", type=float, default=2.5)
        sp.add_argument("--out", required=True)
        sp.add_argument("--raw", help="also write every run's samples here (JSON)")
    r = sub.add_parser("summarise", help="summarise a --raw file again")
    r.add_argument("raw")
    r.add_argument("--side", choices=["kernel", "model"], required=True)
    r.add_argument("--min-s", type=float, default=2.5)
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "compare":
        for f in a.files:
            d = json.loads(Path(f).read_text())
            s = {k: v for k, v in d["summary"].items() if k not in ("flows", "runs")}
            print(f"{f}: {json.dumps(s)}")
        return
    if a.cmd == "summarise":
        side, runs = a.side, json.loads(Path(a.raw).read_text())
    else:
        side = a.cmd
        runs = kernel(seeds_of(a.seeds)) if side == "kernel" else model(a.run, seeds_of(a.seeds))
        if a.raw:
            Path(a.raw).write_text(json.dumps(runs) + "\n")
    doc = {"point": POINT, "side": side, "min_s": a.min_s, "summary": summary(runs, a.min_s)}
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({k: v for k, v in doc["summary"].items() if k not in ("flows", "runs")}))


if __name__ == "__main__":
    main()
