"""``qoslab bench``: the workloads against ns-2 and ns-3 in the same call (the body is in
:mod:`qoslab.bench`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from qoslab.cli.app import app
from qoslab.runs.run_command import fail as _fail


@app.command()
def bench(
    workload: Annotated[list[str] | None, typer.Option(help="Run only these workloads.")] = None,
    no_ns2: Annotated[bool, typer.Option("--no-ns2", help="Do not run ns-2 even if present.")] = False,
    ns2_all: Annotated[
        bool, typer.Option("--ns2-all", help="Run ns-2 also on the workloads it is too slow for.")
    ] = False,
    no_ns3: Annotated[bool, typer.Option("--no-ns3", help="Do not run ns-3 even if present.")] = False,
    ns3_all: Annotated[
        bool, typer.Option("--ns3-all", help="Run ns-3 also on the workloads it is too slow for.")
    ] = False,
    repeat: Annotated[int, typer.Option(help="Whole-process runs per simulator (the median is shown).")] = 5,
    instructions: Annotated[
        bool,
        typer.Option(
            "--instructions", help="Also instructions and cache misses per hop in the event loop (callgrind)."
        ),
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every figure to this JSON file.")
    ] = None,
    pairs: Annotated[
        int,
        typer.Option(
            help="Rounds of each workload's core alternating with the 200-flow one's, for the cost "
            "per hop paired in time (0: none; only when the 200-flow workload is measured)."
        ),
    ] = 9,
    linux_rounds: Annotated[
        int,
        typer.Option(
            help="Rounds of the linux transport flavour against the ns2 flavour (workload linux-flavour)."
        ),
    ] = 5,
    backbone: Annotated[
        bool,
        typer.Option(
            "--backbone",
            help="Also the backbone workloads not run by default (50,000 flows at 10 Gb/s): minutes a run.",
        ),
    ] = False,
) -> None:
    """Measure qoslab against ns-2 and ns-3 on fixed workloads: core and whole process, start-up,
    memory."""
    from qoslab.bench.runner import main as bench_main

    if repeat < 1:
        _fail(f"--repeat must be at least 1, got {repeat}")
    if pairs < 0:
        _fail(f"--pairs must be at least 0, got {pairs}")
    if linux_rounds < 1:
        _fail(f"--linux-rounds must be at least 1, got {linux_rounds}")
    try:
        bench_main(
            workload or None,
            use_ns2=not no_ns2,
            repeat=repeat,
            ns2_all=ns2_all,
            use_ns3=not no_ns3,
            ns3_all=ns3_all,
            instructions=instructions,
            json_path=json_out,
            pairs=pairs,
            linux_rounds=linux_rounds,
            backbone=backbone,
        )
    except ValueError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {json_out}: {e}")
