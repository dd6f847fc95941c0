"""One ``qoslab bench`` call (:func:`main`): each workload's figures (:func:`measure`: the
core in a fresh worker, the whole processes and the reference simulators in alternating
rounds), the cost per hop and the guards, the tables and the ``--json`` file. The figures are
described in :mod:`qoslab.bench`."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab import _core
from qoslab.bench import guards as bench_guards
from qoslab.bench import linux as bench_linux
from qoslab.bench.cache import described_caches, event_loop_counts
from qoslab.bench.hops import HOP_COST_BASE, PAIRS, SLOW_CORE_S, hop_costs, pair_with_base
from qoslab.bench.references import Reference, ns3_program, prepare_ns2, prepare_ns3
from qoslab.bench.steady import after_warmup
from qoslab.bench.workloads import SETUP_DURATION, WORKLOADS, Workload, measure_core, setup_only
from qoslab.runs import huge_pages

if TYPE_CHECKING:
    from rich.console import Console


def _timed(cmd: Sequence[str], cwd: Path, timeout: float) -> tuple[float | None, str]:
    """Wall time of ``cmd`` as a whole process, or None and why (one line) if it failed or
    timed out; qoslab's own and the references alike with huge pages asked for
    (:mod:`qoslab.runs.huge_pages`)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            list(cmd),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=huge_pages.child_environment(),
        )
    except subprocess.TimeoutExpired:
        return None, f"took over {timeout:g} s"
    if p.returncode != 0:
        last = (p.stderr or p.stdout).decode(errors="replace").strip().splitlines()
        return None, f"exit code {p.returncode}" + (f": {last[-1][:200]}" if last else "")
    return time.perf_counter() - t0, ""


def _median(xs: list[float | None]) -> float | None:
    ok = [x for x in xs if x is not None]
    return statistics.median(ok) if ok and len(ok) == len(xs) else None


def _qoslab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "qoslab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "qoslab.entry"]


