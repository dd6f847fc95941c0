"""``probe-marker``: the adaptive low-priority (probe) marker of Neglia, Bianchi, Saitta and
Lombardo against an all-IN baseline on a RIO bottleneck
(``../shared/papers/neglia-adaptive-probe-marker.md``).

What it reproduces:

- Figs. 3-6: performance frontiers (mean queueing delay against goodput utilisation) of the
  marker and of no marker (every packet IN), 10 and 40 TCP Reno flows, soft and hard
  differentiation, RIO min_in from 2 to 80 packets;
- the share of packets marked IN (paper: about 98-99 % with 10 flows, 94-97 % with 40);
- Fig. 7: loss percentage overall, IN and OUT, 10 flows;
- the A_IN + 1 increase rule beside the default 2·A_IN + 1;
- Fig. 8: an ON/OFF UDP source (3 Mbps peak, equal mean on and off times 0.05, 1, 5 s), 10 flows,
  hard differentiation;
- Fig. 9: two domains: 10 or 40 marked flows (domain 1: RIO with IN 100/300 and three OUT
  settings) and as many unmarked flows share a best-effort RED bottleneck in domain 2.

Scenario (Sec. 3): one 6 Mbps bottleneck, RTTs evenly spread over 124-198 ms, starts uniform in
[0, 1] s, 1000 s runs measured after 50 s. What the paper leaves open is run as named readings
side by side (packet size 1500 B and 1000 B; Clark & Fang's RIO and ns-2.35 dsRED's; Fig. 9's
domain-1 link), with one verdict per claim and reading (``_verdicts``); see ``NOTES`` and
``docs/experiments/probe-marker.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from qoslab.ns2.flavour import ns2_flavoured
from qoslab.reproduction.base import Experiment, Options, Sweep, Window, register
from qoslab.reproduction.runner import Context, select
from qoslab.runs.simulate import Result
from qoslab.stats import estimate, paired
from qoslab.studies.probe_marker import claims as claims
from qoslab.studies.probe_marker.figures import (
    claim_table,
    fig7,
    frontier_figure,
    frontier_gap,
    frontier_points,
    in_share,
    onoff,
    rio_ns2,
    sweep_name,
    two_domains_figure,
    wide,
)
from qoslab.studies.probe_marker.paper import (
    BOTTLENECK_BPS,
    DOMAIN1_OUT,
    FIG9_READINGS,
    FIGS,
    FLOWS,
    HIGH_GOODPUT_MIN_IN,
    MARKERS,
    METRIC_FN,
    MIN_IN,
    MIN_IN_QUICK,
    MIN_TH_DOMAIN2,
    MIN_TH_DOMAIN2_QUICK,
    NOTES,
    NS2_SUPPORT,
    ONOFF_TIMES_S,
    PACKET_BYTES,
    PACKET_READINGS,
    PACKET_SUPPORT,
    PACKETS,
    PAPER,
    paper_references,
)
from qoslab.studies.probe_marker.topology import single_bottleneck, two_domains, wq_for
from qoslab.verdicts.claims import PaperClaim

# -- metrics ---------------------------------------------------------------------------------------


def probe_metrics(res: Result) -> dict[str, float]:
    """The frontier metrics of one run, over the measurement window at the bottleneck (r1 → r2):

    - ``goodput_util``: the TCP flows' goodput over the bottleneck rate (``_marked``: the flows
      named ``ftp*``; ``_free``: ``free*``, Fig. 9);
    - ``delay_ms``: mean waiting time before transmission of the packets admitted at the
      bottleneck in the window (exact, per packet; transmission and propagation excluded);
    - ``little_delay_ms``: the same from Little's law, time-averaged sampled queue (1 s samples)
      over the admission rate (a cross-check);
    - ``in_share``: IN (AF11) share of the packets arriving at the bottleneck;
    - ``loss_pct``, ``loss_in_pct``, ``loss_out_pct``: bottleneck drops over arrivals (%);
    - ``overflow_drops`` (buffer overflows over the whole run, expected 0), ``timeouts_per_flow``.
    """
    links = res.links
    b = links[(links["link_name"] == "bottleneck") & (links["direction"] == "ab")].iloc[0]
    m = res.scenario.resolved["measurement"]
    window_s = (m["end_ns"] - m["start_ns"]) / 1e9
    f = res.flows
    tcp = f[f["name"].str.startswith(("ftp", "free"))]
    marked = f[f["name"].str.startswith("ftp")]
    free = f[f["name"].str.startswith("free")]
    arr_in, arr_out = float(b["window_arrivals_prec0"]), float(b["window_arrivals_prec1"])
    arr_be = float(b["window_arrivals_prec2"])
    drop_in, drop_out = float(b["window_drops_prec0"]), float(b["window_drops_prec1"])
    drop_be = float(b["window_drops_prec2"])
    arr = arr_in + arr_out + arr_be
    nan = float("nan")
    q = res.series_queue
    w0, w1 = m["start_ns"] / 1e9, m["end_ns"] / 1e9
    inq = q[(q["queue"] == "bottleneck:ab") & (q["time_s"] > w0) & (q["time_s"] <= w1)]
    adm_pps = float(b["window_admitted"]) / window_s
    return {
        "goodput_util": float(tcp["goodput_bps"].sum()) / BOTTLENECK_BPS,
        "goodput_util_marked": float(marked["goodput_bps"].sum()) / BOTTLENECK_BPS,
        "goodput_util_free": float(free["goodput_bps"].sum()) / BOTTLENECK_BPS if len(free) else nan,
        "delay_ms": float(b["window_wait_ns"]) / float(b["window_admitted"]) / 1e6
        if b["window_admitted"]
        else nan,
        "little_delay_ms": float(inq["queue_packets"].mean()) / adm_pps * 1e3
        if len(inq) and adm_pps
        else nan,
        "in_share": arr_in / (arr_in + arr_out) if arr_out > 0 or arr_in > 0 else nan,
        "loss_pct": 100.0 * (drop_in + drop_out + drop_be) / arr if arr else nan,
        "loss_in_pct": 100.0 * drop_in / arr_in if arr_in else nan,
        "loss_out_pct": 100.0 * drop_out / arr_out if arr_out else nan,
        "overflow_drops": float(b["overflow_drops"]),
        "timeouts_per_flow": float(tcp["timeouts"].mean()),
        "window_s": window_s,
    }


# -- plan ------------------------------------------------------------------------------------------


def plan(opts: Options) -> list[Sweep]:
    seeds = opts.seeds
    mi = MIN_IN_QUICK if opts.quick else MIN_IN
    kw: dict[str, Any] = {"duration_s": 300.0, "start_s": 50.0} if opts.quick else {}
    length = "300 s runs measured after 50 s (quick)." if opts.quick else "1000 s runs measured after 50 s."
    sweeps = []
    for pb in PACKETS:
        reading = f"{pb}-byte packets, RIO w_q {wq_for(pb):.3g} ({PACKET_READINGS[pb]} reading). "
        sweeps += [
            Sweep(
                sweep_name("frontier", pb),
                frontier_points(FLOWS, ("soft", "hard"), list(MARKERS), mi, packet_bytes=pb, **kw),
                seeds,
                "Figs. 3-7: 10 and 40 TCP Reno flows over the 6 Mbps RIO bottleneck, min_in = "
                f"{', '.join(map(str, mi))} packets (max_in = 3·min_in, P_max_in = 0.1); soft (OUT "
                "min_in/3, min_in, 0.2) and hard (OUT 2, 6, 0.2) differentiation; the probe marker with "
                "the paper's increase rule and with A_IN + 1, and no marker (every packet IN: the OUT "
                "thresholds never act, one run per min_in serves both). " + reading + length,
                metrics=(METRIC_FN,),
            ),
            Sweep(
                sweep_name("onoff", pb),
                [
                    (
                        {"on_off_s": t, "marker": mk, "min_in": m},
                        single_bottleneck(10, mk, m, "hard", onoff_s=t, packet_bytes=pb, **kw),
                    )
                    for t in (ONOFF_TIMES_S[::2] if opts.quick else ONOFF_TIMES_S)
                    for mk in ("none", "probe")
                    for m in mi
                ],
                seeds,
                "Fig. 8: 10 flows, hard differentiation, plus an exponential ON/OFF UDP source (3 Mbps "
                "peak, mean on = mean off time), its packets IN. " + reading + length,
                metrics=(METRIC_FN,),
            ),
        ]
    sweeps.append(
        Sweep(
            "rio_ns2",
            [
                (
                    {"packet_bytes": pb, "flows": n, "marker": mk, "min_in": m},
                    ns2_flavoured(single_bottleneck(n, mk, m, "hard", packet_bytes=pb, **kw))[0],
                )
                for pb in PACKETS
                for n in FLOWS
                for mk in ("none", "probe")
                for m in mi
            ],
            seeds,
            "Figs. 5-7 with ns-2.35 dsRED's RIO (the ns2 flavour; the paper ran ns-2): hard "
            "differentiation (soft puts OUT thresholds at min_in/3, which dsRED cannot express), probe "
            "marker and all IN, both packet-size readings. " + length,
            metrics=(METRIC_FN,),
        )
    )
    flows_2d = (10,) if opts.quick else FLOWS
    min_th = MIN_TH_DOMAIN2_QUICK if opts.quick else MIN_TH_DOMAIN2
    for name, readings in (
        ("two_domains", [(PACKET_BYTES, 10.0)]),
        ("two_domains_readings", [(1000, 10.0), (PACKET_BYTES, 6.0)]),
    ):
        sweeps.append(
            Sweep(
                name,
                [
                    (
                        {
                            "packet_bytes": pb,
                            "domain1_mbps": d1,
                            "flows": n,
                            "out": f"({o[0]:g}, {o[1]:g}, {o[2]:g})",
                            "min_th": m,
                        },
                        two_domains(n, o, m, packet_bytes=pb, domain1_mbps=d1, **kw),
                    )
                    for pb, d1 in readings
                    for n in flows_2d
                    for o in DOMAIN1_OUT
                    for m in min_th
                ],
                seeds,
                "Fig. 9: n marked flows (domain 1: probe markers, RIO IN 100/300/0.1 with three OUT "
                "settings) and n unmarked flows share domain 2's 6 Mbps RED bottleneck (min_th, "
                "3·min_th, 0.1); "
                + (
                    "1500-byte packets, a 10 Mbps domain-1 link. "
                    if name == "two_domains"
                    else "the other readings: 1000-byte packets (10 Mbps domain 1), and a 6 Mbps domain-1 "
                    "link (1500 B). "
                )
                + length,
                metrics=(METRIC_FN,),
            )
        )
    return sweeps


# -- analysis --------------------------------------------------------------------------------------


def analyse(ctx: Context) -> None:
    frs = {pb: wide(ctx, sweep_name("frontier", pb), ["flows", "diff", "marker", "min_in"]) for pb in PACKETS}
    _verdicts(ctx)
    for pb, fr in frs.items():
        frontier_figure(ctx, fr, pb)
        claim_table(ctx, fr, pb)
    in_share(ctx, frs)
    fig7(ctx, frs[PACKET_BYTES])
    rio_ns2(ctx, frs)
    onoff(ctx)
    two_domains_figure(ctx)


# -- verdicts --------------------------------------------------------------------------------------


def frontier_ratio(marker: pd.DataFrame, none: pd.DataFrame) -> pd.Series:
    """Per seed (rows with ``seed``, ``goodput_util``, ``delay_ms``): the marker points' delay
    over the same seed's all-IN frontier delay at the marker point's goodput (linear
    interpolation, :func:`frontier_gap`), averaged over the marker points inside that frontier's
    goodput range; NaN for a seed with none. Below 1: the marker's frontier lies below."""
    out = {}
    for key, m in marker.groupby("seed"):
        seed = cast(int, key)
        g = frontier_gap(m[["goodput_util", "delay_ms"]], none[none["seed"] == seed])
        r = (g["delay_ms"] / g["none_delay_ms"]).to_numpy(float)
        r = r[np.isfinite(r)]
        out[int(seed)] = float(r.mean()) if r.size else float("nan")
    return pd.Series(out, dtype=float)


