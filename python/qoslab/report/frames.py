"""Rows of a pandas table, typed by the columns a caller reads.

pandas-stubs types every field of a ``DataFrame.itertuples()`` row as any scalar pandas knows
(strings, bytes, dates, NA, periods, intervals, …), so that ``row.throughput_bps / 1e3`` does
not type-check. :func:`typed_rows` is ``itertuples()`` typed as rows of a class that names the
columns read and their types:

>>> class FlowRow:
...     name: str
...     throughput_bps: float
>>> for f in typed_rows(res.flows, FlowRow):                                # doctest: +SKIP
...     print(f.name, f.throughput_bps / 1e3)

The class is never instantiated (the rows are pandas' named tuples); it is a claim about the
table, as the column names the code reads always were.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    import pandas as pd

RowT = TypeVar("RowT")


def typed_rows(df: pd.DataFrame, row: type[RowT], *, index: bool = True) -> Iterator[RowT]:
    """``df.itertuples(index=index)``, typed as rows of ``row``."""
    return cast("Iterator[RowT]", df.itertuples(index=index))
