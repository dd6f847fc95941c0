"""``buffer-sizing``: Appenzeller, Keslassy and McKeown, "Sizing Router Buffers" (SIGCOMM 2004):
n desynchronised long-lived TCP flows through a drop-tail bottleneck of rate C need a buffer of
RTT × C / √n, not RTT × C. The claims are declared in :mod:`.claims`; the dumbbell is
:mod:`.topology`; the figures :mod:`.figures`.

Three sweeps, every run n long-lived flows with round trips spread evenly over a range and
starts spread uniformly over the first 5 s:

- ``curve``: utilisation against the buffer (fractions of RTT × C) for several n: the figure of
  utilisation against buffer, and the minimum buffer for 98 / 99.5 / 99.9 % against n;
- ``rule``: the buffer RTT × C / √n itself at large n, with the RTT read as the mean or the
  longest of the spread;
- ``headline``: the abstract's two sentences, scaled (quick and full) and as stated (full);
- ``short``: Poisson arrivals of short transfers through a buffer no run fills, the line rate, the
  RTT and the load varied one at a time: the queue's 99th percentile (the buffer that overflows
  1 % of the time) against each.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import pandas as pd

from qoslab.reproduction.base import Experiment, Options, Sweep, Window, register
from qoslab.reproduction.runner import Context
from qoslab.runs.simulate import Result
from qoslab.stats import estimate, paired
from qoslab.studies.buffer_sizing import figures
from qoslab.studies.buffer_sizing.claims import (
    CURVE,
    HEADLINE,
    LEVELS,
    NAME,
    REDUCE,
    RULE_HOLDS,
    RULE_SWEEP,
    SCALES,
    SHORT,
    SHORT_LOAD_CLAIM,
    SHORT_NOT_RATE_RTT,
    TEN_MBIT,
    level_place,
    short_place,
)
from qoslab.studies.buffer_sizing.paper import (
    EXAMPLE_RTT_MS,
    REDUCE_AT,
    TENMBIT_AT,
)
from qoslab.studies.buffer_sizing.paper import (
    TEN_MBIT as TEN_MBIT_BITS,
)
from qoslab.studies.buffer_sizing.topology import (
    PACKET_BYTES,
    bdp_pkts,
    buffer_scenario,
    rtt_of,
    rtts_ms,
    short_flow_scenario,
)

#: the senders compared (ns-2's one-way agents, the paper's era): Reno and Reno with SACK; with
#: ``--tcp-flavour linux`` today's: the kernel's Reno (its SACK always on), CUBIC and BBR
SENDERS = ("reno", "sack")
LINUX_SENDERS = ("sack", "cubic", "bbr")


def senders(opts: Options) -> tuple[str, ...]:
    """The senders the curve and the rule compare under ``opts``' transport flavour."""
    return LINUX_SENDERS if opts.tcp_flavour == "linux" else SENDERS


def one_sender(opts: Options) -> str:
    """The sender of the headline and short-flow sweeps: SACK (ns-2), CUBIC (linux, the kernel's
    default)."""
    return "cubic" if opts.tcp_flavour == "linux" else "sack"


#: the curve's and the rule's RTT spread (ours: the paper's spread could not be read), ms
RTT_LO, RTT_HI = 60.0, 140.0
#: the headline sentences' spread: around the abstract's 250 ms example
HEAD_LO, HEAD_HI = 150.0, 350.0
CURVE_RATE = 100e6
#: the rule's link: 100 Mb/s, and from 400 flows on 250 kb/s per flow (the first headline
#: sentence's share), so the windows stay above a few packets at any n
RULE_RATE, RULE_PER_FLOW = 100e6, 250e3
#: buffers of the curve, as fractions of RTT × C (mean RTT)
FRACTIONS = (0.01, 0.02, 0.035, 0.06, 0.1, 0.17, 0.3, 0.5, 1.0)
CURVE_N = {True: (1, 16, 64, 256), False: (1, 4, 16, 64, 256)}
RULE_N = {True: (100, 400), False: (100, 400, 1000, 2000)}
#: the flows the slope of B_min is fitted over (the paper's regime: many flows)
SLOPE_FROM_N = 16
#: the scaled headline runs: the sentences' per-flow rate with this many flows
SCALED_N = 400


