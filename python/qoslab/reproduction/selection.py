"""A sweep's rows where its parameters take given values: :func:`select` over any table, and
:class:`Selections`, which answers the many selections of one analysis on the same tables from
an index built once per table and set of parameters.

An analysis asks for a metric's values at one point of a sweep again and again
(:meth:`qoslab.reproduction.runner.Context.values`: every claim, reading, figure and published
number). Each :func:`select` compares every row of the table with every parameter, which was
about a quarter of an fdd-red look's analysis (py-spy). The index gives the same rows: the
positions of the rows whose values equal the point's (the same equality as ``==``: ``10`` finds
``10.0``), taken through the same boolean mask, so the frame returned is the one :func:`select`
returns (its index, order and dtypes)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def select(df: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """Rows of ``df`` whose columns equal ``where``'s values."""
    _check_columns(df, where)
    mask = pd.Series(True, index=df.index)
    for k, v in where.items():
        mask &= df[k] == v
    return df[mask]


def _check_columns(df: pd.DataFrame, where: Mapping[str, Any]) -> None:
    for k in where:
        if k not in df.columns:
            raise KeyError(f"no column {k!r} to select on (have: {', '.join(map(str, df.columns))})")


def _indexable(v: Any) -> bool:
    """A value the index finds as ``==`` does: hashable, and not missing (``==`` finds no row
    equal to None or NaN; a dictionary would find the rows that hold them)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return False
    try:
        hash(v)
    except TypeError:
        return False
    return True


class Selections:
    """:func:`select` on one table that does not change (a look's runs or flows): each set of
    parameters is indexed on first use."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self._index: dict[tuple[str, ...], dict[tuple[Any, ...], list[int]]] = {}

    def rows(self, where: Mapping[str, Any]) -> pd.DataFrame:
        """``select(self.df, where)``."""
        df = self.df
        if not where or not all(_indexable(v) for v in where.values()):
            return select(df, where)
        _check_columns(df, where)
        keys = tuple(where)
        index = self._index.get(keys)
        if index is None:
            index = {}
            for pos, point in enumerate(zip(*(df[k].tolist() for k in keys), strict=True)):
                index.setdefault(point, []).append(pos)
            self._index[keys] = index
        mask = np.zeros(len(df), dtype=bool)
        mask[index.get(tuple(where[k] for k in keys), [])] = True
        return df[mask]
