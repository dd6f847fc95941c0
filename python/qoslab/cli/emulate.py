"""``qoslab emulate``: a scenario through the kernel (NFQUEUE link daemon, real TCP)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from qoslab.cli.app import app
from qoslab.runs.run_command import fail as _fail
from qoslab.runs.run_command import load as _load


class _EmuFlowRow:  # the columns of an emulated run's flows table that `emulate` prints
    name: str
    throughput_bps: float
    green_packets: int
    yellow_packets: int
    red_packets: int
    dropped_packets: int


class _LateSourceRow:  # EmuResult.late_sources()
    name: str
    send_slip_max_s: float
    late_sends: int


@app.command()
def emulate(
    scenario: Annotated[Path | None, typer.Argument(help="Scenario file (TOML).")] = None,
    duration: Annotated[
        float | None, typer.Option(help="Real seconds to run (default: the scenario's duration).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Seed (start times, RED/TSW draws; default: the scenario's).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write summary.json and CSV tables here.")] = None,
    compare: Annotated[
        bool, typer.Option("--compare", help="Also simulate it and print both side by side.")
    ] = False,
    cc: Annotated[
        str | None,
        typer.Option(
            "--cc",
            help="Congestion control of the TCP senders: reno, cubic or bbr (default: the scenario's "
            "tcp.variant, which it must match).",
        ),
    ] = None,
    window_clamp: Annotated[
        bool,
        typer.Option("--window-clamp", help="Receivers clamp their window at the scenario's TCP window."),
    ] = False,
    cleanup: Annotated[
        bool,
        typer.Option("--cleanup", help="Only remove what emulation runs whose process is gone left behind."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="With --cleanup: also tear down runs that are still alive.")
    ] = False,
) -> None:
    """Run a scenario on real Linux hosts (network namespaces, kernel TCP) with qoslab's own
    conditioners and queues deciding each packet's fate (root; see docs/emulation.md)."""
    from rich.console import Console
    from rich.table import Table

    from qoslab import emulation as emu
    from qoslab.report.frames import typed_rows

    con = Console()
    if cleanup:
        if os.geteuid() != 0:
            _fail("emulation cleanup needs root")
        try:
            removed = emu.cleanup_stale(all_runs=force)
        except emu.EmulationError as e:
            _fail(str(e))
        con.print("removed: " + (", ".join(removed) if removed else "nothing (no leftovers)"))
        return
    if force:
        _fail("--force goes with --cleanup")
    if scenario is None:
        _fail("a scenario file is required (or --cleanup)")
    if cc is not None and cc not in emu.CONGESTION_CONTROLS:
        _fail(f"--cc: expected one of {', '.join(emu.CONGESTION_CONTROLS)}, got {cc!r}")
    sc = _load(scenario, set_)
    try:
        cc = cc or emu.scenario_cc(sc)
    except emu.EmulationError as e:
        _fail(str(e))
    try:
        res = emu.run(
            sc, seed, duration_s=duration, out=out, cc=cc, window_clamp=window_clamp, log=lambda m: con.log(m)
        )
    except emu.EmulationError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted (everything the run created was removed)", 130)
    if compare:
        from qoslab.runs.simulate import run as run_sim

        sim = run_sim(res.scenario, res.seed)
        t = Table(title=f"{sc.name}: simulated vs emulated ({cc}), seed {res.seed}")
        for c in ("quantity", "simulated", "emulated"):
            t.add_column(c, justify="right" if c != "quantity" else "left")
        for row in emu.compare_table(sim, res):
            t.add_row(*row)
        con.print(t)
    else:
        t = Table(title=f"{sc.name} emulated ({cc}), seed {res.seed}")
        for c in ("flow", "throughput (kbps)", "green", "yellow", "red", "drops"):
            t.add_column(c, justify="right")
        for f in typed_rows(res.flows, _EmuFlowRow):
            t.add_row(
                f.name,
                f"{f.throughput_bps / 1e3:.1f}",
                str(f.green_packets),
                str(f.yellow_packets),
                str(f.red_packets),
                str(f.dropped_packets),
            )
        con.print(t)
        con.print(f"Jain index {res.fairness_index:.4f}")
    lat = res.lateness()
    if len(lat):
        con.print(
            f"release lateness over {int(lat['count'].sum())} packets: mean "
            f"{(lat['mean_us'] * lat['count']).sum() / max(lat['count'].sum(), 1):.0f} us, worst p99 "
            f"{lat['p99_us'].max():.0f} us, max {lat['max_us'].max():.0f} us"
        )
    for ls in typed_rows(res.late_sources(), _LateSourceRow):
        # a busy host delayed the source; its catch-up burst is not the scenario's arrivals
        con.print(
            f"[yellow]source of {ls.name} sent {ls.late_sends} packets more than 1 ms late (worst "
            f"{ls.send_slip_max_s * 1e3:.1f} ms): its arrivals differ from the simulated ones[/]"
        )
    if out is not None:
        con.print(f"wrote {out}/summary.json and CSV tables")