def _ones(s: pd.Series) -> pd.Series:
    return pd.Series(1.0, index=s.index)


def _per_seed_mean(df: pd.DataFrame, col: str) -> pd.Series:
    return df.groupby("seed")[col].mean()


def _verdicts(ctx: Context) -> None:
    """One verdict per claim and reading, decided from paired (same-seed) or one-sample t-tests
    over seeds (``qoslab.verdicts``)."""
    quick = ctx.options.quick
    for pb in PACKETS:
        reading, sup = PACKET_READINGS[pb], PACKET_SUPPORT[pb]
        runs = ctx.runs(sweep_name("frontier", pb))
        ratio: dict[tuple[int, str, str], pd.Series] = {}
        for n in FLOWS:
            none = select(runs, {"flows": n, "marker": "none"})
            for diff in ("soft", "hard"):
                for mk in ("probe", "probe_plus_one"):
                    ratio[(n, diff, mk)] = frontier_ratio(
                        select(runs, {"flows": n, "diff": diff, "marker": mk}), none
                    )
        for n, diff in FIGS:
            r = ratio[(n, diff, "probe")]
            ctx.verdict(claims.FRONTIER[(n, diff)].paired(reading, paired(r, _ones(r)), supported=sup))
        claims.high_load(ctx, runs, ratio, frontier_ratio, reading, sup, quick)
        for n in FLOWS:
            ctx.verdict(
                claims.MORE_SIGNIFICANT[n].paired(
                    reading, paired(ratio[(n, "hard", "probe")], ratio[(n, "soft", "probe")]), supported=sup
                )
            )
        for n in FLOWS:
            share = select(runs, {"flows": n, "marker": "probe"}).groupby("seed")["in_share"].min()
            ctx.verdict(claims.IN_SHARE[n].one_sample(reading, estimate(share), supported=sup))
        _loss_verdicts(
            ctx, select(runs, {"flows": 10, "diff": "hard", "marker": "probe"}), reading, sup, quick
        )
        _plus_one_verdicts(ctx, ratio, runs, reading, sup)
        on = ctx.runs(sweep_name("onoff", pb))
        for t in sorted(on["on_off_s"].unique()):
            o = select(on, {"on_off_s": t})
            r = frontier_ratio(select(o, {"marker": "probe"}), select(o, {"marker": "none"}))
            ctx.verdict(
                claims.ONOFF[float(t)].paired(
                    reading, paired(r, _ones(r)), supported=sup + "; ON/OFF times exponential"
                )
            )
        claims.density_claims(ctx, on, reading, sup + "; ON/OFF times exponential")
    ns2 = ctx.runs("rio_ns2")
    for pb in PACKETS:
        reading = f"{PACKET_READINGS[pb]}, ns2 RIO"
        sup = f"{PACKET_SUPPORT[pb]}; {NS2_SUPPORT}"
        r_pb = select(ns2, {"packet_bytes": pb})
        for n in FLOWS:
            r = frontier_ratio(
                select(r_pb, {"flows": n, "marker": "probe"}), select(r_pb, {"flows": n, "marker": "none"})
            )
            ctx.verdict(claims.FRONTIER[(n, "hard")].paired(reading, paired(r, _ones(r)), supported=sup))
        _loss_verdicts(ctx, select(r_pb, {"flows": 10, "marker": "probe"}), reading, sup, quick)
    _fig9_verdicts(ctx)