#: the short-flow sweep: transfers of this many packets (ours: the paper's lengths could not be
#: read; 20 packets stay in slow start), the base point, and the values each quantity takes
SHORT_PKTS = 20
SHORT_BASE = {"rate": 100e6, "rtt": 80.0, "load": 0.8}
SHORT_RATES = (25e6, 100e6, 400e6)
SHORT_RTTS = (20.0, 80.0, 320.0)
SHORT_LOADS = (0.5, 0.65, 0.8, 0.9)
SHORT_METRICS = "qoslab.studies.buffer_sizing.study:short_metrics"


def timing(quick: bool) -> tuple[float, float]:
    """(duration, start of the measured window) in s: ours (the paper's could not be read)."""
    return (40.0, 10.0) if quick else (100.0, 20.0)


def tcp_of(sender: str) -> dict[str, Any]:
    """The ns-2 one-way agent ``sender``, 1000-byte packets, no receiver-window limit and no
    SYN (ns-2's FTP agents start sending at once)."""
    return {"variant": sender, "packet_size": f"{PACKET_BYTES}B", "window": 100000, "syn": False}


def curve_point(p: dict[str, Any], quick: bool) -> Any:
    dur, start = timing(quick)
    bdp = bdp_pkts(CURVE_RATE, rtt_of("mean", rtts_ms(p["n"], RTT_LO, RTT_HI)))
    return buffer_scenario(
        p["n"],
        max(1, round(p["frac"] * bdp)),
        rate_bps=CURVE_RATE,
        rtt_lo_ms=RTT_LO,
        rtt_hi_ms=RTT_HI,
        duration_s=dur,
        measure_from_s=start,
        tcp=tcp_of(p["sender"]),
        name=f"buffer-sizing-curve-n{p['n']}-f{p['frac']}-{p['sender']}",
    )


def rule_rate(n: int) -> float:
    """The rule sweep's line rate for ``n`` flows (:data:`RULE_RATE`, :data:`RULE_PER_FLOW`)."""
    return max(RULE_RATE, n * RULE_PER_FLOW)


def rule_point(p: dict[str, Any], quick: bool) -> Any:
    dur, start = timing(quick)
    rtt = rtt_of(p["rtt"], rtts_ms(p["n"], RTT_LO, RTT_HI))
    rate = rule_rate(p["n"])
    return buffer_scenario(
        p["n"],
        max(1, round(bdp_pkts(rate, rtt) / math.sqrt(p["n"]))),
        rate_bps=rate,
        rtt_lo_ms=RTT_LO,
        rtt_hi_ms=RTT_HI,
        duration_s=dur,
        measure_from_s=start,
        tcp=tcp_of(p["sender"]),
        name=f"buffer-sizing-rule-n{p['n']}-{p['rtt']}-{p['sender']}",
    )


def headline_buffer(sentence: str, arm: str, rate: float, n: int, scale: str) -> int:
    """The buffer in packets of ``sentence``'s ``arm``: "bdp" is RTT × C at the mean RTT;
    "reduced" is the sentence's: 1 % of it as stated (99 % less), RTT × C / √n scaled; for the
    10 Mbit sentence, 10 Mbit as stated and the same fraction of RTT × C / √n scaled."""
    bdp = bdp_pkts(rate, rtt_of("mean", rtts_ms(n, HEAD_LO, HEAD_HI)))
    if arm == "bdp":
        return round(bdp)
    if sentence == "reduce":
        return max(1, round(bdp * (0.01 if scale == "as stated" else 1.0 / math.sqrt(n))))
    rate0, n0 = TENMBIT_AT
    ten = TEN_MBIT_BITS / 8 / PACKET_BYTES
    if scale == "as stated":
        return round(ten)
    frac = ten / (bdp_pkts(rate0, EXAMPLE_RTT_MS) / math.sqrt(n0))
    return max(1, round(frac * bdp / math.sqrt(n)))


