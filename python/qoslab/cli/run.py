"""``qoslab run`` and ``qoslab check``: one scenario (the body is in :mod:`qoslab.runs.run_command`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from qoslab import _core
from qoslab.cli.app import app
from qoslab.cli.common import AllowPathOpt
from qoslab.runs import run_command
from qoslab.runs.run_command import echo_err


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[int | None, typer.Option(help="Run seed (default: the scenario's).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write summary.json and Parquet tables here.")] = None,
    summary_only: Annotated[
        bool,
        typer.Option(
            "--summary-only", help="With --out: write summary.json and scenario.toml, not the tables."
        ),
    ] = False,
    max_memory: Annotated[
        str | None,
        typer.Option("--max-memory", help="Refuse runs estimated above this (e.g. 8GB; 0: no limit)."),
    ] = None,
    max_capture: Annotated[
        str | None,
        typer.Option("--max-capture", help="Refuse captures that could exceed this (e.g. 2GB; 0: no limit)."),
    ] = None,
    max_time: Annotated[
        str | None,
        typer.Option("--max-time", help="Stop a run whose pace says it exceeds this (default 24h; 0: none)."),
    ] = None,
    allow_path: AllowPathOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace the earlier qoslab run in --out: the new run is written beside it and "
            "takes its place whole once written (one run at a time: the folder is locked).",
        ),
    ] = False,
) -> None:
    """Run a scenario and print per-flow throughput, fairness, utilisation and drops. Memory and
    capture size are estimated first and wall time is measured as it runs, against a budget
    (--max-memory, --max-capture, --max-time, or QOSLAB_MAX_MEMORY, ...: docs/robustness.md).
    Outputs go to --out (empty, or an earlier run with --force); without it, a scenario that
    captures writes into a fresh folder under qoslab-runs/."""
    run_command.run(
        scenario, seed, set_, out, summary_only, max_memory, max_capture, max_time, allow_path, force
    )


@app.command()
def check(
    scenario: Annotated[list[Path], typer.Argument(help="Scenario file(s) to validate.")],
    allow_path: AllowPathOpt = None,
) -> None:
    """Validate scenario files: exit 0 when all are valid, 1 with one error line per bad file."""
    from qoslab.scenario import load_scenario

    bad = 0
    for p in scenario:
        try:
            sc = load_scenario(p, allow_paths=allow_path or ())
            nodes, links, flows, arrivals, _ = sc.core.counts()  # not sc.resolved: 335 objects a flow
            parts = [(nodes, "node", "s"), (links, "link", "s"), (flows, "flow", "s")]
            parts += [(arrivals, "arrival process", "es")] if arrivals else []
            counted = ", ".join(f"{n} {w}{'' if n == 1 else es}" for n, w, es in parts)
            typer.echo(f"{p}: ok ({counted})")
        except _core.ScenarioError as e:
            echo_err(f"error: {e.args[0]}")
            bad += 1
        except MemoryError:
            echo_err(f"error: {p}: out of memory while reading the scenario (make its groups smaller)")
            bad += 1
    if bad:
        raise typer.Exit(1)
