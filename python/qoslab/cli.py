"""The ``qoslab`` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from qoslab import _core

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="qoslab: packet-level simulation of DiffServ conditioners and AQM.",
)


def _fail(msg: str, code: int = 1) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _load(path: Path, overrides: list[str] | None):
    from qoslab.scenario import load_scenario

    try:
        return load_scenario(path).with_overrides(overrides or [])
    except _core.ScenarioError as e:
        _fail(str(e.args[0]))


class Progress:
    """A rich bar on a terminal; plain lines otherwise, only for runs longer than 2 s."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.bar = None
        self.task = None
        self.next_plain = 0.1

    def __call__(self, frac: float) -> None:
        elapsed = time.perf_counter() - self.t0
        if elapsed < 2.0 and self.bar is None:
            return
        if self.tty:
            if self.bar is None:
                from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

                self.bar = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    TextColumn("{task.percentage:>3.0f}%"),
                    TimeRemainingColumn(),
                    transient=True,
                )
                self.bar.start()
                self.task = self.bar.add_task(self.label, total=1.0)
            self.bar.update(self.task, completed=frac)
            if frac >= 1.0:
                self.bar.stop()
        elif frac >= self.next_plain or frac >= 1.0:
            typer.echo(f"{self.label}: {frac * 100:.0f}% of simulated time ({elapsed:.1f} s)", err=True)
            while self.next_plain <= frac:
                self.next_plain += 0.1


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[int | None, typer.Option(help="Run seed (default: the scenario's).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write summary.json and Parquet tables here.")] = None,
) -> None:
    """Run a scenario and print per-flow throughput, fairness, utilisation and drops."""
    from rich.console import Console
    from rich.table import Table

    from qoslab.simulate import run as run_sim

    sc = _load(scenario, set_)
    try:
        res = run_sim(
            sc,
            seed,
            progress=Progress(f"{sc.name} (seed {seed if seed is not None else sc.default_seed})"),
            out=out,
        )
    except _core.ScenarioError as e:
        _fail(str(e.args[0]))
    except OSError as e:
        _fail(str(e))
    s = res.summary()
    con = Console()
    t = Table(title=f"{s['scenario']}  seed {s['seed']}  qoslab {s['version']}")
    for c in ("flow", "throughput (kbps)", "sent pkts", "retransmits", "drops", "timeouts"):
        t.add_column(c, justify="right")
    for f in s["flows"]:
        t.add_row(
            f["name"],
            f"{f['throughput_bps'] / 1e3:.1f}",
            str(f["sent_packets"]),
            str(f["retransmitted_packets"]),
            str(f["dropped_packets"]),
            str(f["timeouts"]),
        )
    con.print(t)
    w = s["measurement_window_s"]
    d = s["drops"]
    con.print(
        f"measurement window {w[0]:g}-{w[1]:g} s | Jain index {s['fairness_index']:.4f} | "
        f"aggregate {s['aggregate_throughput_bps'] / 1e3:.1f} kbps | "
        f"utilisation of {s['bottleneck']} {s['utilization'] * 100:.2f} %"
    )
    con.print(
        f"drops at {s['bottleneck']}: {d['bottleneck']} (early {d['bottleneck_early']}, forced "
        f"{d['bottleneck_forced']}, overflow {d['bottleneck_overflow']}); all links {d['total']}"
    )
    con.print(
        f"{res.packet_hops} packet-hops in {res.wall_time_s:.3f} s wall "
        f"({res.packet_hops / max(res.wall_time_s, 1e-9) / 1e6:.1f} M hops/s)"
    )
    if res.violations:
        _fail("conservation check failed: " + "; ".join(res.violations), 2)
    if out is not None:
        con.print(f"wrote {out}/summary.json and Parquet tables")


@app.command()
def check(scenario: Annotated[list[Path], typer.Argument(help="Scenario file(s) to validate.")]) -> None:
    """Validate scenario files: exit 0 when all are valid, 1 with one error line per bad file."""
    from qoslab.scenario import load_scenario

    bad = 0
    for p in scenario:
        try:
            sc = load_scenario(p)
            typer.echo(
                f"{p}: ok ({len(sc.resolved['nodes'])} nodes, {len(sc.resolved['links'])} links, "
                f"{len(sc.resolved['flows'])} flows)"
            )
        except _core.ScenarioError as e:
            typer.echo(f"error: {e.args[0]}", err=True)
            bad += 1
    if bad:
        raise typer.Exit(1)


@app.command()
def bench(
    workload: Annotated[list[str] | None, typer.Option(help="Run only these workloads.")] = None,
    no_ns2: Annotated[bool, typer.Option("--no-ns2", help="Do not run ns-2 even if present.")] = False,
) -> None:
    """Measure speed and peak memory on fixed workloads, against ns-2 in the same invocation."""
    from qoslab.bench import main as bench_main

    bench_main(workload or None, use_ns2=not no_ns2)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
