"""The comparison of :mod:`qoslab.emulation.validation`'s simulated runs with the kernel's: per grid
point the kernel's mean and spread over its kept repetitions, the simulated mean over seeds,
a verdict per target, a JSON, a markdown table and a figure per family.

A target holds when the simulated mean lies within the target's tolerance of the kernel's
mean, or within two of the kernel's standard deviations of it when its repetitions spread
wider than the tolerance (a difference the kernel's own run-to-run spread cannot tell from
none). Tolerances (issue 54): each flow's share within 10 % of the kernel's, Jain's index
within 0.03, the bottleneck's mean queueing delay within 15 %, the retransmissions (all flows,
whole run) within 25 %.

Where the kernel's spread is what lets a target hold, the rule says only that the kernel's runs
cannot tell the simulated mean from theirs. So every target is also judged on the means alone
(``verdict_sem``): it holds when the difference of the means lies within the tolerance or within
two standard errors of that difference (the kernel's and the simulated means' standard errors
combined), that is, when the runs cannot tell the two means apart by more than the tolerance.
The rule above stays the grid's verdict; the tables give both. For points of several flows the
comparison also gives Welch's two-sided p-value that the kernel's runs and the simulated seeds
have the same mean Jain index (``jain_welch_p``; in the table beside Jain's verdict).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from qoslab.stats import estimate, welch_p

#: Relative tolerances of the targets (share: of each flow's share).
SHARE_TOL = 0.10
JAIN_TOL = 0.03
QDELAY_TOL = 0.15
RETRANS_TOL = 0.25
#: Points with an AQM: the bottleneck's congestion signals (its drops and ECN marks, whole run)
#: within 25 %, as the retransmissions.
SIGNALS_TOL = 0.25
#: Kept kernel repetitions a verdict needs.
MIN_REPS = 3


def _ms(x: list[float]) -> tuple[float, float]:
    a = np.asarray(x, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def holds(sim: float, kmean: float, ksd: float, tol: float) -> bool:
    """``sim`` within ``tol`` (absolute) of ``kmean``, or within 2 ``ksd`` of it."""
    return bool(abs(sim - kmean) <= max(tol, 2 * ksd) + 1e-12)


def holds_sem(sim: tuple[float, float], ns: int, ker: tuple[float, float], nk: int, tol: float) -> bool:
    """The means (``(mean, sd)`` over ``ns`` seeds and ``nk`` kernel runs) differ by at most
    ``tol`` (absolute) or by at most two standard errors of their difference."""
    se = float(np.hypot(sim[1] / np.sqrt(max(ns, 1)), ker[1] / np.sqrt(max(nk, 1))))
    return bool(abs(sim[0] - ker[0]) <= max(tol, 2 * se) + 1e-12)


def _judge(s: dict[str, Any], k: dict[str, Any], key: str, tol: float, *, relative: bool) -> bool:
    km, ksd = k[key]
    return holds(s[key][0], km, ksd, tol * km if relative else tol)


def _judge_sem(s: dict[str, Any], k: dict[str, Any], key: str, tol: float, *, relative: bool) -> bool:
    return holds_sem(s[key], s["n"], k[key], k["n"], tol * k[key][0] if relative else tol)


def _stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    n_flows = len(runs[0]["flows"])
    per_min = [
        float(sum(f["timeouts"] for f in r["flows"])) for r in runs
    ]  # whole-run counts; the run length is the same on both sides
    return {
        "n": len(runs),
        "share": [_ms([r["flows"][i]["share"] for r in runs]) for i in range(n_flows)],
        "share_runs": [[r["flows"][i]["share"] for r in runs] for i in range(n_flows)],
        "jain": _ms([r["jain"] for r in runs]),
        "qdelay_ms": _ms([r["qdelay_ms"] for r in runs]),
        "utilization": _ms([r["utilization"] for r in runs]),
        "retransmits": _ms([sum(f["retransmits"] for f in r["flows"]) for r in runs]),
        "retransmits_flow": [_ms([r["flows"][i]["retransmits"] for r in runs]) for i in range(n_flows)],
        "timeouts": _ms(per_min),
        "timeouts_flow": [_ms([r["flows"][i]["timeouts"] for r in runs]) for i in range(n_flows)],
        "drops": _ms([r["bottleneck_drops"] for r in runs]),
        **(
            {
                "signals": _ms([r["bottleneck_signals"] for r in runs]),
                "marks": _ms([r["bottleneck_marks"] for r in runs]),
            }
            if all("bottleneck_signals" in r for r in runs)
            else {}
        ),
    }


def compare(kpoint: dict[str, Any], spoint: dict[str, Any]) -> dict[str, Any]:
    """One point's kernel and simulated statistics and its verdicts (``None``: not judged)."""
    kept = [r for r in kpoint["runs"] if r["kept"]]
    k, s = _stats(kept), _stats(spoint["runs"])
    lat = [r["lateness"] for r in kept]
    enough = len(kept) >= MIN_REPS
    multi = len(k["share"]) > 1
    verdict: dict[str, bool | None] = {"share": None, "jain": None, "qdelay": None, "retransmits": None}
    by_sem: dict[str, bool | None] = dict(verdict)
    jain_p: float | None = None
    if enough:
        if multi:
            verdict["share"] = all(
                holds(sm, km, ksd, SHARE_TOL * km)
                for (km, ksd), (sm, _) in zip(k["share"], s["share"], strict=True)
            )
            by_sem["share"] = all(
                holds_sem(sf, s["n"], kf, k["n"], SHARE_TOL * kf[0])
                for kf, sf in zip(k["share"], s["share"], strict=True)
            )
            verdict["jain"] = _judge(s, k, "jain", JAIN_TOL, relative=False)
            by_sem["jain"] = _judge_sem(s, k, "jain", JAIN_TOL, relative=False)
            jains = ([r["jain"] for r in kept], [r["jain"] for r in spoint["runs"]])
            jain_p = welch_p(estimate(jains[0]), estimate(jains[1]))
            jain_p = jain_p if np.isfinite(jain_p) else None
        verdict["qdelay"] = _judge(s, k, "qdelay_ms", QDELAY_TOL, relative=True)
        verdict["retransmits"] = _judge(s, k, "retransmits", RETRANS_TOL, relative=True)
        if kpoint["point"].get("queue"):
            verdict["signals"] = _judge(s, k, "signals", SIGNALS_TOL, relative=True)
            by_sem["signals"] = _judge_sem(s, k, "signals", SIGNALS_TOL, relative=True)
        by_sem["qdelay"] = _judge_sem(s, k, "qdelay_ms", QDELAY_TOL, relative=True)
        by_sem["retransmits"] = _judge_sem(s, k, "retransmits", RETRANS_TOL, relative=True)
    return {
        "point": kpoint["point"],
        "kernel": k,
        "sim": s,
        "verdict": verdict,
        "verdict_sem": by_sem,
        "jain_welch_p": jain_p,
        "kernel_discarded": len(kpoint["runs"]) - len(kept),
        "kernel_stalled_kept": sum(1 for r in kept if r["stalled"]),
        "lateness_max_us": max((x["max_us"] for x in lat), default=float("nan")),
        "lateness_p99_us": max((x["p99_us"] for x in lat), default=float("nan")),
    }


