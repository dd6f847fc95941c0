"""``qoslab plot run`` and ``qoslab plot sweep``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from qoslab.cli.app import plot_app
from qoslab.cli.common import StoreOpt, plot_save
from qoslab.runs.run_command import echo_err
from qoslab.runs.run_command import fail as _fail

if TYPE_CHECKING:  # the commands import what they use when they run (start-up time)
    from matplotlib.figure import Figure


@plot_app.command("run")
def plot_run(
    run_dir: Annotated[Path, typer.Argument(help="A directory written by `qoslab run --out DIR`.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Figure file: .png, .svg or .pdf (default DIR/series.png)."),
    ] = None,
    flows: Annotated[
        list[str] | None,
        typer.Option(
            "--flows",
            help="Flows to draw: names, globs ('tcp*') or 'worst N' / 'best N' by throughput "
            "(repeatable or comma-separated; default the first 12).",
        ),
    ] = None,
) -> None:
    """The bottleneck's queue and the averages its discipline keeps (RED's average; RIO's avg_in
    and avg_total), each flow's cwnd (against its receiver window) and throughput over time."""
    from qoslab.plots import run_figure

    warnings: list[str] = []

    def make() -> tuple[Figure, str]:
        fig, prov = run_figure(run_dir, flows or [])
        warnings.append(str(fig.get_label() or ""))  # the sampling warning the cwnd panel shows, or ""
        return fig, prov

    plot_save(make, out or run_dir / "series.png")
    for w in filter(None, warnings):
        echo_err(f"warning: {w}")


@plot_app.command("sweep")
def plot_sweep(
    sweep: Annotated[str, typer.Argument(help="Sweep name in the store (`qoslab results --sweeps`).")],
    metric: Annotated[str, typer.Option("--metric", "-m", help="A stored metric, e.g. fairness_index.")],
    x: Annotated[str, typer.Option("--x", help="The swept key on the horizontal axis.")],
    by: Annotated[str | None, typer.Option("--by", help="Another swept key: one line per value.")] = None,
    store: StoreOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Figure file: .png, .svg or .pdf (default SWEEP-METRIC.png)."),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option("--label", help="KEY=TEXT: name a metric or swept key on the axes (repeatable)."),
    ] = None,
    logx: Annotated[
        bool | None,
        typer.Option(
            "--logx/--linx",
            help="Log or linear x axis (default: log when the swept values are positive and span "
            "20x or more).",
        ),
    ] = None,
) -> None:
    """A stored metric against a swept key: mean and 95% interval over seeds (n per point when
    it differs), a line per --by value."""
    from qoslab.plots import PlotError, parse_labels, sweep_figure
    from qoslab.store import StoreError

    try:
        names = parse_labels(label or [])
    except PlotError as e:
        _fail(str(e))
    try:
        plot_save(
            lambda: sweep_figure(store, sweep, metric, x=x, by=by, labels=names, logx=logx),
            out or Path(f"{sweep}-{metric}.png"),
        )
    except StoreError as e:
        _fail(str(e))
