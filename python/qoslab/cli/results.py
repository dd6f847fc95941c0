"""``qoslab results``: what the store holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from qoslab.cli.app import app
from qoslab.cli.common import Errors, StoreOpt, output_file, print_table, say_removed, writing
from qoslab.runs.run_command import echo_err
from qoslab.runs.run_command import fail as _fail


@app.command()
def results(
    store: StoreOpt = None,
    table: Annotated[
        str,
        typer.Option("--table", help="runs, flows, queues, metrics, attempts, series_queue, series_flow."),
    ] = "runs",
    sweep: Annotated[str | None, typer.Option("--sweep", help="Only runs of this sweep.")] = None,
    scenario: Annotated[
        str | None, typer.Option("--scenario", help="Only runs of this scenario name.")
    ] = None,
    status: Annotated[str | None, typer.Option("--status", help="ok or failed.")] = None,
    version: Annotated[
        str | None, typer.Option("--version", help="Only runs of this qoslab version.")
    ] = None,
    export: Annotated[
        Path | None, typer.Option("--export", help="Write the table to FILE.csv or FILE.parquet.")
    ] = None,
    sweeps: Annotated[bool, typer.Option("--sweeps", help="List the sweeps in the store.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Verify the store's consistency.")] = False,
    migrate: Annotated[
        bool,
        typer.Option("--migrate", help="Bring a store of an older schema to this qoslab's (keeps a backup)."),
    ] = False,
    limit: Annotated[int, typer.Option("--limit", help="Rows to print (0: all).")] = 30,
) -> None:
    """List, check and export the result store (CSV or Parquet)."""
    from rich.console import Console

    from qoslab.report import results as res_mod
    from qoslab.store import Store

    con = Console()
    output_file(export, "--export")
    with Errors():
        if status is not None and status not in ("ok", "failed"):
            raise ValueError(f"--status must be ok or failed, got {status!r}")
        if migrate:
            from qoslab.store import default_store
            from qoslab.store import migrate as migrate_store

            old, new, backup = migrate_store(store if store is not None else default_store())
            if backup is None:
                typer.echo(f"result store {store or default_store()} already has schema {new}")
            else:
                where = store or default_store()
                typer.echo(f"migrated result store {where} from schema {old} to {new} (backup: {backup})")
            return
        with Store(store, create=False) as st:
            say_removed(st)
            if check:
                problems = st.verify()
                n = st.count_runs()
                for p in problems:
                    echo_err(f"problem: {p}")
                old = st.unchecksummed()
                if old:
                    echo_err(
                        f"{st.db_path}: {old} run(s) stored before checksums (schema 2): their time "
                        "series were read as Parquet, not compared with a SHA-256"
                    )
                if problems:
                    _fail(f"{st.db_path}: {len(problems)} problem(s) in {n} runs")
                typer.echo(f"{st.db_path}: {n} runs, consistent (time series files match their SHA-256)")
                return
            if sweeps:
                df = res_mod.sweeps(st)
            else:
                df = res_mod.load(st, table, sweep=sweep, scenario=scenario, status=status, version=version)
        if export is not None:
            with writing(export, "--export"):
                res_mod.export(df, export)
            typer.echo(f"wrote {len(df)} rows to {export}")
            return
    if df.empty:
        typer.echo("no runs match" if not sweeps else "no sweeps in the store")
        return
    if table == "runs" and not sweeps:
        df = res_mod.runs_overview(df)
    shown = df if limit <= 0 else df.tail(limit)
    title = f"{'sweeps' if sweeps else table}: {len(df)} rows" + (
        f" (last {len(shown)}; --limit 0 for all)" if len(shown) < len(df) else ""
    )
    print_table(con, shown, title)