def _plus_one_verdicts(
    ctx: Context, ratio: dict[tuple[int, str, str], pd.Series], runs: pd.DataFrame, reading: str, sup: str
) -> None:
    """The modified marker (A_IN + 1) against the paper's 2·A_IN + 1, 10 flows: the frontiers in
    soft and hard differentiation and the OUT loss in soft."""

    def frontier(diff: str, claim: PaperClaim) -> None:
        ctx.verdict(
            claim.paired(
                reading,
                paired(ratio[(10, diff, "probe_plus_one")], ratio[(10, diff, "probe")]),
                supported=sup,
            )
        )

    # The A_IN + 1 rule against the paper's 2·A_IN + 1 (10 flows, as in the text's "Fig. 3").
    frontier("soft", claims.DOUBLED_BETTER)
    claims.doubled(ctx, ratio, reading, sup)
    soft = select(runs, {"flows": 10, "diff": "soft"})
    ctx.verdict(
        claims.OUT_DIFFERENCE.paired(
            reading,
            paired(
                _per_seed_mean(select(soft, {"marker": "probe_plus_one"}), "loss_out_pct"),
                _per_seed_mean(select(soft, {"marker": "probe"}), "loss_out_pct"),
            ),
            supported=sup,
        )
    )
    # the compound claim's two ranges, each marker's OUT loss on its own
    for marker, alone in claims.OUT_ALONE.items():
        ctx.verdict(
            alone.one_sample(
                reading,
                estimate(_per_seed_mean(select(soft, {"marker": marker}), "loss_out_pct")),
                supported=sup,
            )
        )
    frontier("hard", claims.POORER_HARD)


