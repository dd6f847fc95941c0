"""The ``qoslab`` command line: one module per command (:mod:`qoslab.cli.run`, ...), the
application and its shared options in :mod:`qoslab.cli.app` and :mod:`qoslab.cli.common`;
:func:`main` is the entry point.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from qoslab.cli.app import app
from qoslab.runs import run_command

# The commands' modules, in the order ``qoslab --help`` lists their commands: each registers its
# commands on :data:`app` when imported (isort would reorder them).
# isort: off
from qoslab.cli import run as run
from qoslab.cli import bench as bench
from qoslab.cli import sweep as sweep
from qoslab.cli import reproduce as reproduce
from qoslab.cli import results as results
from qoslab.cli import schema as schema
from qoslab.cli import plot as plot
from qoslab.cli import export as export
from qoslab.cli import crosscheck as crosscheck
from qoslab.cli import emulate as emulate

# isort: on

#: Metavars of options whose value has a shape of its own (the rest are named after their type).
_METAVARS = {
    "--grid": "KEY=V1,V2,…",
    "--set": "KEY=VALUE",
    "--metric": "MODULE:FUNC",
    "--scheduler": "ADDRESS",
    "--executor": "NAME",
    "--show": "M1,M2,…",
    "--memory": "SIZE",
    "--walltime": "HH:MM:SS",
}


def unwrap_help(text: str) -> str:
    """A docstring's paragraphs as one line each (the terminal wraps them at its width, not at
    the source's 100 columns); a line that starts a list item or an indented block keeps its
    break."""
    out: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        keep = not s or s.startswith(("-", "*", "qoslab ")) or line.startswith("    ")
        if out and out[-1] and not keep:
            out[-1] += " " + s
        else:
            out.append(line.rstrip() if keep else s)
    return "\n".join(out)


def _unwrap_helps(cmd: Any) -> None:
    for sub in getattr(cmd, "commands", {}).values():
        _unwrap_helps(sub)
    if isinstance(getattr(cmd, "help", None), str):
        cmd.help = unwrap_help(cmd.help)


def _plain_metavars(cmd: Any) -> None:
    """Help shows what to type after an option (``N``, ``PATH``, ``KEY=VALUE``) and nothing after
    a flag, instead of Python types (``<bool>``, ``<list[str]>``)."""
    for sub in getattr(cmd, "commands", {}).values():
        _plain_metavars(sub)
    make_help = getattr(cmd, "get_help_option", None)
    if make_help is not None:  # --help is made on demand: a flag, nothing after it

        def help_option(ctx: Any, _make: Any = make_help) -> Any:
            opt = _make(ctx)
            if opt is not None:
                opt.metavar = ""
            return opt

        cmd.get_help_option = help_option
    for prm in getattr(cmd, "params", []):
        # typer's options (its own copy of click's): duck-typed
        if getattr(prm, "param_type_name", "") != "option" or prm.metavar is not None:
            continue
        long = next((o for o in prm.opts if o.startswith("--")), "")
        if getattr(prm, "is_flag", False) or getattr(prm, "count", False):
            prm.metavar = ""
        elif long in _METAVARS:
            prm.metavar = _METAVARS[long]
        else:
            if hasattr(prm, "display_type"):  # typer >= 0.29
                label = str(prm.display_type(None)).strip("<>")  # "int", "path", "list[str]"
            else:  # typer 0.26-0.28: click's parameter types ("integer", "float", "path", "text")
                name = str(getattr(prm.type, "name", ""))
                label = {"integer": "int"}.get(name, name)
            inner = label[5:-1] if label.startswith("list[") else label
            prm.metavar = {"int": "N", "float": "X"}.get(inner, "PATH" if "path" in inner.lower() else "TEXT")


def command_for(args: list[str]) -> Any:
    """The click command of ``qoslab ARGS``: the whole group, built with only the subcommand
    that ``args`` name when their first word is one (``qoslab run …``). typer builds a click
    command from every function's signature when asked for the group (type hints evaluated,
    parameters converted: 30-40 ms for the twelve commands, a tenth of a short run's whole
    process); the subcommand alone is built the same way, from the same definitions. Anything
    else (``qoslab``, ``--help``, ``--version``, a mistyped name that gets suggestions) builds
    them all."""
    first = args[0] if args else ""
    if first and not first.startswith("-"):
        cmds = [
            c
            for c in app.registered_commands
            if (c.name or typer.main.get_command_name(c.callback.__name__ if c.callback else "")) == first
        ]
        groups = [g for g in app.registered_groups if g.name == first]
        if cmds or groups:
            import copy

            one = copy.copy(app)
            one.registered_commands, one.registered_groups = cmds, groups
            return typer.main.get_command(one)
    return typer.main.get_command(app)


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, run_command.sigterm_as_interrupt)
    cli = command_for(sys.argv[1:])
    _plain_metavars(cli)
    _unwrap_helps(cli)
    try:
        cli(prog_name="qoslab")
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
