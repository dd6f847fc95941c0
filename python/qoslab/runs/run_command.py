"""``qoslab run``'s body, without typer, click or rich: the CLI's typer command (qoslab.cli.run)
and the lean entry point (qoslab.entry, which parses the common ``qoslab run`` invocations
itself) both call :func:`run`, so the two print the same bytes and exit with the same status."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from qoslab.errors import printable

if TYPE_CHECKING:
    from qoslab.report.textable import Table
    from qoslab.scenario import Scenario

#: Rows of a per-flow table printed by `qoslab run` (the first and the last half each); the
#: rest are in the tables written with --out. Ten thousand rows took rich 13 s to lay out.
MAX_ROWS_SHOWN = 40


def echo_err(msg: str) -> None:
    """``typer.echo(msg, err=True)``, its control characters escaped
    (:func:`qoslab.errors.printable`): one line on stderr, flushed. Written here when that is
    certainly what typer (its copy of click's echo) writes: no ANSI escape, which it strips off a
    terminal, and a UTF-8 stderr, which it does not re-wrap; by typer otherwise."""
    msg = printable(msg)  # values quoted from a scenario, a path or an option: never raw controls
    err = sys.stderr
    if err is None or "\x1b" in msg or not (getattr(err, "encoding", None) or "").lower().startswith("utf"):
        import typer

        typer.echo(msg, err=True)
        return
    err.write(msg + "\n")
    err.flush()


def fail(msg: str, code: int = 1) -> NoReturn:
    """``error: MSG`` on stderr, then exit with ``code``."""
    echo_err(f"error: {msg}")
    raise SystemExit(code)


def load(path: Path, overrides: list[str] | None, allow_paths: list[Path] | None = None) -> Scenario:
    """The scenario at ``path`` with ``--set`` overrides, reading files from its folder and
    ``allow_paths`` (``--allow-path``); a scenario error ends the process."""
    from qoslab import _core
    from qoslab.scenario import load_scenario

    try:
        return load_scenario(path, allow_paths=allow_paths or ()).with_overrides(overrides or [], via="--set")
    except _core.ScenarioError as e:
        fail(str(e.args[0]))


def sigterm_as_interrupt(signum: int, frame: object) -> None:
    """SIGTERM (a batch system's kill, `timeout`) stops a run like Ctrl-C: promptly, keeping
    what was measured."""
    raise KeyboardInterrupt


def partial_note(sep: str, out: Path | None, wrote: str | Path | None) -> str:
    """Where a stopped run wrote its partial results (``wrote``; none: nothing), and that
    ``--out`` keeps its earlier run when they went beside it
    (:func:`qoslab.runs.rundir.publish`)."""
    if wrote is None:
        return ""
    kept = f"; --out {out} keeps its earlier run" if out is not None and Path(wrote) != Path(out) else ""
    return f"{sep}wrote the partial results to {wrote} (summary.json says partial){kept}"


class Progress:
    """A rich bar on a terminal; plain lines otherwise (every 10 % of simulated time and at least
    every 30 s), only for runs longer than 2 s."""

    EVERY_S = 30.0

    def __init__(self, label: str) -> None:
        self.label = label
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.bar: Any = None  # a rich Progress once shown
        self.task: Any = None
        self.next_plain = 0.1
        self.next_time = self.EVERY_S

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
        elif frac >= self.next_plain or frac >= 1.0 or elapsed >= self.next_time:
            eta = f", about {elapsed * (1 - frac) / frac:.0f} s to go" if 0 < frac < 1 else ""
            echo_err(f"{self.label}: {frac * 100:.3g}% of simulated time ({elapsed:.1f} s{eta})")
            while self.next_plain <= frac:
                self.next_plain += 0.1
            self.next_time = elapsed + self.EVERY_S


def run(
    scenario: Path,
    seed: int | None = None,
    set_: list[str] | None = None,
    out: Path | None = None,
    summary_only: bool = False,
    max_memory: str | None = None,
    max_capture: str | None = None,
    max_time: str | None = None,
    allow_path: list[Path] | None = None,
    force: bool = False,
) -> None:
    """``qoslab run``: run a scenario and print per-flow throughput, fairness, utilisation and
    drops (the arguments are the command's options; see qoslab.cli.run)."""
    from qoslab import _core
    from qoslab.budget import Budget, BudgetError
    from qoslab.runs.simulate import MAX_SEED, RunInterrupted, RunOverBudget, seed_error
    from qoslab.runs.simulate import run as run_sim

    if summary_only and out is None:
        fail("--summary-only writes summary.json: give the directory with --out")
    if seed is not None and not 0 <= seed <= MAX_SEED:
        fail(seed_error("--seed", seed))

    try:
        sc = load(scenario, set_, allow_path)
        budget = Budget.from_env(max_memory, max_capture, max_time)
        res = run_sim(
            sc,
            seed,
            progress=Progress(f"{sc.name} (seed {seed if seed is not None else sc.default_seed})"),
            out=out,
            tables=not summary_only,
            budget=budget,
            force=force,
        )
    except _core.ScenarioError as e:
        fail(str(e.args[0]))
    except RunOverBudget as e:
        if out is None:  # what it measured is shown, not lost
            print_results(sc, e.result)
        where = partial_note("; ", out, e.out)
        fail(f"{e}{where}; raise the limit with --max-time or QOSLAB_MAX_TIME")
    except BudgetError as e:
        fail(str(e))
    except OSError as e:
        if (unwritten := getattr(e, "result", None)) is not None:  # shown, since not kept
            print_results(sc, unwritten)
            fail(f"{e}: the results above are what it measured")
        fail(str(e))
    except RunInterrupted as e:
        r = e.result
        if not r.partial:  # the signal came while the outputs were written: they were finished
            echo_err(f"interrupted after the run: finished writing its outputs to {e.out} (complete)")
            raise SystemExit(130) from None
        where = partial_note(": ", out, e.out)
        echo_err(
            f"interrupted at t = {r.simulated_until_s:g} s of {sc.outline['duration_ns'] / 1e9:g} s{where}"
        )
        raise SystemExit(130) from None
    except KeyboardInterrupt:  # while the scenario was read or the run set up: --out is as it was
        echo_err("interrupted before the simulation started: nothing was written")
        raise SystemExit(130) from None
    if res.capture_stopped:
        echo_err(f"warning: {sc.source}: {res.capture_stopped}")
    con = print_results(sc, res)
    if res.violations:
        fail("conservation check failed: " + "; ".join(res.violations), 2)
    if res.out is not None:
        what = "" if summary_only else " and Parquet tables"
        caps = " and the captures" if sc.outline.get("captures") else ""
        con.print(printable(f"wrote {res.out}/summary.json{what}{caps}"))


def print_results(sc: Scenario, res: Any) -> Any:
    """The run's table of flows and its headline lines on standard output; the console."""
    from qoslab.budget import human_seconds
    from qoslab.report.textable import Console, Table

    # the flows table has a row per flow; summary.json's entries only of the rows printed
    shown, more = rows_shown(len(res.raw["flows"]["throughput_bps"]))
    s = res.summary(flow_rows=shown)
    con = Console()
    t = Table(title=printable(f"{s['scenario']}  seed {s['seed']}  qoslab {s['version']}"))
    # TCP's columns and the fairness index where a flow adapts its rate; a source at a set rate
    # retransmits nothing and its share is its rate
    elastic = bool(sc.outline.get("arrivals")) or any(f.get("kind") == "tcp" for f in sc.outline["flows"])
    cols = ("flow", "throughput (kbps)", "sent pkts", "retransmits", "drops", "timeouts")
    for c in cols if elastic else ("flow", "throughput (kbps)", "sent pkts", "drops"):
        t.add_column(c)
    t.caption = more
    for f in s["flows"]:
        row = [
            printable(f["name"]),
            f"{f['throughput_bps'] / 1e3:.1f}",
            str(f["sent_packets"]),
            str(f["retransmitted_packets"]),
            str(f["dropped_packets"]),
            str(f["timeouts"]),
        ]
        t.add_row(*(row if elastic else [row[0], row[1], row[2], row[4]]))
    con.print(t)
    if sc.outline.get("conditioners"):
        con.print(diffserv_table(res))
    w = s["measurement_window_s"]
    d = s["drops"]
    every = human_seconds(s["sampling_interval_s"])
    con.print(f"measurement window {w[0]:g}-{w[1]:g} s; time series sampled every {every}")
    con.print(
        (f"Jain index {s['fairness_index']:.4f} | " if elastic else "")
        + f"aggregate {s['aggregate_throughput_bps'] / 1e3:.1f} kbps | "
        f"utilisation of {printable(s['bottleneck'])} {s['utilization'] * 100:.2f} %"
    )
    con.print(
        f"drops at {printable(s['bottleneck'])}: {d['bottleneck']} (early {d['bottleneck_early']}, forced "
        f"{d['bottleneck_forced']}, overflow {d['bottleneck_overflow']}); all links {d['total']}"
    )
    con.print(
        f"{res.packet_hops} packet-hops in {res.wall_time_s:.3f} s wall "
        f"({res.packet_hops / max(res.wall_time_s, 1e-9) / 1e6:.1f} M hops/s)"
    )
    return con


def rows_shown(n: int) -> tuple[list[int], str]:
    """The rows of an n-row per-flow table to print, and a caption for those left out."""
    if n <= MAX_ROWS_SHOWN:
        return list(range(n)), ""
    half = MAX_ROWS_SHOWN // 2
    return (
        [*range(half), *range(n - half, n)],
        f"{n - MAX_ROWS_SHOWN:,} of {n:,} flows not shown (all are in flows.parquet, or Result.flows)",
    )


def diffserv_table(res: Any) -> Table:
    """Per flow, over the whole run: in-profile throughput, packets coloured green, yellow and
    red by the conditioners, and drops by drop precedence (0: AFx1, 1: AFx2, 2: AFx3 and best
    effort; docs/outputs.md)."""
    from qoslab.report.textable import Table

    f = res.columns("flows")
    t = Table(
        title="DiffServ: colours and drops by drop precedence",
        caption="IN kbps inside the measurement window; packets over the whole run",
    )
    for c in ("flow", "IN kbps", "green", "yellow", "red", "drops AFx1", "AFx2", "AFx3/BE"):
        t.add_column(c)
    shown, more = rows_shown(len(f["name"]))
    if more:
        t.caption = f"{t.caption}; {more}"
    for i in shown:
        t.add_row(
            printable(f["name"][i]),
            f"{f['in_throughput_bps'][i] / 1e3:.1f}",
            *(str(int(f[c][i])) for c in ("green_packets", "yellow_packets", "red_packets")),
            *(str(int(f[f"drops_prec{p}"][i])) for p in range(3)),
        )
    return t