def _loss_verdicts(ctx: Context, probe: pd.DataFrame, reading: str, sup: str, quick: bool) -> None:
    """Fig. 7: at high goodput (min_in ≥ 30; the largest min_in in a quick run), OUT loss near
    100 % and IN loss very small (10 flows, hard differentiation)."""
    high = probe[probe["min_in"] >= (probe["min_in"].max() if quick else HIGH_GOODPUT_MIN_IN)]
    ctx.verdict(
        claims.LOSS_OUT.one_sample(reading, estimate(_per_seed_mean(high, "loss_out_pct")), supported=sup)
    )
    ctx.verdict(
        claims.LOSS_IN.one_sample(reading, estimate(_per_seed_mean(high, "loss_in_pct")), supported=sup)
    )


def _fig9_verdicts(ctx: Context) -> None:
    runs = pd.concat([ctx.runs("two_domains"), ctx.runs("two_domains_readings")], ignore_index=True)
    runs["ratio"] = runs["goodput_util_marked"] / runs["goodput_util_free"]
    runs["closeness"] = np.minimum(runs["ratio"], 1.0 / runs["ratio"])
    for (pb, d1), (reading, sup) in FIG9_READINGS.items():
        r = runs[(runs["packet_bytes"] == pb) & (runs["domain1_mbps"] == d1)]
        for n in sorted(r["flows"].unique()):
            rn = r[r["flows"] == n]
            for o in DOMAIN1_OUT[:2]:
                key = claims.out_key(o)
                ctx.verdict(
                    claims.ALMOST_SAME[(key, int(n))].one_sample(
                        reading,
                        estimate(_per_seed_mean(select(rn, {"out": key}), "closeness")),
                        supported=sup,
                    )
                )
            o = DOMAIN1_OUT[2]
            key = claims.out_key(o)
            ctx.verdict(
                claims.PATHOLOGICAL[(key, int(n))].one_sample(
                    reading, estimate(_per_seed_mean(select(rn, {"out": key}), "ratio")), supported=sup
                )
            )


