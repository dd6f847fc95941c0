"""``red-vs-droptail``: RED against drop-tail on a dumbbell of N TCP Reno flows (1 Mbps, 100 ms
round trip, 100-packet buffer), 20 s runs measured over 5-20 s; the claims are declared in
:mod:`study_red_vs_droptail.claims`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from qoslab.report.figures import Line, Panel, panels
from qoslab.reproduction.base import Experiment, Options, Sweep, Window, register
from qoslab.reproduction.runner import Context
from qoslab.reproduction.topologies import dumbbell, red_queue
from qoslab.stats import estimate, paired
from study_red_vs_droptail.claims import NAME, SAME_UTILISATION, SHORTER_QUEUE, SWEEP

#: the queues compared at the bottleneck, both of 100 packets: RED with ns-2's default
#: thresholds (min_th 5, max_th 15 packets, max_p 0.1, w_q 0.002), below the path's
#: bandwidth-delay product (25 packets of 500 B at 1 Mbps and 100 ms), where a short queue may
#: cost utilisation
QUEUES: dict[str, dict[str, Any]] = {
    "droptail": {"type": "droptail", "limit": "100pkts"},
    "red": red_queue(100, 5.0, 15.0, 0.1),
}
FLOWS = (2, 5, 20)
FLOWS_QUICK = (2, 20)


def point(p: dict[str, Any]) -> Any:
    """The scenario of one point: ``p["flows"]`` flows through ``p["queue"]``."""
    return dumbbell(
        p["flows"],
        name=f"red-vs-droptail-{p['queue']}-n{p['flows']}",
        description=f"{p['flows']} Reno flows, 1 Mbps bottleneck with {p['queue']}",
        measurement={"start": "5s", "end": "20s", "interval": "100ms", "bottleneck": "bottleneck"},
        bottleneck_queue=QUEUES[p["queue"]],
    )


def plan(opts: Options) -> list[Sweep]:
    pts = [{"flows": n, "queue": q} for n in (FLOWS_QUICK if opts.quick else FLOWS) for q in QUEUES]
    return [Sweep(SWEEP, [(p, point(p)) for p in pts], opts.seeds, "RED and drop-tail, N flows.")]


def per_seed(ctx: Context, metric: str, where: dict[str, Any]) -> pd.Series:
    v = ctx.values(SWEEP, metric, where)
    return pd.Series(v["value"].to_numpy(float), index=v["seed"].to_numpy(int))


def analyse(ctx: Context) -> None:
    flows = sorted({int(n) for n in ctx.runs(SWEEP)["flows"]})
    row = []
    for metric, title, ylabel in (
        ("queue_mean_pkts", "mean bottleneck queue", "queue (packets)"),
        ("utilization", "bottleneck utilisation", "utilisation"),
    ):
        lines = []
        for q, colour in (("droptail", "tab:red"), ("red", "tab:blue")):
            est = [estimate(per_seed(ctx, metric, {"flows": n, "queue": q})) for n in flows]
            mean, err = [e.mean for e in est], [e.half_width for e in est]
            lines.append(Line(flows, mean, q, err=err, style={"color": colour}))
        row.append(Panel(lines, title=title, xlabel="TCP flows", ylabel=ylabel))
    fig = panels(row, title="RED against drop-tail at a 1 Mbps bottleneck (100-packet buffer)")
    ctx.figure("queue", fig, title="Mean queue and utilisation, RED and drop-tail", sweeps=[SWEEP])
    for n in flows:
        red, dt = ({"flows": n, "queue": q} for q in ("red", "droptail"))
        ratio = per_seed(ctx, "queue_mean_pkts", red) / per_seed(ctx, "queue_mean_pkts", dt) - 1.0
        ctx.verdict(SHORTER_QUEUE.one_sample(f"{n} flows", estimate(ratio.dropna())))
        util = paired(per_seed(ctx, "utilization", red), per_seed(ctx, "utilization", dt))
        ctx.verdict(SAME_UTILISATION.paired(f"{n} flows", util))


EXPERIMENT = register(
    Experiment(
        name=NAME,
        title="RED against drop-tail: a shorter queue at the same utilisation",
        paper="RFC 2309 (Braden et al., 1998), Sec. 3",
        summary="RED's mean bottleneck queue against drop-tail's, and the utilisation each keeps.",
        plan=plan,
        analyse=analyse,
        seeds=10,
        quick_seeds=4,
        study="RFC 2309, RED vs drop-tail",
        window=Window(False, "ours: 5 s of warm-up, 15 s measured (the RFC states no window)"),
    )
)