def headline_points(quick: bool, sender: str = "sack") -> list[dict[str, Any]]:
    pts = []
    for scale in ("scaled",) if quick else ("scaled", "as stated"):
        for sentence, (rate0, n0) in (("reduce", REDUCE_AT), ("10mbit", TENMBIT_AT)):
            n = SCALED_N if scale == "scaled" else n0
            rate = rate0 * n / n0
            for arm in ("bdp", "reduced") if sentence == "reduce" else ("reduced",):
                pts.append(
                    {"sentence": sentence, "scale": scale, "arm": arm, "n": n, "rate": rate, "sender": sender}
                )
    return pts


def headline_point(p: dict[str, Any], quick: bool) -> Any:
    dur, start = timing(quick)
    return buffer_scenario(
        p["n"],
        headline_buffer(p["sentence"], p["arm"], p["rate"], p["n"], p["scale"]),
        rate_bps=p["rate"],
        rtt_lo_ms=HEAD_LO,
        rtt_hi_ms=HEAD_HI,
        duration_s=dur,
        measure_from_s=start,
        tcp=tcp_of(p["sender"]),
        name=f"buffer-sizing-{p['sentence']}-{p['scale'].replace(' ', '-')}-{p['arm']}",
    )


def short_points(sender: str = "sack") -> list[dict[str, Any]]:
    """The base point and each quantity varied alone over its values (a star: 8 points)."""
    pts = [{**SHORT_BASE, "rate": r} for r in SHORT_RATES]
    pts += [{**SHORT_BASE, "rtt": t} for t in SHORT_RTTS if t != SHORT_BASE["rtt"]]
    pts += [{**SHORT_BASE, "load": x} for x in SHORT_LOADS if x != SHORT_BASE["load"]]
    return [{**p, "sender": sender} for p in pts]


def short_point(p: dict[str, Any], quick: bool) -> Any:
    dur, start = (60.0, 10.0) if quick else (200.0, 20.0)
    return short_flow_scenario(
        p["rate"],
        p["rtt"],
        p["load"],
        size_pkts=SHORT_PKTS,
        duration_s=dur,
        measure_from_s=start,
        tcp=tcp_of(p["sender"]),
        name=f"buffer-sizing-short-{p['rate'] / 1e6:g}M-{p['rtt']:g}ms-load{p['load']:g}",
    )


def short_metrics(res: Result) -> dict[str, float]:
    """The short-flow runs' metrics, over the measurement window at the bottleneck (r1 → dst):

    - ``b99_pkts``: the 99th percentile of the sampled queue (1 ms samples): the buffer the
      queue exceeds 1 % of the time;
    - ``refused``: arrivals refused for want of a connection slot (expected 0).
    """
    s = res.summary()
    w0, w1 = s["measurement_window_s"]
    q = res.series_queue
    inq = q.loc[(q["queue"] == "bottleneck:ab") & (q["time_s"] >= w0) & (q["time_s"] <= w1), "queue_packets"]
    refused = sum(int(a["refused"]) for a in s["arrivals"].values())
    return {"b99_pkts": float(np.quantile(inq.to_numpy(float), 0.99)), "refused": float(refused)}


def plan(opts: Options) -> list[Sweep]:
    q = opts.quick
    ss, one = senders(opts), one_sender(opts)
    curve = [{"n": n, "frac": f, "sender": s} for s in ss for n in CURVE_N[q] for f in FRACTIONS]
    rule = [{"n": n, "rtt": r, "sender": s} for s in ss for r in ("mean", "max") for n in RULE_N[q]]
    return [
        Sweep(
            CURVE, [(p, curve_point(p, q)) for p in curve], opts.seeds, "utilisation against buffer, n flows"
        ),
        Sweep(RULE_SWEEP, [(p, rule_point(p, q)) for p in rule], opts.seeds, "the buffer RTT × C / √n"),
        Sweep(
            HEADLINE,
            [(p, headline_point(p, q)) for p in headline_points(q, one)],
            opts.seeds,
            "the headlines",
        ),
        Sweep(
            SHORT,
            [(p, short_point(p, q)) for p in short_points(one)],
            opts.seeds,
            "short flows: the line rate, the RTT and the load varied",
            metrics=(SHORT_METRICS,),
        ),
    ]


