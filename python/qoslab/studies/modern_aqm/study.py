"""``modern-aqm``: the five studies' AF mechanisms beside the AQMs deployed today (issue 22).

The topology and traffic are ``mixed-traffic``'s (``scenarios/mixed-traffic.toml``):

- heavy-tailed web transfers arriving as a Poisson process at 30 % of a 10 Mbps bottleneck;
- four long TCP flows with 1.5 Mbps contracts (host token buckets mark IN/OUT);
- ten EF voice flows.

Every bottleneck below has the same 200-packet buffer:

- the studies' mechanisms: RIO, RI+O, FDD-RED, ARD, and EF in a priority queue;
- the RED and tail-drop baselines;
- CoDel (RFC 8289), FQ-CoDel (RFC 8290) and PIE (RFC 8033), with their RFC defaults.

Each runs under every TCP congestion control the core offers among Reno, CUBIC and BBR: one
sweep per sender, the same seeds. The report gives, per mechanism and sender, on paired seeds:

- fairness against contracts: the long flows' mean and worst throughput / contract, and Jain's
  index of those ratios;
- queueing delay: the bottleneck's mean queueing delay, and the one-way delay percentiles of the
  voice class (median, p99, p99.9) and of the long flows (p99);
- the bottleneck's utilisation and the short web transfers' completion time.

The question is whether the AF mechanisms still deliver contracts when the senders are not Reno,
and what the deployed AQMs, which know nothing of contracts, do instead. Every comparison is
paired with RIO under the same sender.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from qoslab.report.csvsafe import write_csv
from qoslab.report.figures import Panel, Ref, panels
from qoslab.reproduction.base import Experiment, Options, Sweep, Window, register
from qoslab.reproduction.runner import Context
from qoslab.runs.simulate import jain_index
from qoslab.scenario import Scenario
from qoslab.schema import tcp_variants
from qoslab.studies.mixed_traffic import study as mix

if TYPE_CHECKING:
    from qoslab.runs.simulate import Result

_Q = "link.bottleneck.queue_ab"

#: mechanism → (what it is, overrides of the bottleneck queue, extra TOML appended)
MECHANISMS: dict[str, tuple[str, list[str], str]] = {
    **mix.MECHANISMS,
    "codel": (
        "CoDel (RFC 8289), target 5 ms, interval 100 ms",
        [f'{_Q}={{ type = "codel", limit = "200pkts" }}'],
        "",
    ),
    "fq_codel": (
        "FQ-CoDel (RFC 8290), 1024 queues, quantum 1514 B, CoDel 5 ms / 100 ms",
        [f'{_Q}={{ type = "fq_codel", limit = "200pkts" }}'],
        "",
    ),
    "pie": (
        "PIE (RFC 8033), target 15 ms, t_update 15 ms, burst allowance 150 ms",
        [f'{_Q}={{ type = "pie", limit = "200pkts" }}'],
        "",
    ),
}
BASELINE = "rio"
#: the senders compared, in this order, where the core has them
SENDERS = ("reno", "cubic", "bbr")
METRICS = ("qoslab.studies.modern_aqm.study:run_metrics",)


def senders() -> list[str]:
    """The congestion controls of :data:`SENDERS` this build of the core accepts."""
    choices = tcp_variants()
    return [s for s in SENDERS if s in choices]


def scenario(mechanism: str, sender: str, overrides: list[str]) -> Scenario:
    """The mixed-traffic scenario with ``mechanism`` at the bottleneck and ``sender`` for every
    TCP flow (the long flows and the web transfers)."""
    return mix.mix_scenario(
        mechanism,
        [f"tcp.variant={sender}", *overrides],
        mechanisms=MECHANISMS,
        name=f"modern-aqm-{mechanism}-{sender}",
    )


def run_metrics(res: Result) -> dict[str, float]:
    """``mixed-traffic``'s metrics, the bottleneck's mean queueing delay and the long flows'
    fairness against their contracts and delay tail."""
    out = mix.run_metrics(res)
    links = res.links
    b = links[(links["link_name"] == "bottleneck") & (links["direction"] == "ab")].iloc[0]
    admitted = float(b["window_admitted"])
    out["queue_delay_mean_s"] = float(b["window_wait_ns"]) / admitted / 1e9 if admitted else float("nan")
    f = res.flows
    longs = f[f["name"].str.startswith("long")]
    ratios = longs["throughput_bps"].to_numpy(float) / mix.CONTRACT_BPS
    out["long_contract_jain"] = float(jain_index(ratios))
    out["long_delay_p99_s"] = float(longs["delay_p99_s"].mean())
    return out


def plan(opts: Options) -> list[Sweep]:
    short = ["duration=20s", "measurement.start=5s", "measurement.end=20s"] if opts.quick else []
    mechs = ["droptail", "rio", "codel", "fq_codel", "pie"] if opts.quick else list(MECHANISMS)
    return [
        Sweep(
            sender,
            [({"mechanism": m, "sender": sender}, scenario(m, sender, short)) for m in mechs],
            opts.seeds,
            f"The mixed-traffic scenario with {sender} senders ("
            + ("20 s, measured 5-20 s" if opts.quick else "60 s, measured 10-60 s")
            + ") and each mechanism at the bottleneck: "
            + "; ".join(f"{m}: {MECHANISMS[m][0]}" for m in mechs)
            + ".",
            METRICS,
        )
        for sender in senders()
    ]


_SHOWN = (
    ("long_contract_ratio_mean", "long flows: throughput / contract, mean", 1.0),
    ("long_contract_ratio_min", "long flows: throughput / contract, worst", 1.0),
    ("long_contract_jain", "long flows: Jain's index of throughput / contract", 1.0),
    ("queue_delay_mean_s", "bottleneck queueing delay, mean (ms)", 1e-3),
    ("voice_delay_p50_s", "voice one-way delay, median (ms)", 1e-3),
    ("voice_delay_p99_s", "voice one-way delay, p99 (ms)", 1e-3),
    ("voice_delay_p999_s", "voice one-way delay, p99.9 (ms)", 1e-3),
    ("long_delay_p99_s", "long flows' one-way delay, p99 (ms)", 1e-3),
    ("fct_s_mean_<100KB", "web FCT < 100 KB, mean (ms)", 1e-3),
    ("utilization", "bottleneck utilisation", 1.0),
)


def analyse(ctx: Context) -> None:
    for sender in senders():
        if sender in ctx.sweeps:
            _analyse_sender(ctx, sender)


def _analyse_sender(ctx: Context, sender: str) -> None:
    """The tables and figure of one sender's sweep."""
    runs = ctx.runs(sender)
    mechs = [m for m in MECHANISMS if m in set(runs["mechanism"])]

    def per_seed(mech: str, metric: str) -> pd.Series:
        r = runs[runs["mechanism"] == mech]
        return pd.Series(r[metric].to_numpy(float), index=r["seed"].to_numpy(int))

    keep = ["mechanism", "sender", "seed", "scenario", "scenario_sha256", *[m for m, _, _ in _SHOWN]]
    write_csv(runs[keep].sort_values(["mechanism", "seed"]), ctx.out / f"{sender}-runs.csv")
    ctx.files.append(ctx.out / f"{sender}-runs.csv")
    df = mix.comparison_rows(per_seed, mechs, _SHOWN, BASELINE)
    prov = ctx.provenance([sender])
    df["version"] = ctx.version
    ctx.table(
        f"{sender}-summary",
        df,
        title=f"{sender} senders: contracts, queueing delay and utilisation per mechanism",
        columns={"quantity": "quantity", **{m: m for m in mechs}},
        caption=f"Means over seeds with 95 % CIs (every run: `{sender}-runs.csv`). {prov}.",
    )
    ctx.table(
        f"{sender}-paired",
        df,
        title=f"{sender} senders: each mechanism minus RIO, paired over seeds",
        columns={"quantity": "quantity", **{f"{m}_vs_rio": m for m in mechs if m != BASELINE}},
        caption=f"Mean per-seed difference from RIO-C and its 95 % CI (paired t). {prov}.",
    )

    def group(metric: str, scale: float) -> list[Any]:
        return mix.mean_bars(per_seed, mechs, [(metric, "mean over seeds")], scale)

    # the TCP model the senders run in: a model's artefact must not pass for the algorithm's
    flavour = (
        "the Linux kernel's TCP model (tcp.flavour linux)"
        if ctx.options.tcp_flavour == "linux"
        else "ns-2's one-way TCP agents (tcp.flavour ns2)"
    ) + (f", {ctx.options.timing} timing" if ctx.options.timing else "")
    fig = panels(
        [
            [
                Panel(
                    group("long_contract_ratio_min", 1.0),
                    title="worst long flow: throughput / contract",
                    xlabel="mechanism",
                    ylabel="ratio",
                    categories=mechs,
                    refs=[Ref(1.0, "contract", {"color": "red", "ls": "--", "lw": 1.0})],
                    bounds=(0.0, None),
                )
            ],
            [
                Panel(
                    group("queue_delay_mean_s", 1e-3),
                    title="bottleneck queueing delay, mean",
                    xlabel="mechanism",
                    ylabel="ms",
                    categories=mechs,
                )
            ],
            [
                Panel(
                    group("voice_delay_p99_s", 1e-3),
                    title="voice one-way delay, p99",
                    xlabel="mechanism",
                    ylabel="ms",
                    categories=mechs,
                )
            ],
        ],
        title="AF mechanisms and today's AQMs, mixed traffic, 10 Mbps bottleneck\n"
        f"{sender} senders in {flavour}",
        panel_size=(7.5, 2.6),  # one panel a row: readable at the page's column width
    )
    ctx.figure(
        f"{sender}-overview",
        fig,
        title=f"{sender} senders ({flavour}): contracts, queueing delay and voice delay per mechanism",
        sweeps=[sender],
        caption=f"Bars: means over seeds with 95 % CIs; dashed: the contract. Senders: {sender} in "
        f"{flavour}.",
    )


register(
    Experiment(
        name="modern-aqm",
        title="The studies' AF mechanisms beside CoDel, FQ-CoDel and PIE, under Reno, CUBIC and BBR",
        paper="issue 22; mechanisms from `../shared/papers/`, AQMs from RFC 8289, 8290 and 8033",
        summary=(
            "The mixed-traffic topology (web mix, four contracted long flows, EF voice) with every AF "
            "mechanism of the studies, RED and tail drop, and CoDel, FQ-CoDel and PIE at the "
            "bottleneck, under each TCP congestion control the core has: fairness against contracts, "
            "queueing delay percentiles and utilisation, compared with RIO on paired seeds."
        ),
        plan=plan,
        analyse=analyse,
        seeds=10,
        quick_seeds=3,
        window=Window(
            False,
            "our own study (issue 22), no paper: 60 s measured from 10 s (quick: 20 s from 5 s)",
        ),
        own_senders=True,
    )
)