def _pm(x: tuple[float, float], fmt: str = ".3f") -> str:
    return f"{x[0]:{fmt}} ± {x[1]:{fmt}}"


def _v(b: bool | None) -> str:
    return "—" if b is None else ("holds" if b else "**fails**")


def _p(p: float | None) -> str:
    """Welch's p of the Jain indices, where the point has one."""
    return "" if p is None else f" (p {p:.2f})"


def table(rows: list[dict[str, Any]], flavour: str) -> str:
    """The markdown table of every point (kernel mean ± sd over its kept runs, simulated mean
    ± sd over seeds); with a column of the bottleneck's congestion signals (drops and marks)
    where a point has an AQM."""
    aqm = any("signals" in c["verdict"] for c in rows)
    targets = ("share", "jain", "qdelay", "retransmits", *(("signals",) if aqm else ()))
    out = [
        f"| point | shares kernel | shares sim ({flavour}) | Jain kernel / sim | queue delay ms kernel / sim "
        "| retransmits kernel / sim | timeouts kernel / sim "
        + ("| drops + marks kernel / sim (marks) " if aqm else "")
        + "| verdicts share / Jain / delay / retr."
        + (" / signals" if aqm else "")
        + " | on the means (± 2 se) |",
        "|---|---|---|---|---|---|---|---|---|" + ("---|" if aqm else ""),
    ]
    for c in rows:
        k, s, v = c["kernel"], c["sim"], c["verdict"]
        m = c.get("verdict_sem") or {}
        ks = " / ".join(_pm(x) for x in k["share"])
        ss = " / ".join(_pm(x) for x in s["share"])
        signals = (
            f"| {_pm(k['signals'], '.0f')} / {_pm(s['signals'], '.0f')} "
            f"({k['marks'][0]:.0f} / {s['marks'][0]:.0f}) "
            if aqm
            else ""
        )
        out.append(
            f"| {c['point']['name']} | {ks} | {ss} | {_pm(k['jain'])} / {_pm(s['jain'])} "
            f"| {_pm(k['qdelay_ms'], '.1f')} / {_pm(s['qdelay_ms'], '.1f')} "
            f"| {_pm(k['retransmits'], '.0f')} / {_pm(s['retransmits'], '.0f')} "
            f"| {_pm(k['timeouts'], '.1f')} / {_pm(s['timeouts'], '.1f')} "
            + signals
            + f"| {_v(v['share'])} / {_v(v['jain'])}{_p(c.get('jain_welch_p'))} / {_v(v['qdelay'])} "
            f"/ {_v(v['retransmits'])}"
            + (f" / {_v(v.get('signals'))}" if aqm else "")
            + f" | {' / '.join(_v(m.get(t)) for t in targets)} |"
        )
    return "\n".join(out) + "\n"