def per_seed(ctx: Context, sweep: str, where: dict[str, Any], metric: str = "utilization") -> pd.Series:
    v = ctx.values(sweep, metric, where)
    return pd.Series(v["value"].to_numpy(float), index=v["seed"].to_numpy(int)).sort_index()


def min_buffer(fracs: list[float], utils: list[float], level: float) -> float:
    """The smallest buffer (fraction of RTT × C) at which the utilisation reaches ``level``,
    interpolated in log buffer between the grid's neighbours; NaN if no buffer of the grid reaches
    it, or the smallest already does (below the grid: unknown, never clipped to its end)."""
    for i, (f, u) in enumerate(zip(fracs, utils, strict=True)):
        if u >= level:
            if i == 0:
                return math.nan
            f0, u0 = fracs[i - 1], utils[i - 1]
            t = (level - u0) / (u - u0) if u > u0 else 1.0
            return float(math.exp(math.log(f0) + t * (math.log(f) - math.log(f0))))
    return math.nan


def min_buffers(ctx: Context, sender: str, level: float) -> pd.DataFrame:
    """B_min(level) in packets per seed (rows) and n (columns)."""
    runs = ctx.runs(CURVE)
    runs = runs[runs["sender"] == sender]
    out: dict[int, dict[int, float]] = {}
    for key, g in runs.groupby(["n", "seed"]):
        n, seed = (int(k) for k in cast(tuple[int, int], key))
        g = g.sort_values("frac")
        bdp = bdp_pkts(CURVE_RATE, rtt_of("mean", rtts_ms(n, RTT_LO, RTT_HI)))
        f = min_buffer(list(g["frac"].astype(float)), list(g["utilization"].astype(float)), level)
        out.setdefault(seed, {})[n] = f * bdp
    return pd.DataFrame(out).T.sort_index()


def slopes(bmin: pd.DataFrame) -> pd.Series:
    """Per seed, the least-squares slope of log B_min against log n over n ≥ SLOPE_FROM_N."""
    cols = [n for n in (int(c) for c in bmin.columns) if n >= SLOPE_FROM_N]
    x = np.log(np.asarray(cols, float))
    vals = {}
    for seed, row in bmin[cols].iterrows():
        y = np.log(row.to_numpy(float))
        ok = np.isfinite(y)
        if ok.sum() >= 2:
            vals[seed] = float(np.polyfit(x[ok], y[ok], 1)[0])
    return pd.Series(vals, dtype=float)


