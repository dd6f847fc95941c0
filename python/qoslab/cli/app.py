"""The ``qoslab`` typer application, its version and its ``plot`` group; the commands register on
it from their own modules.
"""

from __future__ import annotations

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


def version_text() -> str:
    """``qoslab --version``: the package version, the source digest of the build (the part after
    ``+`` of ``qoslab.__version__``, which the result store keys runs by) and the git revision
    of the checkout it runs from, if any; each labelled."""
    from qoslab.report.page import git_revision

    release, _, digest = _core.__version__.partition("+")
    here = Path(__file__).resolve().parent
    rev = git_revision(here) if (here.parents[2] / ".git").exists() else None
    if rev is None:
        try:  # written by `make wheel`: the revision the wheel was built from
            from qoslab._build_info import GIT_REVISION  # type: ignore[import-not-found]

            rev = f"{GIT_REVISION} (built into this wheel)"
        except ImportError:
            pass
    return "\n".join(
        [
            f"qoslab {release}",
            f"source digest: {digest or 'n/a'} (version key of stored runs: {_core.__version__})",
            f"git revision: {rev or 'n/a (not run from a git checkout)'}",
        ]
    )


def _version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """qoslab: packet-level simulation of DiffServ conditioners and AQM."""


plot_app = typer.Typer(
    no_args_is_help=True,
    help="Plot one run's time series, or a stored sweep's metric against a swept key (PNG, SVG, PDF).",
)
app.add_typer(plot_app, name="plot")
