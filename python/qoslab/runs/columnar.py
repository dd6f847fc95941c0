"""How a run's series columns are built (:meth:`qoslab.runs.simulate.Result._raw_columns`):
without numpy for the Parquet writer and ``qoslab run``, or with numpy and Arrow for a
DataFrame."""

from __future__ import annotations

import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def _seconds(ns: array.array[int]) -> array.array[float]:
    """A column of nanoseconds in seconds: ``ns / 1e9`` as numpy computes it for a uint64 array
    (each value rounded to float64, then divided), without numpy."""
    return array.array("d", [t / 1e9 for t in ns])


def _named(names: Sequence[str], index: Iterable[int], other: str = "") -> list[str]:
    """A column of names from the core's index column: ``names[i]``, or ``other`` for an index
    past the end (a meter's aggregate row)."""
    n = len(names)
    return [names[i] if i < n else other for i in index]


class _Columnar:
    """How :meth:`Result._raw_columns` builds its two costly kinds of column, a series' seconds
    and its names (one per sample: 324,324 rows in a 160-host probe-marker run). Without numpy
    (:data:`_PLAIN`): ``array.array`` and lists of str. For a DataFrame (:data:`_FRAME`): numpy's
    division and the names as the string array pandas would build from the list, taken from the
    index column by Arrow (the list and its conversion were most of a worker's own time after
    the simulation). The same values either way: tests/test_parquet.py compares them."""

    def __init__(self, seconds: Callable[[array.array[int]], Any], named: Callable[..., Any]) -> None:
        self.seconds = seconds
        self.named = named


def _numpy_seconds(ns: array.array[int]) -> Any:
    import numpy as np

    return np.frombuffer(ns, dtype=np.uint64) / 1e9


def _arrow_named(names: Sequence[str], index: array.array[int], other: str = "") -> Any:
    """:func:`_named` as the str array pandas would make of that list, where pandas' str dtype
    is Arrow's large_string (pandas 3's default); the list itself where it is not."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    dtype = pd.Series(["x"]).dtype
    if not len(index) or not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return _named(names, index, other)  # (an empty list: np.asarray makes it float64)
    codes = np.minimum(np.frombuffer(index, dtype=np.uint64), len(names)).astype(np.int64)
    table = pa.array([*names, other], type=pa.large_string())
    return pd.array(table.take(codes), dtype=dtype)  # type: ignore[call-overload]  # (an Arrow array: pandas-stubs lists only numpy and Python inputs)


_PLAIN = _Columnar(_seconds, _named)
_FRAME = _Columnar(_numpy_seconds, _arrow_named)
