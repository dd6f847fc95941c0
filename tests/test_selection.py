"""`Selections` (an analysis's selections from an index built once per table and parameters)
returns the frame `select` returns: rows, order, index and dtypes, for every kind of value."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from qoslab.reproduction.selection import Selections, select


@pytest.fixture
def runs() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame(
        {
            "marker": rng.choice(["none", "probe", "probe_plus_one"], n),
            "flows": rng.choice([10, 20, 40], n),
            "rtt": rng.choice([0.02, 0.1, float("nan")], n),
            "on": rng.choice([True, False], n),
            "seed": rng.integers(1, 21, n),
            "value": rng.normal(size=n),
        }
    )
    return df[df["seed"] != 3].reset_index(drop=True).iloc[::-1]  # an index not 0..n-1


WHERES = [
    {},
    {"marker": "probe"},
    {"marker": "probe", "flows": 20},
    {"flows": 20, "marker": "probe"},  # the same point, the keys in another order
    {"flows": 20.0},  # == finds 20 in an integer column
    {"flows": np.int64(40), "rtt": 0.1},
    {"rtt": float("nan")},  # == finds no NaN
    {"marker": None},
    {"on": True, "marker": "none"},
    {"marker": "absent"},
    {"flows": "20"},  # a string never equals a number
    {"seed": 3},
]


@pytest.mark.parametrize("where", WHERES, ids=str)
def test_selections_are_select(runs, where):
    sel = Selections(runs)
    for _ in range(2):  # built, then from the index
        got, want = sel.rows(where), select(runs, where)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.index.equals(want.index) and type(got.index) is type(want.index)
    if where.get("rtt") is not None and math.isnan(where["rtt"]):
        assert len(got) == 0


def test_a_missing_column_is_the_same_error(runs):
    with pytest.raises(KeyError, match="no column 'buffer' to select on"):
        Selections(runs).rows({"buffer": 30})


def test_the_index_is_built_once_per_table_and_parameters(runs):
    """The second selection on the same parameters reads the index: a change to the frame
    that the index does not know of is not seen (why the tables it serves must not change)."""
    sel = Selections(runs)
    assert len(sel.rows({"marker": "probe"})) == (runs["marker"] == "probe").sum()
    changed = runs.assign(marker="probe")
    sel.df = changed  # the index was built on the frame before
    assert len(sel.rows({"marker": "probe"})) < len(changed)
    assert len(Selections(changed).rows({"marker": "probe"})) == len(changed)
