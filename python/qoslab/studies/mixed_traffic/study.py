"""``mixed-traffic``: the AF mechanisms of the five studies and the RED/RIO baselines under a
realistic mix (issue 19): heavy-tailed web transfers arriving as a Poisson process, four long
TCP flows with contracts, and EF voice (``scenarios/mixed-traffic.toml``).

What it measures, per mechanism, on paired seeds (every mechanism sees the same arrivals and
sizes for a given seed: the arrival process has its own random stream):

- flow completion time (FCT) and slowdown of the web transfers by size bin (< 100 KB, 100 KB –
  10 MB, ≥ 10 MB): mean, median and 99th percentile;
- the long flows' throughput against their 1.5 Mbps contracts (the mean ratio and the worst);
- the voice class's one-way delay (median, 99th, 99.9th percentile) and RFC 3550 jitter;
- the bottleneck's utilisation.

No paper ran this mix, so there is no published number to meet: the report compares each
mechanism with RIO (the AF baseline) by paired t-tests over seeds.

Left out, and why: TWAM/DWRED (``twam-dwred``) assigns contracted rates to named flows and
estimates the windows of a fixed set of them, and the probe marker (``probe-marker``) meters
the segments of each named flow; a web connection has no name and lives for a few round trips,
so neither has a reading here that the papers support.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from qoslab.report.csvsafe import write_csv
from qoslab.report.figures import Line, Panel, bar_group, panels
from qoslab.reproduction.base import Experiment, Options, Sweep, Window, register, scenarios_dir
from qoslab.reproduction.runner import Context
from qoslab.scenario import Scenario
from qoslab.stats import estimate, paired
from qoslab.summary_keys import SIZE_BINS

if TYPE_CHECKING:
    from qoslab.runs.simulate import Result

CONTRACT_BPS = 1.5e6
_Q = "link.bottleneck.queue_ab"
_CURVES = "in = { min_th = 60, max_th = 150, max_p = 0.02 }, out = { min_th = 20, max_th = 60, max_p = 0.1 }"

#: mechanism → (what it is, overrides of the bottleneck queue, extra TOML appended)
MECHANISMS: dict[str, tuple[str, list[str], str]] = {
    "droptail": ("tail drop, 200 packets", [f'{_Q}={{ type = "droptail", limit = "200pkts" }}'], ""),
    "red": (
        "RED 20/60/0.1, w_q 0.002 (markings ignored)",
        [f'{_Q}={{ type = "red", limit = "200pkts", min_th = 20, max_th = 60, max_p = 0.1 }}'],
        "",
    ),
    "rio": ("RIO-C, IN 60/150/0.02, OUT 20/60/0.1 (the scenario file; baseline)", [], ""),
    "rio-plus-o": (
        "RI+O (Kim 1999): RIO-C plus an OUT curve 20/60/0.1 on avg_out",
        [
            f'{_Q}={{ type = "rio_plus_o", limit = "200pkts", {_CURVES}, '
            "avg_out = { min_th = 20, max_th = 60, max_p = 0.1 } }"
        ],
        "",
    ),
    "fdd-red": (
        "FDD-RED (Hashemi et al.) 20/60/0.1: per-flow penalty picks the victim",
        [f'{_Q}={{ type = "fdd_red", limit = "200pkts", min_th = 20, max_th = 60, max_p = 0.1 }}'],
        "",
    ),
    "ard": (
        "RIO-C with ARD (Hur et al.) at the edge router: adaptive re-marking and dropping of excess IN",
        [],
        '\n[[conditioner]]\nname = "ard"\nlink = "edge"\nmeter = { type = "ard", tpr_max = "10Mbps" }\n',
    ),
    "ef-priority": (
        "EF in a strict-priority queue ahead of RIO-C for the AF traffic (RFC 3246 / 2597)",
        [
            f'{_Q}={{ type = "multi", scheduler = "priority", queues = ['
            '{ name = "ef", dscp = ["EF"], queue = { type = "droptail", limit = "50pkts" } }, '
            '{ name = "af", default = true, queue = { type = "rio", mode = "coupled", limit = "200pkts", '
            f"w_q = 0.002, {_CURVES} }} }} ] }}"
        ],
        "",
    ),
}
BASELINE = "rio"
METRICS = ("qoslab.studies.mixed_traffic.study:run_metrics",)


def mix_scenario(
    mechanism: str,
    overrides: list[str],
    mechanisms: dict[str, tuple[str, list[str], str]] = MECHANISMS,
    name: str = "",
) -> Scenario:
    """The mixed-traffic scenario with ``mechanism``'s bottleneck (and edge) from
    ``mechanisms``, and ``overrides``; named ``name`` (default ``mixed-traffic-MECHANISM``)."""
    _, sets, extra = mechanisms[mechanism]
    path = scenarios_dir() / "mixed-traffic.toml"
    text = path.read_text() + extra
    name = name or f"mixed-traffic-{mechanism}"
    sc = Scenario(text.replace('name = "mixed-traffic"', f'name = "{name}"', 1), str(path))
    return sc.with_overrides([*sets, *overrides])


def comparison_rows(
    per_seed: Callable[[str, str], pd.Series],
    mechanisms: list[str],
    shown: tuple[tuple[str, str, float], ...],
    baseline: str,
) -> pd.DataFrame:
    """One row per shown metric: each mechanism's mean over seeds with its CI (``MECH``,
    ``MECH_mean``), and its paired difference from ``baseline`` (``MECH_vs_rio``, ``_p``)."""
    rows = []
    for metric, label, scale in shown:
        row: dict[str, Any] = {"metric": metric, "quantity": label}
        for m in mechanisms:
            e = estimate(per_seed(m, metric))
            row[m] = e.fmt(3, scale)
            row[f"{m}_mean"] = e.mean / scale
            if m != baseline:
                p = paired(per_seed(m, metric), per_seed(baseline, metric))
                row[f"{m}_vs_rio"] = p.fmt(3, scale)
                row[f"{m}_vs_rio_p"] = p.p
        rows.append(row)
    return pd.DataFrame(rows)


def mean_bars(
    per_seed: Callable[[str, str], pd.Series],
    mechanisms: list[str],
    series: list[tuple[str, str]],
    scale: float,
) -> list[Line]:
    """Bars of each mechanism's mean over seeds with its 95 % CI, one series per (metric,
    label)."""
    out = []
    for metric, label in series:
        means, errs = [], []
        for m in mechanisms:
            e = estimate(per_seed(m, metric))
            means.append(e.mean / scale)
            errs.append((e.ci_high - e.ci_low) / 2 / scale if np.isfinite(e.ci_high) else 0.0)
        out.append((label, means, errs))
    return bar_group(out, len(mechanisms))


def run_metrics(res: Result) -> dict[str, float]:
    """FCT and slowdown by size bin, the long flows' throughput against contract, voice delay and
    jitter."""
    out: dict[str, float] = {}
    nan = float("nan")
    ts = res.transfer_summary()  # summary.json's `transfers`: the statistics per size bin
    for label, _, _ in SIZE_BINS:
        b = ts.get("by_size", {}).get(label, {})
        out[f"transfers_{label}"] = float(b.get("finished", 0))
        for col in ("fct_s", "slowdown"):
            for stat in ("mean", "median", "p99"):
                out[f"{col}_{stat}_{label}"] = float(b.get(col, {}).get(stat, nan))
    out["unfinished_transfers"] = float(ts.get("all", {}).get("unfinished", 0))
    f = res.flows
    longs = f[f["name"].str.startswith("long")]["throughput_bps"].to_numpy(float)
    out["long_contract_ratio_mean"] = float((longs / CONTRACT_BPS).mean())
    out["long_contract_ratio_min"] = float((longs / CONTRACT_BPS).min())
    out["web_throughput_bps"] = float(f[f["kind"] == "arrivals"]["throughput_bps"].sum())
    c = res.classes
    ef = c[c["codepoint"] == "EF"]
    for k in ("p50", "p99", "p999", "mean"):
        out[f"voice_delay_{k}_s"] = float(ef[f"delay_{k}_s"].iloc[0]) if len(ef) else float("nan")
    voice = f[f["name"].str.startswith("voice")]
    out["voice_jitter_s"] = float(voice["jitter_s"].mean())
    return out


def plan(opts: Options) -> list[Sweep]:
    short = ["duration=20s", "measurement.start=5s", "measurement.end=20s"] if opts.quick else []
    points = [({"mechanism": m}, mix_scenario(m, short)) for m in MECHANISMS]
    return [
        Sweep(
            "mix",
            points,
            opts.seeds,
            "The mixed-traffic scenario ("
            + ("20 s, measured 5-20 s" if opts.quick else "60 s, measured 10-60 s")
            + ") with each mechanism at the bottleneck: "
            + "; ".join(f"{m}: {d}" for m, (d, _, _) in MECHANISMS.items())
            + ".",
            METRICS,
        )
    ]


_SHOWN = (
    ("fct_s_mean_<100KB", "FCT < 100 KB, mean (ms)", 1e-3),
    ("fct_s_p99_<100KB", "FCT < 100 KB, p99 (ms)", 1e-3),
    ("fct_s_mean_100KB-10MB", "FCT 100 KB-10 MB, mean (s)", 1.0),
    ("slowdown_mean_<100KB", "slowdown < 100 KB, mean", 1.0),
    ("slowdown_mean_100KB-10MB", "slowdown 100 KB-10 MB, mean", 1.0),
    ("long_contract_ratio_mean", "long flows: throughput / contract, mean", 1.0),
    ("long_contract_ratio_min", "long flows: throughput / contract, worst", 1.0),
    ("voice_delay_p50_s", "voice delay, median (ms)", 1e-3),
    ("voice_delay_p99_s", "voice delay, p99 (ms)", 1e-3),
    ("voice_delay_p999_s", "voice delay, p99.9 (ms)", 1e-3),
    ("voice_jitter_s", "voice jitter, RFC 3550 (ms)", 1e-3),
    ("utilization", "bottleneck utilisation", 1.0),
)


TYPICAL = "typical: mean (voice: median)"
TAIL = "tail: 99th percentile (contracts: worst flow)"


def analyse(ctx: Context) -> None:
    runs = ctx.runs("mix")

    def per_seed(mech: str, metric: str) -> pd.Series:
        r = runs[runs["mechanism"] == mech]
        return pd.Series(r[metric].to_numpy(float), index=r["seed"].to_numpy(int))

    # every run's metrics, for paired analyses of one's own (one row per mechanism and seed)
    cols = [c for c in runs.columns if c.startswith(("fct_s_", "slowdown_", "transfers_", "voice_", "long_"))]
    keys = ["mechanism", "seed", "scenario", "scenario_sha256", *[m for m, _, _ in _SHOWN], *cols]
    per_run = runs[list(dict.fromkeys(keys))]
    write_csv(per_run.sort_values(["mechanism", "seed"]), ctx.out / "mix-runs.csv")
    ctx.files.append(ctx.out / "mix-runs.csv")
    df = comparison_rows(per_seed, list(MECHANISMS), _SHOWN, BASELINE)
    df["seeds"] = ctx.provenance(["mix"]).split("seeds ")[-1]
    df["version"] = ctx.version
    prov = ctx.provenance(["mix"])
    ctx.table(
        "mix-summary",
        df,
        title="Web FCT, long-flow contracts and voice delay per mechanism",
        columns={"quantity": "quantity", **{m: m for m in MECHANISMS}},
        caption=f"Means over seeds with 95 % CIs (every run's metrics: `mix-runs.csv`). {prov}.",
    )
    ctx.table(
        "mix-paired",
        df,
        title="Each mechanism minus RIO, paired over seeds",
        columns={"quantity": "quantity", **{f"{m}_vs_rio": m for m in MECHANISMS if m != BASELINE}},
        caption=(
            "Mean per-seed difference from RIO-C and its 95 % CI (paired t over the same seeds: the "
            f"same arrivals, sizes and start times). {prov}."
        ),
    )
    mechs = list(MECHANISMS)

    def group(metrics: list[tuple[str, str]], scale: float) -> list[Line]:
        return mean_bars(per_seed, mechs, metrics, scale)

    fig = panels(
        [
            Panel(
                group([("fct_s_mean_<100KB", TYPICAL), ("fct_s_p99_<100KB", TAIL)], 1e-3),
                title="web transfers < 100 KB: completion time",
                xlabel="mechanism",
                ylabel="FCT (ms)",
                categories=mechs,
            ),
            Panel(
                group([("long_contract_ratio_mean", TYPICAL), ("long_contract_ratio_min", TAIL)], 1.0),
                title="long flows: throughput / 1.5 Mbps contract",
                xlabel="mechanism",
                ylabel="ratio",
                categories=mechs,
            ),
            Panel(
                group([("voice_delay_p50_s", TYPICAL), ("voice_delay_p99_s", TAIL)], 1e-3),
                title="EF voice: one-way delay",
                xlabel="mechanism",
                ylabel="delay (ms)",
                categories=mechs,
            ),
        ],
        title="Mixed traffic (Pareto web at 30 % + 4 contracted long flows + EF voice), 10 Mbps bottleneck",
        panel_size=(5.0, 3.6),
    )
    ctx.figure(
        "mix-overview",
        fig,
        title="FCT, contracts and voice delay per mechanism",
        sweeps=["mix"],
        caption="Bars: means over seeds with 95 % CIs.",
    )


register(
    Experiment(
        name="mixed-traffic",
        title="AF mechanisms and RED/RIO under a web mix with long flows and voice",
        paper="issue 19 (no paper ran this mix); mechanisms from `../shared/papers/`",
        summary=(
            "Poisson arrivals of heavy-tailed web transfers beside four contracted long TCP flows and "
            "EF voice over a 10 Mbps bottleneck: FCT and slowdown by size bin, long-flow throughput "
            "against contracts and voice delay percentiles for tail drop, RED, RIO, RI+O, FDD-RED, ARD "
            "and an EF priority queue, compared with RIO on paired seeds."
        ),
        plan=plan,
        analyse=analyse,
        seeds=10,
        quick_seeds=3,
        window=Window(
            False,
            "our own study (issue 22), no paper: 60 s measured from 10 s (quick: 20 s from 5 s)",
        ),
    )
)
