"""How a run's series columns are built (:meth:`qoslab.runs.simulate.Result._raw_columns`):
their seconds and their names, one per sample (324,324 rows in a 160-host probe-marker run).
:data:`PLAIN` builds them without numpy (``array.array`` and lists of str: the core's Parquet
writer, ``qoslab run``); :data:`FRAME` for a DataFrame, with numpy's division and the names
taken from the core's index column by Arrow, as the str array pandas would make of the list
(the list and its conversion were most of a worker's own time after the simulation). The same
values either way: tests/test_parquet.py compares them."""

from __future__ import annotations

import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any


def seconds(ns: array.array[int]) -> array.array[float]:
    """A column of nanoseconds in seconds: ``ns / 1e9`` as numpy computes it for a uint64 array
    (each value rounded to float64, then divided), without numpy."""
    return array.array("d", [t / 1e9 for t in ns])


def named(names: Sequence[str], index: Iterable[int], other: str = "") -> list[str]:
    """A column of names from the core's index column: ``names[i]``, or ``other`` for an index
    past the end (a meter's aggregate row)."""
    n = len(names)
    return [names[i] if i < n else other for i in index]


def numpy_seconds(ns: array.array[int]) -> Any:
    import numpy as np

    return np.frombuffer(ns, dtype=np.uint64) / 1e9


@cache
def _arrow_str() -> Any:
    """pandas' str dtype where it is Arrow-backed (pandas 3's default), else None."""
    import pandas as pd

    dtype = pd.Series(["x"]).dtype
    return dtype if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow" else None


def arrow_named(names: Sequence[str], index: array.array[int], other: str = "") -> Any:
    """:func:`named` as the str array pandas would make of that list; the list itself where
    pandas' str dtype is not Arrow's, or where it is empty (np.asarray makes that float64)."""
    dtype = _arrow_str()
    if not len(index) or dtype is None:
        return named(names, index, other)
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    codes = np.minimum(np.frombuffer(index, dtype=np.uint64), len(names)).astype(np.int64)
    table = pa.array([*names, other], type=pa.large_string())
    return pd.array(table.take(codes), dtype=dtype)  # type: ignore[call-overload]  # (an Arrow array: pandas-stubs lists only numpy and Python inputs)


@dataclass(frozen=True)
class Columnar:
    """The two builders :meth:`Result._raw_columns` takes."""

    seconds: Callable[[array.array[int]], Any]
    named: Callable[..., Any]


PLAIN = Columnar(seconds, named)
FRAME = Columnar(numpy_seconds, arrow_named)