def measure(
    w: Workload,
    *,
    repeat: int = 5,
    ns2: bool = True,
    ns2_all: bool = False,
    ns3: bool = True,
    ns3_all: bool = False,
    instructions: bool = False,
    timeout: float = 900.0,
    log: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    """Every figure of one workload (see the module's docstring)."""
    sc = w.build()
    row: dict[str, Any] = {
        "workload": w.name,
        "flows": len(sc.resolved["flows"]),
        "warmup_note": w.warmup_note,
    }
    log(f"{w.name}: qoslab core …")
    row["qoslab_core"] = measure_core(w.name)
    row["qoslab_core_half_duration"] = measure_core(w.name, 0.5)
    setup = measure_core(w.name, 0.0)
    row["qoslab_core_setup"] = setup
    m = setup["memory_bytes"]
    row["bytes_per_flow"] = (m["links"] + m["flows"] + m["conditioners"]) / max(row["flows"], 1)
    row["bytes_per_packet_in_flight"] = m["packet_slot"] + m["line_entry"]
    row["optional_note"] = w.optional_note
    row["default_note"] = w.default_note
    if w.steady:
        row["warmup"] = row["qoslab_core"]["warmup"]
        row["after_warmup"] = after_warmup(row["qoslab_core"], row["qoslab_core_half_duration"], row["flows"])
    with tempfile.TemporaryDirectory(prefix="qoslab-bench-") as tmp:
        d = Path(tmp)
        (d / "full.toml").write_text(sc.text)
        (d / "setup.toml").write_text(setup_only(sc).text)
        ref_sc = w.reference() if w.reference is not None else sc
        refs = [prepare_ns2(w, ref_sc, d, ns2, ns2_all), prepare_ns3(w, ref_sc, d, ns3, ns3_all)]
        _alternate(w.name, row, refs, d, repeat, timeout, log)
    q = row["qoslab_core_s"]
    for r in refs:
        ok = not r.note
        whole = _median(r.whole_s) if ok else None
        rsetup = _median(r.setup_s) if ok else None
        core = max(whole - rsetup, 0.0) if whole is not None and rsetup is not None else None
        row[f"{r.key}_note"] = r.note
        row[f"{r.key}_whole_s"] = whole
        row[f"{r.key}_setup_s"] = rsetup
        row[f"{r.key}_core_s"] = core
        row[f"{r.key}_core_ratio"] = core / q if core and q else None
        row[f"{r.key}_whole_ratio"] = (
            whole / row["qoslab_whole_s"] if whole and row["qoslab_whole_s"] else None
        )
    if instructions:
        log(f"{w.name}: callgrind …")
        hops = row["qoslab_core"]["hops"]
        # about 2 M hops under callgrind (~50× slower than native)
        row["callgrind"] = event_loop_counts(w.name, min(1.0, 2e6 / max(hops, 1)))
    return row


def _alternate(
    name: str,
    row: dict[str, Any],
    refs: list[Reference],
    d: Path,
    repeat: int,
    timeout: float,
    log: Callable[[str], None],
) -> None:
    """The alternating rounds in ``d``: qoslab's core (a fresh worker), qoslab's whole process,
    each reference's, qoslab's start-up, each reference's setup. ``repeat`` rounds, one when
    qoslab's core or a reference's whole process takes over 30 s or a minute (qoslab's core is
    then still run ``repeat`` times unless it is the slow one); a reference that fails is
    dropped with a note. A backbone workload no reference runs has no rounds: its whole
    process (minutes, and its series of every link direction written) would be compared with
    nothing. Fills ``row``'s qoslab figures and ``refs``' times."""
    q = _qoslab_cmd()
    cores: list[float] = []
    qw: list[float | None] = []
    qs: list[float | None] = []
    # a backbone workload (minutes a run) is measured once, like a slow one
    slow = row["qoslab_core"]["wall_s"] >= SLOW_CORE_S or row.get("after_warmup") is not None
    reps = 1 if slow else repeat
    if row.get("after_warmup") is not None and all(r.note for r in refs):
        reps = 0
    cores.append(row["qoslab_core"]["wall_s"])
    for i in range(repeat):
        if i >= reps:
            break
        log(f"{name}: whole processes, round {i + 1}/{reps} …")
        if i > 0:
            cores.append(measure_core(name)["wall_s"])
        qw.append(_timed(q + ["run", "full.toml", "--out", f"out{i}"], d, timeout)[0])
        for r in refs:
            if r.note:
                continue
            t, why = _timed(r.full, d, timeout)
            r.whole_s.append(t)
            if t is None:
                r.note = f"failed: {why}"
            elif t > 60:
                reps = min(reps, i + 1)
        qs.append(_timed(q + ["run", "setup.toml"], d, timeout)[0])
        for r in refs:
            if r.note:
                continue
            t, why = _timed(r.setup, d, timeout)
            r.setup_s.append(t)
            if t is None:
                r.note = f"failed on the setup-only input: {why}"
    # A reference that takes over a minute cuts the rounds to one; qoslab's core, seconds a
    # run, still gets its `repeat` runs (one alone, the 2,000-flow workload's once took 2.04 s
    # against 1.64 s for qoslab's whole process in the same round: a slow moment of the machine).
    if not slow:
        while len(cores) < repeat:
            log(f"{name}: qoslab core, run {len(cores) + 1}/{repeat} …")
            cores.append(measure_core(name)["wall_s"])
    row["qoslab_core_s"] = statistics.median(cores)
    row["qoslab_core_runs"] = len(cores)
    row["qoslab_whole_s"] = _median(qw)
    row["qoslab_startup_s"] = _median(qs)
    row["repeats"] = len(qw)


_REFS = (("ns2", "ns-2"), ("ns3", "ns-3"))


def _ratio(x: float | None) -> str:
    return f"{x:.1f}×" if x else "n/a"


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return fmt.format(x) if x is not None else "n/a"


def main(
    only: list[str] | None = None,
    use_ns2: bool = True,
    *,
    repeat: int = 5,
    ns2_all: bool = False,
    use_ns3: bool = True,
    ns3_all: bool = False,
    instructions: bool = False,
    json_path: Path | None = None,
    pairs: int = PAIRS,
    linux_rounds: int = bench_linux.ROUNDS,
    backbone: bool = False,
) -> list[dict[str, Any]]:
    """Measures the workloads (``only``: these, by name; ValueError for an unknown one), pairs
    each with :data:`HOP_COST_BASE` in ``pairs`` alternating rounds when the call measures it
    (:func:`qoslab.bench.hops.paired_hop_costs`), measures the linux flavour
    (:func:`qoslab.bench.linux.in_call`), prints the tables and writes every figure to
    ``json_path``; returns the rows. A workload with an ``optional_note`` runs only when named
    in ``only`` or with ``backbone``."""
    from rich.console import Console

    from qoslab.ns2 import ns2_available

    con = Console()
    if not con.is_terminal:  # a log or a pipe: the whole table, unwrapped
        con = Console(width=200)
    known = [w.name for w in WORKLOADS] + [bench_linux.WORKLOAD]
    for n in only or []:
        if n not in known:
            raise ValueError(f"unknown workload {n!r} (known: {', '.join(known)})")
    refs = {"ns2": str(ns2_available()) if use_ns2 and ns2_available() else None, "ns3": None}
    if use_ns3:
        con.print("[dim]ns-3 program …[/dim]")
        exe, _ = ns3_program()
        refs["ns3"] = str(exe) if exe else None
    rows = []
    for w in selected(only, backbone):
        rows.append(
            measure(
                w,
                repeat=repeat,
                ns2=use_ns2,
                ns2_all=ns2_all,
                ns3=use_ns3,
                ns3_all=ns3_all,
                instructions=instructions,
                log=lambda s: con.print(f"[dim]{s}[/dim]"),
            )
        )
    hop_costs(rows)
    pair_with_base(rows, pairs, measure_core, log=lambda s: con.print(f"[dim]{s}[/dim]"))
    linux = bench_linux.in_call(only, linux_rounds, log=lambda s: con.print(f"[dim]{s}[/dim]"))
    guards = bench_guards.evaluate(rows) + bench_guards.evaluate_linux(bench_linux.POINTS, linux)
    doc = {
        "version": _core.__version__,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "caches": described_caches(),
        "huge_pages": huge_pages.described(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "references": refs,
        "workloads": rows,
        "linux_flavour": linux,
        "guards": guards,
        "guards_verdict": bench_guards.verdict(guards),
    }
    if json_path is not None:
        json_path.write_text(json.dumps(doc, indent=2) + "\n")
    if rows:
        _print_tables(con, rows)
    bench_linux.print_table(con, linux)
    bench_guards.print_table(con, guards)
    if json_path is not None:
        con.print(f"wrote {json_path}")
    return rows


def selected(only: Sequence[str] | None, backbone: bool = False) -> list[Workload]:
    """The workloads a call measures: those named in ``only`` (with ``backbone``, the backbone
    ones too), else the default ones and, with ``backbone``, the optional ones."""
    if only:
        return [w for w in WORKLOADS if w.name in only or (backbone and w.steady)]
    return [w for w in WORKLOADS if backbone or not w.optional_note]


def _paired(r: dict[str, Any]) -> str:
    """The paired ratio's median and range, as the table shows it."""
    med, xs = r["hop_cost_ratio_paired"], r["hop_cost_pairs"]
    if med is None:
        return "n/a"
    return f"{med:.2f}×" + (f" ({min(xs):.2f}–{max(xs):.2f})" if xs else "")


def _print_tables(con: Console, rows: list[dict[str, Any]]) -> None:
    """The speed table, the memory and per-hop table, and the notes under them."""
    from rich.table import Table

    t = Table(title=f"qoslab {_core.__version__} against ns-2 and ns-3 (one core each, seed 1)")
    cols = ["workload", "core s", "M hops/s"]
    cols += [c for _, label in _REFS for c in (f"{label} core s", "×")]
    cols += ["whole s"] + [c for _, label in _REFS for c in (f"{label} whole s", "×")] + ["start-up s"]
    for c in cols:
        t.add_column(c, justify="right")
    for r in rows:
        q = r["qoslab_core"]
        cells = [r["workload"], f"{r['qoslab_core_s']:.3f}", f"{q['hops'] / r['qoslab_core_s'] / 1e6:.1f}"]
        cells += [c for k, _ in _REFS for c in (_f(r[f"{k}_core_s"]), _ratio(r[f"{k}_core_ratio"]))]
        cells.append(_f(r["qoslab_whole_s"]))
        cells += [c for k, _ in _REFS for c in (_f(r[f"{k}_whole_s"]), _ratio(r[f"{k}_whole_ratio"]))]
        cells.append(_f(r["qoslab_startup_s"]))
        t.add_row(*cells)
    con.print(t)
    con.print(
        "core: qoslab's simulation call (a fresh worker); the reference's run less its setup (whole − a "
        f"run of the input cut to {SETUP_DURATION}). whole: `qoslab run FILE --out DIR`, `ns FILE.tcl` and "
        "the ns-3 program on its JSON input. Medians of alternating runs. ×: the reference's time over "
        f"qoslab's (qoslab faster by ×N). start-up: `qoslab run` of the scenario cut to {SETUP_DURATION}."
    )
    hop = Table(title="cost per hop (qoslab)")
    base_flows = [r["flows"] for r in rows if r["workload"] == r["hop_cost_base"]]
    base = f"× {base_flows[0]:,} flows" if base_flows else "× base"
    for col in ("workload", "ns/hop", base, "net ns/hop", base, "paired ×", "net paired ×", "events/hop"):
        hop.add_column(col, justify="right")
    for r in rows:
        q = r["qoslab_core"]
        hop.add_row(
            r["workload"],
            _f(r["ns_per_hop"], "{:.1f}"),
            _f(r["hop_cost_ratio"], "{:.2f}×"),
            _f(r["ns_per_hop_net"], "{:.1f}"),
            _f(r["hop_cost_ratio_net"], "{:.2f}×"),
            _paired(r),
            _f(r["hop_cost_ratio_paired_net"], "{:.2f}×"),
            f"{q['events'] / max(q['hops'], 1):.2f}",
        )
    con.print(hop)
    con.print(
        "ns/hop: the core's median time over its packet-hops; net: less the setup-only run's time and "
        f"hops; ×: against {HOP_COST_BASE} in this call (n/a when it was not measured); paired: the median "
        "(and range) over rounds of one run of each, alternating, of the two runs' ratio (seconds apart, "
        "where the medians are tens of seconds or minutes)."
    )
    m = Table(title="memory (qoslab)")
    for col in ("workload", "state MB (T/2 → T)", "series MB", "B/flow", "B/packet", "peak RSS MB (T/2 → T)"):
        m.add_column(col, justify="right")
    for r in rows:
        q, h = r["qoslab_core"], r["qoslab_core_half_duration"]
        m.add_row(
            r["workload"],
            f"{h['memory_bytes']['state'] / 2**20:.1f} → {q['memory_bytes']['state'] / 2**20:.1f}",
            f"{q['memory_bytes']['series'] / 2**20:.1f}",
            f"{r['bytes_per_flow']:,.0f}",
            f"{r['bytes_per_packet_in_flight']:,.0f}",
            f"{h['peak_rss_mb']:.0f} → {q['peak_rss_mb']:.0f}",
        )
    con.print(m)
    con.print(
        "state: the core's memory but the time series (allocated capacity), at half and at the full "
        "duration; B/flow: links, flow and endpoint state over the flows; B/packet: per packet in flight; "
        "peak RSS: the whole worker (Python, the scenario's parse)."
    )
    _print_after_warmup(con, rows)
    for r in rows:
        if r.get("warmup_note"):
            con.print(f"{r['workload']}: {r['warmup_note']}")
        if r["hop_cost_pairs_note"]:
            con.print(f"{r['workload']}: paired rounds: {r['hop_cost_pairs_note']}")
    for k, label in _REFS:  # one line per reason, naming the workloads it applies to
        by_note: dict[str, list[str]] = {}
        for r in rows:
            if r[f"{k}_note"]:
                by_note.setdefault(r[f"{k}_note"], []).append(r["workload"])
        for note, names in by_note.items():
            con.print(f"{label} n/a on {', '.join(names)}: {note}")
    for r in rows:
        cg = r.get("callgrind")
        if cg and cg.get("note"):
            con.print(f"{r['workload']}: instructions n/a: {cg['note']}")
        elif cg:
            con.print(
                f"{r['workload']}: {cg['instructions_per_hop']:.0f} instructions, "
                f"{cg['d1_misses_per_hop']:.1f} L1 data misses, {cg['ll_misses_per_hop']:.2f} last-level "
                f"misses ({cg['ll_read_misses_per_hop']:.2f} reads) per hop in the event loop (callgrind, "
                f"{cg['scale']:.3g} of the duration; last level {cg['last_level']})"
            )


def _print_after_warmup(con: Console, rows: list[dict[str, Any]]) -> None:
    """The backbone workloads' figures after their warm-up (:mod:`qoslab.bench.steady`)."""
    from rich.table import Table

    steady = [r for r in rows if r.get("after_warmup") is not None]
    if not steady:
        return
    t = Table(title="after the warm-up (backbone workloads, T/2 → T)")
    cols = ("workload", "warm-up s (queue, throughput)", "use after", "ns/hop", "× 200 flows", "paired ×")
    for col in cols + ("state MB (T/2 → T)", "B/flow at T"):
        t.add_column(col, justify="right")
    for r in steady:
        a, w = r["after_warmup"], r["warmup"]
        t.add_row(
            r["workload"],
            f"{_f(w['end_s'], '{:g}')} ({_f(w['queue_s'], '{:g}')}, {_f(w['throughput_s'], '{:g}')})",
            _f(w["utilisation_after"], "{:.1%}"),
            _f(a["ns_per_hop"], "{:.1f}"),
            _f(a.get("hop_cost_ratio"), "{:.2f}×"),
            _paired(r),
            f"{a['state_bytes_half'] / 2**20:.1f} → {a['state_bytes'] / 2**20:.1f}",
            _f(a["state_per_flow"], "{:,.0f}"),
        )
    con.print(t)
    con.print(
        "warm-up: MSER-5 on the bottleneck's queue and the aggregate throughput (1 s samples), the "
        "later; use after: the bottleneck's mean utilisation after it; ns/hop: the core's time from T/2 "
        "to T (its progress callback) over the hops from T/2 to T (the full run's less the half run's); "
        f"×: against {HOP_COST_BASE}'s net ns/hop; paired: at most 3 rounds of a full run of each."
    )
    for r in steady:
        a = r["after_warmup"]
        for note in (a["note"], a["queue_note"], r.get("default_note"), r.get("optional_note")):
            if note:
                con.print(f"{r['workload']}: {note}")
