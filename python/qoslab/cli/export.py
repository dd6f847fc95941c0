"""``qoslab export-ns2``: a scenario as an ns-2 Tcl script."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from qoslab.cli.app import app
from qoslab.cli.common import output_file, writing
from qoslab.runs.run_command import echo_err
from qoslab.runs.run_command import fail as _fail
from qoslab.runs.run_command import load as _load


@app.command("export-ns2")
def export_ns2(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[int | None, typer.Option(help="Seed (random start times, ns-2's RNG).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the Tcl script here (default: stdout).")
    ] = None,
    trace: Annotated[
        str | None,
        typer.Option(help="Also write ns-2's per-packet trace (trace-all) to this file, beside the script."),
    ] = None,
) -> None:
    """Write an ns-2 Tcl script for a scenario that uses only mechanisms ns-2 has. The script
    writes its results (JSON) and any trace beside itself, wherever it is run from."""
    from qoslab import ns2
    from qoslab.runs.simulate import MAX_SEED, seed_error
    from qoslab.scenario import to_ns2_resolved

    if seed is not None and not 0 <= seed <= MAX_SEED:
        _fail(seed_error("--seed", seed))
    output_file(out, "--out")
    if trace is not None:
        _fail_on_trace_name(trace, out)
    sc = _load(scenario, set_)
    seed = sc.default_seed if seed is None else seed
    resolved = to_ns2_resolved(sc.resolved, seed)
    reason = ns2.unsupported_reason(resolved)
    if reason:
        _fail(f"{scenario}: ns-2 cannot express this scenario: {reason}")
    results = out.with_suffix(".json").name if out else f"{sc.name}-seed{seed}.json"
    tcl = ns2.to_tcl(resolved, seed, results, trace=trace)
    if out is None:
        sys.stdout.write(tcl)
    else:
        with writing(out, "--out"):
            out.write_text(tcl)
        extra = f" and the trace {trace}" if trace else ""
        echo_err(f"wrote {out} (run: ns {out}; it writes {results}{extra} beside it)")


#: What a trace's name may hold: it is written into the script's Tcl as a string, and names a
#: file beside the script.
_TRACE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$")


def _fail_on_trace_name(trace: str, out: Path | None) -> None:
    """``--trace`` names a file beside the script: a plain name (letters, digits, ``._-``, at
    most 200), not a path, not the script's or its results' own name, not a folder there."""
    if not _TRACE_NAME.match(trace):
        _fail(
            f"--trace {trace!r}: expected a file name beside the script (letters, digits, '.', '_' "
            "and '-', at most 200, not starting with '.' or '-'), not a path"
        )
    if out is not None:
        if trace in (out.name, out.with_suffix(".json").name):
            _fail(f"--trace {trace!r}: the script or its results would be overwritten by the trace")
        if (out.parent / trace).is_dir():
            _fail(f"--trace {trace!r}: {out.parent / trace} is a folder")
