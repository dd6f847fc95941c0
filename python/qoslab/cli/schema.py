"""``qoslab schema``: the scenario schema, its reference page and the generated builder classes."""

from __future__ import annotations

from typing import Annotated

import typer

from qoslab.cli.app import app
from qoslab.runs.run_command import fail as _fail


@app.command()
def schema(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="The scenario reference page instead of the JSON Schema.")
    ] = False,
    python: Annotated[
        str | None,
        typer.Option("--python", help="The builder's classes of one family: queue, meter or source."),
    ] = None,
) -> None:
    """Print the JSON Schema of scenario files (every key, type, unit, default, range), generated
    from the core; --markdown prints docs/scenario-reference.md, --python queue|meter|source the
    builder's classes of that family (python/qoslab/builder/queues.py, meters.py,
    sources.py)."""
    from qoslab import schema as sch

    if python is not None:
        from qoslab.builder import base, source

        if python not in source.MODULES:
            _fail(f"--python takes {', '.join(source.MODULES)}, got {python!r}")
        text = source.kinds_module(sch.json_schema(), base.UNIT_PATTERNS, python)
        typer.echo(text, nl=False)
        return
    typer.echo(sch.reference_markdown() if markdown else sch.json_text(), nl=False)