def _errbar(ax: Any, x: list[float], ms: list[tuple[float, float]], dx: float, **kw: Any) -> None:
    xs = [a + dx for a in x]
    ax.errorbar(
        xs,
        [m for m, _ in ms],
        yerr=[2 * sd for _, sd in ms],
        capsize=3,
        marker="o",
        ms=4,
        linestyle="-",
        **kw,
    )


def _buffer_axis(ax: Any, bufs: list[float]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(bufs)
    ax.set_xticklabels([f"{b:g}" for b in bufs])
    ax.minorticks_off()
    ax.set_xlim(min(bufs) * 0.8, max(bufs) * 1.25)
    ax.set_xlabel("buffer (BDP)")


def figure(rows: list[dict[str, Any]], flavour: str, path: Path) -> None:
    """One family's figure; kernel runs as dots, means with ± 2 sd bars. Two flows or one: the
    first flow's share (or its retransmissions when alone) and the queue delay against the
    buffer. More flows (one point): each flow's share, against its RTT with each flow's
    retransmissions beside where the RTTs differ, against its number with the queue delay
    beside where they do not."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 3.2), dpi=90)
    a1, a2 = fig.subplots(1, 2)
    first = rows[0]
    multi = len(first["kernel"]["share"]) > 1
    if len(first["point"]["variants"]) > 2:
        # several flows: each flow's share and retransmissions, against its RTT where the RTTs
        # differ, else against its number
        c = first
        rtts = c["point"]["rtts_ms"]
        mixed = len(set(rtts)) > 1
        xs = list(rtts) if mixed else [float(i + 1) for i in range(len(rtts))]
        dx = 2.0 if mixed else 0.08
        for i, r in enumerate(xs):
            a1.scatter(
                [r - dx] * len(c["kernel"]["share_runs"][i]),
                c["kernel"]["share_runs"][i],
                s=10,
                color="C0",
                alpha=0.5,
            )
        _errbar(a1, xs, c["kernel"]["share"], -dx, color="C0", label="kernel (mean ± 2 sd)")
        _errbar(a1, xs, c["sim"]["share"], dx, color="C3", label=f"simulated, {flavour}")
        a1.axhline(1 / len(xs), color="grey", lw=0.5)
        xlabel = "base RTT (ms)" if mixed else "flow"
        a1.set_xlabel(xlabel)
        a1.set_ylabel("share of the bottleneck")
        if mixed:
            _errbar(a2, xs, c["kernel"]["retransmits_flow"], -dx, color="C0", label="kernel")
            _errbar(a2, xs, c["sim"]["retransmits_flow"], dx, color="C3", label="simulated")
            a2.set_xlabel(xlabel)
            a2.set_ylabel("retransmitted segments (run)")
        else:
            # flows of one RTT: the standing queue they keep together
            _errbar(a2, [0.0], [c["kernel"]["qdelay_ms"]], 0, color="C0", label="kernel")
            _errbar(a2, [1.0], [c["sim"]["qdelay_ms"]], 0, color="C3", label="simulated")
            a2.set_xticks([0.0, 1.0], ["kernel", f"simulated, {flavour}"])
            a2.set_xlim(-0.5, 1.5)
            a2.set_ylim(bottom=0)
            a2.set_ylabel("mean queueing delay (ms)")
            a1.set_xticks(xs)
    else:
        bufs = [c["point"]["buffer_bdp"] for c in rows]
        if multi:
            lead = first["point"]["variants"][0]
            for c, b in zip(rows, bufs, strict=True):
                ys = c["kernel"]["share_runs"][0]
                a1.scatter([b * 0.96] * len(ys), ys, s=10, color="C0", alpha=0.5)
            _errbar(
                a1, bufs, [c["kernel"]["share"][0] for c in rows], 0, color="C0", label="kernel (mean ± 2 sd)"
            )
            _errbar(
                a1,
                [b * 1.04 for b in bufs],
                [c["sim"]["share"][0] for c in rows],
                0,
                color="C3",
                label=f"simulated, {flavour}",
            )
            a1.set_ylabel(f"{lead} flow's share")
            a1.set_ylim(0, 1)
            a1.axhline(0.5, color="grey", lw=0.5)
        else:
            _errbar(
                a1,
                bufs,
                [c["kernel"]["retransmits"] for c in rows],
                0,
                color="C0",
                label="kernel (mean ± 2 sd)",
            )
            _errbar(
                a1,
                [b * 1.04 for b in bufs],
                [c["sim"]["retransmits"] for c in rows],
                0,
                color="C3",
                label=f"simulated, {flavour}",
            )
            a1.set_ylabel("retransmitted segments (run)")
        _buffer_axis(a1, bufs)
        _errbar(a2, bufs, [c["kernel"]["qdelay_ms"] for c in rows], 0, color="C0", label="kernel")
        _errbar(
            a2,
            [b * 1.04 for b in bufs],
            [c["sim"]["qdelay_ms"] for c in rows],
            0,
            color="C3",
            label="simulated",
        )
        _buffer_axis(a2, bufs)
        a2.set_ylabel("mean queueing delay (ms)")
    a1.legend(fontsize=10, loc="best")
    p0 = first["point"]
    rtts = sorted(set(p0["rtts_ms"]))
    rtt = f"{rtts[0]:g} ms" if len(rtts) == 1 else f"{rtts[0]:g}-{rtts[-1]:g} ms"
    vs = p0["variants"]
    who = f"{len(vs)} x {vs[0]}" if len(vs) > 1 and len(set(vs)) == 1 else " + ".join(vs)
    fig.suptitle(
        f"{who}, {p0['rate_mbps']:g} Mbit/s, RTT {rtt}, pfifo: kernel "
        f"({first['kernel']['n']} runs) vs simulated ({flavour}, {first['sim']['n']} seeds)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path)


def _update_page(page: Path, flavour: str, text: str) -> None:
    """Puts the table between ``<!-- table:FLAVOUR -->`` and ``<!-- /table:FLAVOUR -->`` in
    ``page`` (docs/validation/linux.md), when it has those markers."""
    if not page.is_file():
        return
    doc = page.read_text()
    start, end = f"<!-- table:{flavour} -->", f"<!-- /table:{flavour} -->"
    i, j = doc.find(start), doc.find(end)
    if i < 0 or j < i:
        return
    page.write_text(doc[: i + len(start)] + "\n" + text + doc[j:])


def write(
    out: Path,
    kernel: dict[str, Any],
    sims: dict[str, dict[str, Any]],
    flavour: str,
    say: Callable[[str], None],
    *,
    core: str | None,
) -> list[dict[str, Any]]:
    """Writes ``results-FLAVOUR.json``, ``table-FLAVOUR.txt`` (markdown; also put into the page
    ``OUT.md`` between its markers) and ``FAMILY-FLAVOUR.png`` to
    ``out``; returns the comparisons. ``core``: the fingerprint of the core that simulated
    ``sims``, recorded as ``fingerprint.core`` (None: not known, none recorded)."""
    rows = [compare(kernel["points"][name], sp) for name, sp in sims.items()]
    doc = {
        "flavour": flavour,
        "tolerances": {
            "share": SHARE_TOL,
            "jain": JAIN_TOL,
            "qdelay": QDELAY_TOL,
            "retransmits": RETRANS_TOL,
        },
        "rule": "holds when |sim - kernel mean| <= max(tolerance, 2 kernel sd)",
        "dctcp": kernel.get("dctcp", ""),
        **({"fingerprint": {"core": core}} if core else {}),
        "points": rows,
        "sim_runs": sims,
    }
    (out / f"results-{flavour}.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / f"table-{flavour}.txt").write_text(table(rows, flavour))
    _update_page(out.parent / f"{out.name}.md", flavour, table(rows, flavour))
    fams: dict[str, list[dict[str, Any]]] = {}
    for c in rows:
        fams.setdefault(c["point"]["family"], []).append(c)
    for fam in list(fams):
        # a family drawn against the buffer holds one set of flows; points of different flows
        # (the held-out grid's families) get a figure each
        shapes = {(tuple(c["point"]["variants"]), tuple(c["point"]["rtts_ms"])) for c in fams[fam]}
        if len(shapes) > 1 or (fams[fam][0]["point"].get("starts_s") and len(fams[fam]) > 1):
            for c in fams.pop(fam):
                fams[c["point"]["name"]] = [c]
    for fam, rs in fams.items():
        figure(rs, flavour, out / f"{fam}-{flavour}.png")
    say(table(rows, flavour))
    return rows
