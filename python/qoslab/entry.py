"""The ``qoslab`` console script: the common ``qoslab run`` invocations without typer.

Building the typer command line (importing typer, click and rich, evaluating the command's
signature) costs more than a short simulation; ``qoslab run FILE --out DIR`` should cost little
more than the run. So :func:`main` reads ``sys.argv`` itself when it is ``run`` followed only by
what it understands exactly as click would parse it:

- one SCENARIO (not starting with ``-``),
- ``--seed N`` (``N`` an optional sign and ASCII digits), ``--out DIR``, ``--set K=V``
  (repeatable), ``--allow-path DIR`` (repeatable), ``--max-memory V``, ``--max-capture V``,
  ``--max-time V``, each also as ``--opt=V``, with a non-empty value not starting with ``-``,
  each but ``--set`` and ``--allow-path`` at most once,
- ``--summary-only``, ``--force``,

and calls the command's body (qoslab.runs.run_command.run) with the values typer would have passed.
Anything else (``--help``, an unknown option, a missing or odd value, a path that exists but
cannot be read, which click refuses, another command, no arguments) goes to qoslab.cli.main
unchanged, so errors and help are typer's own. What happens around the body is typer's too: a
KeyboardInterrupt escaping it (SIGTERM included; the body reports its own) ends with status 130,
a broken pipe with status 1; one before it prints ``interrupted`` (as qoslab.cli.main does).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO, cast

_VALUED = {
    "--seed": "seed",
    "--out": "out",
    "--set": "set_",
    "--max-memory": "max_memory",
    "--max-capture": "max_capture",
    "--max-time": "max_time",
    "--allow-path": "allow_path",
}
#: The options that may be repeated (their values collected in a list).
_REPEATED = ("set_", "allow_path")


def _readable(path: str) -> bool:
    """What click.Path (readable=True) requires of a path that exists."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return True  # click lets a missing path through (the command reports it)
    return os.access(path, os.R_OK)


def parse_run(args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of qoslab.runs.run_command.run for ``qoslab ARGS``, or None when
    typer should parse them (see the module's docstring)."""
    if len(args) < 2 or args[0] != "run":
        return None
    opts: dict[str, Any] = {"set_": [], "allow_path": []}
    scenario: str | None = None
    it = iter(args[1:])
    for a in it:
        if a in ("--summary-only", "--force"):
            opts[a[2:].replace("-", "_")] = True
            continue
        if not a.startswith("-"):
            if scenario is not None:
                return None  # click: an extra argument
            scenario = a
            continue
        name, eq, value = a.partition("=")
        key = _VALUED.get(name)
        if key is None:
            return None  # --help, --, unknown options, -x
        if not eq:
            value = next(it, "")
        if not value or value.startswith("-") or (key in opts and key not in _REPEATED):
            return None
        if key in _REPEATED:
            opts[key].append(value)
        elif key == "seed":
            digits = value[1:] if value[:1] in "+-" else value
            if not (digits.isascii() and digits.isdigit()):
                return None
            opts["seed"] = int(value)
        else:
            opts[key] = value
    if scenario is None or not _readable(scenario) or ("out" in opts and not _readable(opts["out"])):
        return None
    from pathlib import Path

    opts["scenario"] = Path(scenario)
    if "out" in opts:
        opts["out"] = Path(opts["out"])
    opts["set_"] = opts["set_"] or None
    allowed = opts.pop("allow_path")
    if allowed:
        opts["allow_path"] = [Path(p) for p in allowed]
    return opts


def main() -> None:
    """``qoslab ARGS``: the lean path for ``qoslab run …`` (see the module's docstring), else
    qoslab.cli.main."""
    kwargs = parse_run(sys.argv[1:]) if "_QOSLAB_COMPLETE" not in os.environ else None
    if kwargs is None:
        from qoslab.cli import main as cli_main

        cli_main()
        return
    import signal

    from qoslab.runs.run_command import echo_err, sigterm_as_interrupt

    signal.signal(signal.SIGTERM, sigterm_as_interrupt)
    try:
        from qoslab.runs.run_command import run

        try:
            run(**kwargs)
        except KeyboardInterrupt:  # typer's command wrapper: status 130
            raise SystemExit(130) from None
        except OSError as e:  # typer's command wrapper: a broken pipe ends quietly, status 1
            import errno

            if e.errno != errno.EPIPE:
                raise
            from typer._click.utils import PacifyFlushWrapper  # typer's copy of click's

            sys.stdout = cast(TextIO, PacifyFlushWrapper(sys.stdout))
            sys.stderr = cast(TextIO, PacifyFlushWrapper(sys.stderr))
            raise SystemExit(1) from None
    except KeyboardInterrupt:  # qoslab.cli.main's
        echo_err("interrupted")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
