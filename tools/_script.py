"""What the standalone tools (`cg_phases.py`, `bench_calls.py`) share: reading their input with
one line on stderr for a bad file, and running `main` as a script.

Standard library only, like the tools: a tool's own directory is on `sys.path` when it runs as
a script, so `import _script` needs nothing installed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

T = TypeVar("T")


def read(load: Callable[[], T]) -> T | None:
    """``load()``, or None after one line on stderr naming the file when it cannot be read
    (OSError) or is not what the tool reads (ValueError, whose message names the file)."""
    try:
        return load()
    except OSError as e:
        print(f"{e.filename}: {e.strerror}", file=sys.stderr)
    except ValueError as e:
        print(e, file=sys.stderr)
    return None


def run(main: Callable[[], int]) -> NoReturn:
    """Exits with ``main()``'s status; a closed pipe (`| head`: the reader has what it wanted)
    is not an error."""
    try:
        sys.exit(main())
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
