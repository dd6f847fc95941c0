"""The figures of ``ard``'s sensitivity and RTT-spread sweeps (:mod:`qoslab.studies.ard.study`): how
Table 1's index moves with the choices the paper leaves open, and the Jain index and utilisation
against the RTT spread for each flow count; with the number formats the experiment's tables share."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, estimates_line, panels
from qoslab.reproduction.runner import Context, select
from qoslab.stats import estimate
from qoslab.studies.ard.paper import TABLE1
from qoslab.studies.ard.topology import SCHEMES


def f0(x: float) -> str:
    return f"{x:.0f}"


def f1(x: float) -> str:
    return f"{x:.1f}"


def f3(x: float) -> str:
    return f"{x:.3f}"


def _f4(x: float) -> str:
    return f"{x:.4f}"


#: Each scheme's marker, so that overlapping points stay told apart.
_MARK: dict[str, dict[str, Any]] = {"rio": {"marker": "o"}, "arm": {"marker": "s"}, "ard": {"marker": "^"}}


def sensitivity(ctx: Context) -> None:
    runs = ctx.runs("sensitivity")
    left: list[Line] = []
    right: list[Line] = []
    base = runs[(runs["window"] == 20) & (runs["drop_order"] == "before_remark")]
    rows = []
    window_caps: list[float] = []
    for scheme in SCHEMES:
        xs, ms, hs = [], [], []
        for c in sorted(base["cbs_pkts"].unique()):
            e = estimate(select(base, {"scheme": scheme, "cbs_pkts": c})["fairness_index"])
            li = estimate(select(base, {"scheme": scheme, "cbs_pkts": c})["aggregate_in_bps"])
            xs.append(c)
            ms.append(e.mean)
            hs.append(0 if not np.isfinite(e.ci_high) else e.ci_high - e.mean)
            rows.append(
                {
                    "knob": "host bucket (pkts)",
                    "value": c,
                    "scheme": scheme,
                    "jain": e.fmt(4),
                    "in_kbps": li.mean / 1e3,
                }
            )
        # the schemes side by side (not on top of one another), each with its own marker
        shift = (SCHEMES.index(scheme) - (len(SCHEMES) - 1) / 2) * 0.12
        left.append(Line([x + shift for x in xs], ms, scheme.upper(), err=hs, style=_MARK[scheme]))
    for scheme in SCHEMES:
        sub = runs[
            (runs["cbs_pkts"] == 2) & (runs["drop_order"] == "before_remark") & (runs["scheme"] == scheme)
        ]
        xs = sorted(sub["window"].unique())
        es = [estimate(sub[sub["window"] == w]["fairness_index"]) for w in xs]
        factor = 1.05 ** (SCHEMES.index(scheme) - (len(SCHEMES) - 1) / 2)
        right.append(estimates_line([x * factor for x in xs], es, label=scheme.upper(), **_MARK[scheme]))
        window_caps = xs
        for w, e in zip(xs, es, strict=True):
            if w != 20:
                rows.append(
                    {
                        "knob": "TCP window cap",
                        "value": w,
                        "scheme": scheme,
                        "jain": e.fmt(4),
                        "in_kbps": float("nan"),
                    }
                )
    paper_rio = Ref(TABLE1[(4, "rio")], f"paper, RIO alone ({TABLE1[(4, 'rio')]})")
    fig = panels(
        [
            Panel(
                left,
                title="host marker bucket depth (TCP window cap 20 packets)",
                xlabel="bucket depth (packets)",
                ylabel="Jain's index (4 flows)",
                refs=[paper_rio],
            ),
            Panel(
                right,
                title="TCP window cap (host bucket 2 packets)",
                xlabel="window cap (packets)",
                ylabel="Jain's index (4 flows)",
                refs=[paper_rio],
                logx=True,
                xticks=[float(w) for w in window_caps],
            ),
        ],
        title="Sensitivity of Table 1 (4 flows) to the host bucket depth and TCP's window cap",
    )
    for order in ("before_remark", "among_remarked"):
        sub = runs[
            (runs["cbs_pkts"] == 2)
            & (runs["window"] == 20)
            & (runs["scheme"] == "ard")
            & (runs["drop_order"] == order)
        ]
        e = estimate(sub["fairness_index"])
        rows.append(
            {
                "knob": "ARD drop order",
                "value": order,
                "scheme": "ard",
                "jain": e.fmt(4),
                "in_kbps": estimate(sub["aggregate_in_bps"]).mean / 1e3,
            }
        )
    ctx.figure(
        "sensitivity",
        fig,
        title="Sensitivity of Table 1 (4 flows) to the host bucket depth and TCP's window cap",
        sweeps=["sensitivity"],
        caption="Mean ± 95 % CI over seeds, the three schemes drawn side by side at each value. The "
        "dotted line is the paper's RIO-only index.",
    )
    ctx.table(
        "sensitivity",
        pd.DataFrame(rows),
        title="Sensitivity: Jain's index (4 flows) against the choices the paper leaves open",
        columns={
            "knob": "choice",
            "value": "value",
            "scheme": "scheme",
            "jain": "Jain (mean ± CI)",
            "in_kbps": "aggregate IN kbps",
        },
        formats={"in_kbps": f0},
    )


def flows_figure(ctx: Context) -> None:
    runs = ctx.runs("sweep")
    flows = sorted(runs["n"].unique())
    ratios = [float(r) for r in sorted(runs["rtt_ratio"].unique())]
    jain = [
        Panel(
            title=f"{n} flows",
            xlabel="largest / smallest RTT",
            ylabel="Jain's index",
            logx=True,
            xticks=ratios,
        )
        for n in flows
    ]
    rows = []
    for k, n in enumerate(flows):
        for scheme in SCHEMES:
            sub = runs[(runs["n"] == n) & (runs["scheme"] == scheme)]
            xs = sorted(sub["rtt_ratio"].unique())
            ej = [estimate(sub[sub["rtt_ratio"] == r]["fairness_index"]) for r in xs]
            eu = [estimate(sub[sub["rtt_ratio"] == r]["utilization"]) for r in xs]
            for r, a, b in zip(xs, ej, eu, strict=True):
                rows.append(
                    {
                        "flows": n,
                        "rtt_ratio": r,
                        "scheme": scheme,
                        "jain_mean": a.mean,
                        "jain": a.fmt(4),
                        "utilization": b.mean,
                    }
                )
            jain[k].lines.append(estimates_line(xs, ej, label=scheme.upper(), **_MARK[scheme]))
    # the utilisation is a column of the table (it barely moves), not a row of flat panels
    fig = panels(
        [jain],
        title="Jain's index of RIO alone, ARM and ARD against the RTT spread, by number of flows",
        panel_size=(3.8, 3.0),
    )
    df = pd.DataFrame(rows)
    piv = df.pivot_table(index=["flows", "rtt_ratio"], columns="scheme", values="jain_mean").reset_index()
    piv["ARM − RIO"] = piv["arm"] - piv["rio"]
    piv["ARD − RIO"] = piv["ard"] - piv["rio"]
    util_piv = df.pivot_table(
        index=["flows", "rtt_ratio"], columns="scheme", values="utilization"
    ).reset_index()
    piv = piv.merge(
        util_piv.rename(columns={s: f"util {s.upper()}" for s in SCHEMES}), on=["flows", "rtt_ratio"]
    )
    ctx.figure(
        "sweep-rtt-flows",
        fig,
        title="Jain's index against RTT spread and flow count",
        sweeps=["sweep"],
        caption=(
            "Mean ± 95 % CI over seeds; the RTT ratio on a log axis. The bottleneck utilisation, "
            f"between {df['utilization'].min():.4f} and {df['utilization'].max():.4f} at every point, "
            "is in the reproduction's `sweep-rtt-flows.md` table."
        ),
    )
    ctx.table(
        "sweep-rtt-flows",
        piv,
        title="Jain's index by RTT ratio and number of flows (means; differences to RIO alone)",
        formats={
            **{c: _f4 for c in ("rio", "arm", "ard", "ARM − RIO", "ARD − RIO")},
            **{f"util {s.upper()}": _f4 for s in SCHEMES},
        },
    )
