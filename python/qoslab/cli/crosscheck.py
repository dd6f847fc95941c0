"""``qoslab crosscheck``: a scenario in qoslab and in ns-2 or ns-3, with a verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from qoslab.cli.app import app
from qoslab.cli.common import output_file, writing
from qoslab.report.csvsafe import write_csv
from qoslab.runs.run_command import echo_err
from qoslab.runs.run_command import fail as _fail
from qoslab.runs.run_command import load as _load


@app.command()
def crosscheck(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seeds: Annotated[int, typer.Option(help="Number of seeds (1..N) run in both simulators.")] = 10,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    csv: Annotated[Path | None, typer.Option(help="Also write the comparison as CSV.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the rows and verdicts as JSON.")
    ] = None,
    flavour: Annotated[
        str,
        typer.Option(
            help="qoslab side against ns-2: 'ns2' (every dsRED mechanism in its ns-2 flavour) or "
            "'reference' (the scenario as written; always so against ns-3)."
        ),
    ] = "ns2",
    against: Annotated[
        str, typer.Option(help="The reference simulator: 'ns2' (ns-2.35) or 'ns3' (ns-3.37).")
    ] = "ns2",
    tcp_flavour: Annotated[
        str,
        typer.Option(
            help="Against ns-3: 'linux' runs qoslab's TCP senders as the Linux kernel does "
            "(tcp.flavour, docs/models/tcp-linux.md); 'ns2' (the default): the scenario's."
        ),
    ] = "ns2",
) -> None:
    """Run a scenario in qoslab and in ns-2 (or ns-3 with --against ns3), print the metrics side
    by side and a verdict per metric family. Exit status: 0 all agree, 1 something disagrees, 2
    the reference simulator cannot express the scenario."""
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from qoslab import ns2, ns3
    from qoslab.crosscheck import CrosscheckRefused, as_records, verdicts
    from qoslab.crosscheck import crosscheck as run_crosscheck

    if against not in ("ns2", "ns3"):
        _fail(f"--against must be 'ns2' or 'ns3', not {against!r}")
    output_file(csv, "--csv")
    output_file(json_out, "--json")
    if against == "ns2" and ns2.ns2_available() is None:
        _fail("ns-2 (`ns`) is not installed: `apt-get install ns2` (or `make ns2`)")
    if against == "ns3" and ns3.ns3_missing():
        _fail(f"ns-3 is not available: {ns3.ns3_missing()}")
    if seeds < 1:
        _fail("--seeds must be at least 1")
    sc = _load(scenario, set_)
    if against == "ns3":
        flavour = "reference"
    con = Console(stderr=True)
    try:
        rows, notes = run_crosscheck(
            sc,
            list(range(1, seeds + 1)),
            progress=lambda m: con.log(m) if con.is_terminal else None,
            flavour=flavour,
            against=against,
            tcp_flavour=tcp_flavour,
        )
    except (ns2.Ns2Error, CrosscheckRefused) as e:
        echo_err(f"error: {scenario}: {str(e).splitlines()[0]}")
        raise typer.Exit(2) from None
    except ns3.Ns3Error as e:
        _fail(f"{scenario}: {e}")
    except ValueError as e:
        _fail(str(e))
    ref = "ns-2" if against == "ns2" else "ns-3"
    side = f"{flavour} flavour" + (", linux TCP flavour" if tcp_flavour == "linux" else "")
    t = Table(title=f"{sc.name}: qoslab ({side}) vs {ref}, {seeds} seeds (mean ± 95 % CI)")
    for c in ("metric", "qoslab", ref, "difference", "verdict"):
        t.add_column(c, justify="right" if c != "metric" else "left")
    for r in rows:
        diff = "" if r.rel_diff != r.rel_diff else f"{r.rel_diff * 100:+.1f} %"
        t.add_row(r.metric, r.qoslab.fmt(4), r.ns2.fmt(4) if r.ns2.n else "n/a", diff, r.verdict)
    out = Console()
    out.print(t)
    for note in notes:
        out.print(f"note: {note}")
    vs = verdicts(rows)
    for v in vs:
        extra = f"; disagree: {', '.join(v.disagree)}" if v.disagree else ""
        if v.noise:
            extra += f"; within noise (more seeds would decide): {', '.join(v.noise)}"
        out.print(f"{v.family}: {v.verdict.upper()} (rows: {v.rows}; {v.worst}{extra})")
    if csv is not None:
        with writing(csv, "--csv"):
            write_csv(pd.DataFrame(as_records(rows, against)), csv)
    if json_out is not None:
        import json

        from qoslab.crosscheck import as_document

        doc = as_document(
            rows,
            notes,
            scenario=str(scenario),
            seeds=seeds,
            flavour=flavour,
            against=against,
            tcp_flavour=tcp_flavour,
        )
        with writing(json_out, "--json"):
            json_out.write_text(json.dumps(doc, indent=2) + "\n")
    raise typer.Exit(0 if all(v.verdict == "agree" for v in vs) else 1)
