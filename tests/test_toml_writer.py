"""The TOML writer of the builder (qoslab.toml_writer): what it writes, tomllib reads back to the
same value, and writing that again gives the same text, byte for byte."""

from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qoslab.toml_writer import TomlWriteError, dumps

_floats = st.floats(allow_nan=False)
_scalars = st.one_of(st.text(), st.integers(-(2**63), 2**63 - 1), _floats, st.booleans())
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_documents = st.dictionaries(st.text(), _values | st.lists(st.dictionaries(st.text(), _values), max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_strings_and_keys_round_trip(key, s):
    assert tomllib.loads(dumps({key: s})) == {key: s}


@settings(max_examples=300, deadline=None)
@given(st.floats())
def test_floats_round_trip_bit_for_bit(x):
    y = tomllib.loads(dumps({"x": x}))["x"]
    assert isinstance(y, float)
    assert (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents)
def test_documents_round_trip_and_are_written_again_byte_for_byte(doc):
    text = dumps(doc)
    back = tomllib.loads(text)
    assert back == doc
    assert dumps(back) == text


def test_writer_layout_and_refusals():
    doc = {
        "name": 'a "b"\n\\',
        "tcp": {"window": 20},
        "node": [{"name": "x", "q": {"type": "red", "in": {"a": 1}}}],
    }
    assert dumps(doc) == (
        'name = "a \\"b\\"\\n\\\\"\n\n[tcp]\nwindow = 20\n\n[[node]]\nname = "x"\n'
        'q = { type = "red", in = { a = 1 } }\n'
    )
    assert dumps({"k y": [], "e": {}, "\x7f": 1.0}) == '"k y" = []\n"\\u007F" = 1.0\n\n[e]\n'
    for bad in ({"s": "\ud800"}, {"i": 2**63}, {"n": None}, {1: 2}, {"b": b"x"}):
        with pytest.raises(TomlWriteError):
            dumps(bad)