def analyse(ctx: Context) -> None:
    ss, one = senders(ctx.options), one_sender(ctx.options)
    figures.curve_figure(ctx, ss, CURVE_RATE, (RTT_LO, RTT_HI))
    bmins = {(s, lvl): min_buffers(ctx, s, lvl) for s in ss for lvl in LEVELS}
    figures.min_buffer_figure(ctx, bmins, SLOPE_FROM_N)
    for s in ss:
        for lvl in LEVELS:
            sl = slopes(bmins[(s, lvl)]).dropna()
            if len(sl) >= 2:
                claim = SCALES.at(level_place(lvl))
                ctx.verdict(claim.one_sample(f"RTT mean · {s} · n ≥ {SLOPE_FROM_N}", estimate(sl)))
    rule = ctx.runs(RULE_SWEEP)
    for s in ss:
        for rtt in ("mean", "max"):
            for n in sorted({int(x) for x in rule["n"]}):
                u = per_seed(ctx, RULE_SWEEP, {"n": n, "rtt": rtt, "sender": s})
                ctx.verdict(RULE_HOLDS.one_sample(f"RTT {rtt} · {s} · n={n}", estimate(u)))
    figures.rule_figure(ctx, ss)
    head = ctx.runs(HEADLINE)
    for scale in sorted(set(head["scale"])):
        sel = {"scale": scale, "sentence": "reduce", "sender": one}
        n = int(head[(head["scale"] == scale) & (head["sentence"] == "reduce")]["n"].iloc[0])
        reduced = per_seed(ctx, HEADLINE, {**sel, "arm": "reduced"})
        full = per_seed(ctx, HEADLINE, {**sel, "arm": "bdp"})
        ctx.verdict(REDUCE.paired(f"{scale} · {one} · n={n}", paired(reduced, full)))
        sel = {"scale": scale, "sentence": "10mbit", "arm": "reduced", "sender": one}
        n = int(head[(head["scale"] == scale) & (head["sentence"] == "10mbit")]["n"].iloc[0])
        ten = per_seed(ctx, HEADLINE, sel)
        ctx.verdict(TEN_MBIT.one_sample(f"{scale} · {one} · n={n}", estimate(ten)))
    figures.headline_table(ctx, head)
    short_verdicts(ctx, one)


def short_verdicts(ctx: Context, sender: str) -> None:
    """The short-flow claims: B99 at the ends of the line rate's and the RTT's range (16-fold
    each), as |relative difference| per seed; at load 0.9 against 0.5 as a relative difference.
    Read on B99 (primary) and on the mean queue."""
    figures.short_figure(ctx, SHORT_BASE, sender)
    refused = ctx.runs(SHORT)["refused"].astype(float).sum()
    pre = (bool(refused == 0), f"{refused:g} arrivals refused a connection slot")
    base = {k: SHORT_BASE[k] for k in ("rate", "rtt", "load")}
    for metric, label in (("b99_pkts", "B99"), ("queue_mean_pkts", "mean queue")):
        reading = f"{label} · {sender} · {SHORT_PKTS}-packet flows"

        def at(change: dict[str, float], metric: str = metric) -> pd.Series:
            return per_seed(ctx, SHORT, {**base, **change, "sender": sender}, metric)

        for part, key, (lo, hi) in (
            ("line rate", "rate", (SHORT_RATES[0], SHORT_RATES[-1])),
            ("RTT", "rtt", (SHORT_RTTS[0], SHORT_RTTS[-1])),
        ):
            rel = (at({key: hi}) / at({key: lo}) - 1.0).abs().dropna()
            claim = SHORT_NOT_RATE_RTT.at(short_place(part))
            where = f"{reading} · load {base['load']:g}"
            ctx.verdict(claim.one_sample(where, estimate(rel), precondition=pre))
        rel = (at({"load": SHORT_LOADS[-1]}) / at({"load": SHORT_LOADS[0]}) - 1.0).dropna()
        ctx.verdict(SHORT_LOAD_CLAIM.one_sample(reading, estimate(rel), precondition=pre))


EXPERIMENT = register(
    Experiment(
        name=NAME,
        study="Appenzeller, buffer sizing",
        title="Sizing router buffers: RTT × C / √n for n long-lived TCP flows",
        paper="G. Appenzeller, I. Keslassy, N. McKeown, Sizing Router Buffers, SIGCOMM 2004",
        summary=(
            "n long-lived TCP flows (Reno, SACK) with round trips spread 60-140 ms through a drop-tail "
            "bottleneck: utilisation against the buffer, the minimum buffer for 98 / 99.5 / 99.9 % "
            "against n, the buffer RTT × C / √n, and the abstract's two headline sentences."
        ),
        plan=plan,
        analyse=analyse,
        seeds=10,
        quick_seeds=3,
        own_senders=True,
        window=Window(
            False,
            "ours: the paper's run lengths could not be read; 10 s warm-up of 40 s (quick), 20 of 100 s",
        ),
    )
)