EXPERIMENT = register(
    Experiment(
        name="probe-marker",
        title="adaptive low-priority (probe) marking against all-IN on a RIO bottleneck",
        paper=PAPER,
        summary=(
            "The probe marker (per flow: IN bursts of adaptive length A_IN closed by one OUT probe, "
            "A_IN filtered at each retransmission) against no marker, 10 and 40 TCP Reno flows over a "
            "6 Mbps RIO bottleneck: delay/utilisation frontiers (Figs. 3-6), IN share, losses per "
            "class (Fig. 7), the A_IN + 1 rule, an ON/OFF UDP stress (Fig. 8) and two domains with "
            "unmarked competitors (Fig. 9)."
        ),
        plan=plan,
        analyse=analyse,
        references=paper_references(),
        # 20: the A_IN + 1 comparison in hard differentiation is an effect under 0.02 (quick run).
        seeds=20,
        quick_seeds=2,
        window=Window(
            True,
            "Neglia et al., Sec. 3: 'Each simulation lasted 1000 simulated seconds, statistics were "
            "collected after 50 seconds'",
        ),
        study="Neglia, probe marker",
        notes=NOTES,
    )
)


def quick_frontier(
    seeds: Sequence[int],
    min_in: Sequence[float],
    *,
    flows: int = 10,
    diff: str = "hard",
    duration_s: float = 300.0,
    start_s: float = 50.0,
    markers: Sequence[str] = ("none", "probe"),
) -> pd.DataFrame:
    """Runs the frontier points directly (no store): one row per (marker, min_in, seed) with the
    :func:`probe_metrics` columns. For tests and notebooks."""
    from qoslab.runs.simulate import run

    rows = []
    for mk in markers:
        for mi in min_in:
            sc = single_bottleneck(flows, mk, mi, diff, duration_s=duration_s, start_s=start_s)
            for s in seeds:
                rows.append({"marker": mk, "min_in": mi, "seed": s, **probe_metrics(run(sc, s))})
    return pd.DataFrame(rows)


def mean_frontier(df: pd.DataFrame, by: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Means over seeds of :func:`quick_frontier` rows, per marker and min_in."""
    d = select(df, by or {})
    return d.groupby(["marker", "min_in"], as_index=False)[["goodput_util", "delay_ms", "in_share"]].mean()
