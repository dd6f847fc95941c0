"""The core's Parquet writer (crates/qoslab-core/src/parquet/, `_core.write_parquet`), read
back by pyarrow: every scenario's tables read back as the same Arrow tables (types, nullability,
values, metadata) as pyarrow's own writer made of the same columns (the writer `Result.write`
used before; kept here as the reference), and random tables of every column kind round-trip to
the bit, PLAIN or dictionary-encoded (columns of few values, runs, distinct values)."""

from __future__ import annotations

import array
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qoslab
from conftest import QOSLAB, SCENARIOS, one_line_error
from qoslab import _core
from qoslab.runs.columnar import arrow_named, named, seconds
from qoslab.runs.simulate import TABLES, Result

S1 = str(SCENARIOS / "fdd-red-s1.toml")


def _arrow_column(v: Any) -> pa.Array:
    """A column of ``Result.columns`` as pyarrow holds it (the writer before the core's)."""
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
        return pa.array(v)
    return pa.array([str(x) for x in v], type=pa.string())


def reference_write(res: Result, out: Path, **options: Any) -> None:
    """The tables as pyarrow writes them (pyarrow's defaults unless ``options`` say otherwise,
    the same metadata keys)."""
    out.mkdir(parents=True, exist_ok=True)
    meta = {"scenario": res.scenario.name, "seed": res.seed, "version": _core.__version__}
    table_meta = {f"qoslab.{k}".encode(): str(v).encode() for k, v in meta.items()}
    for name in TABLES:
        t = pa.table({k: _arrow_column(v) for k, v in res.columns(name).items()})
        pq.write_table(t.replace_schema_metadata(table_meta), out / f"{name}.parquet", **options)


def same_column(a: pa.ChunkedArray, b: pa.ChunkedArray) -> bool:
    """Equal values, NaN equal to NaN (``Table.equals`` holds NaN unequal to itself), the sign
    of zero and infinities kept."""
    if not a.type.equals(b.type) or len(a) != len(b):
        return False
    if pa.types.is_floating(a.type):
        x, y = a.to_numpy(), b.to_numpy()
        nan = np.isnan(x)
        bits = {4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
        return bool((nan == np.isnan(y)).all() and (x[~nan].view(bits) == y[~nan].view(bits)).all())
    return bool(a.equals(b))


def assert_same_table(new: pa.Table, old: pa.Table) -> None:
    """The same schema (names, types, nullability; metadata apart) and the same values."""
    assert new.schema.equals(old.schema, check_metadata=False), (new.schema, old.schema)
    assert [f.nullable for f in new.schema] == [f.nullable for f in old.schema]
    assert new.num_rows == old.num_rows
    for k in old.column_names:
        assert same_column(new.column(k), old.column(k)), k


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_every_scenarios_tables_read_back_as_pyarrow_writes_them(path, tmp_path):
    res = qoslab.run(path)
    res.write(tmp_path / "new")
    reference_write(res, tmp_path / "old")
    reference_write(res, tmp_path / "plain", compression="none")
    for name in TABLES:
        new_file, old_file = tmp_path / "new" / f"{name}.parquet", tmp_path / "old" / f"{name}.parquet"
        new, old = pq.read_table(new_file), pq.read_table(old_file)
        assert_same_table(new, old)
        meta = new.schema.metadata
        assert meta == old.schema.metadata  # ARROW:schema is dropped by the reader
        assert meta[b"qoslab.scenario"] == res.scenario.name.encode()
        assert meta[b"qoslab.seed"] == str(res.seed).encode()
        assert meta[b"qoslab.version"] == _core.__version__.encode()
        # the types come from the Parquet schema alone: no ARROW:schema entry in the file
        kv = pq.ParquetFile(new_file).metadata.metadata
        assert b"ARROW:schema" not in kv
        # dictionary encoding where it pays: no larger than pyarrow's dictionary-encoded file
        # without compression
        assert new_file.stat().st_size <= (tmp_path / "plain" / f"{name}.parquet").stat().st_size, name
        a, b = pd.read_parquet(new_file), pd.read_parquet(old_file)
        assert list(a.dtypes) == list(b.dtypes)
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        # and the DataFrame of the Result, as it was (an empty table's columns are the raw lists'
        # and arrays' types, not what the file reads back as)
        pd.testing.assert_frame_equal(a, getattr(res, name), check_exact=True, check_dtype=len(a) > 0)


def test_time_columns_are_numpys_division_to_the_last_bit():
    """time_s is computed without numpy (`seconds`): the same bits as `time_ns / 1e9` in numpy."""
    res = qoslab.run(str(SCENARIOS / "mixed-traffic.toml"))
    for name in ("series_queue", "series_flow", "series_meter", "series_gauges"):
        cols = res.columns(name)
        want = np.frombuffer(res.raw[name]["time_ns"], dtype=np.uint64) / 1e9
        assert cols["time_s"].dtype == np.float64
        assert cols["time_s"].tobytes() == want.tobytes(), name
    big = array.array("Q", [0, 1, 999_999_999, 2**53 + 1, 2**63 + 12345, 2**64 - 1])
    want = np.frombuffer(big, dtype=np.uint64) / 1e9
    assert seconds(big).tobytes() == want.tobytes()


@pytest.mark.parametrize("name", ["mixed-traffic.toml", "ard-rio-20flows.toml", "rio-plus-o-baseline.toml"])
def test_result_frames_are_those_of_the_plain_columns(name):
    """A Result's DataFrames are built with numpy's seconds and Arrow's names (`FRAME`): every
    table is the frame `np.asarray` made of the plain columns (values, dtypes, and the bytes
    of the Parquet file a worker writes of it into the store)."""
    res = qoslab.run(str(SCENARIOS / name))
    for table in TABLES:
        plain = pd.DataFrame({k: np.asarray(v) for k, v in res.columns(table).items()})
        frame = getattr(res, table)
        assert list(frame.dtypes) == list(plain.dtypes), table
        pd.testing.assert_frame_equal(frame, plain, check_exact=True)
        files = [pa.BufferOutputStream(), pa.BufferOutputStream()]
        for f, df in zip(files, (frame, plain), strict=True):
            pq.write_table(pa.Table.from_pandas(df, preserve_index=False), f)
        assert files[0].getvalue() == files[1].getvalue(), table


def test_arrow_names_are_the_listed_names_with_the_aggregate_past_the_end():
    """`arrow_named` (a meter's aggregate row: an index past the names) equals `named`."""
    names = ["a", "bb", "", "δ"]
    index = array.array("Q", [3, 0, 4, 2**64 - 1, 1, 1, 2])
    want = pd.Series(np.asarray(named(names, index, "(aggregate)")))
    got = pd.Series(arrow_named(names, index, "(aggregate)"))
    assert got.dtype == want.dtype
    pd.testing.assert_series_equal(got, want, check_exact=True)
    assert arrow_named(names, array.array("Q")) == []  # np.asarray([]) is float64, as before


# -- random tables of every kind ------------------------------------------------------------------

_INT_RANGES = {
    "b": (pa.int8(), -(2**7), 2**7 - 1),
    "B": (pa.uint8(), 0, 2**8 - 1),
    "h": (pa.int16(), -(2**15), 2**15 - 1),
    "H": (pa.uint16(), 0, 2**16 - 1),
    "i": (pa.int32(), -(2**31), 2**31 - 1),
    "I": (pa.uint32(), 0, 2**32 - 1),
    "l": (pa.int64(), -(2**63), 2**63 - 1),
    "L": (pa.uint64(), 0, 2**64 - 1),
    "q": (pa.int64(), -(2**63), 2**63 - 1),
    "Q": (pa.uint64(), 0, 2**64 - 1),
}
KINDS = [*_INT_RANGES, "f", "d", "?", "str"]


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


# NaNs of other payloads and signs, and both zeros: distinct dictionary entries (a float is keyed
# by its bits); a signalling NaN only as a double (converting it to float32 would quiet it)
_SPECIAL_F64 = [
    _f64(b)
    for b in (0x7FF8_0000_0000_0000, 0x7FF8_0000_0000_0001, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001)
]
_SPECIAL_F32 = [_f32(b) for b in (0x7FC0_0000, 0x7FC0_0001, 0xFFC1_2345)]


def _values(kind: str) -> st.SearchStrategy[Any]:
    if kind in _INT_RANGES:
        _, lo, hi = _INT_RANGES[kind]
        return st.integers(lo, hi)
    if kind == "f":
        return st.one_of(st.floats(width=32), st.sampled_from([*_SPECIAL_F32, 0.0, -0.0]))
    if kind == "d":
        return st.one_of(st.floats(), st.sampled_from([*_SPECIAL_F64, 0.0, -0.0]))
    if kind == "?":
        return st.booleans()
    return st.one_of(st.text(), st.just(""))


@st.composite
def _column(draw: st.DrawFn, kind: str, n: int) -> list[Any]:
    """Any values (mostly distinct: PLAIN), a few values in any order, or runs of a few values
    (dictionary-encoded; the indices in RLE and bit-packed runs, mixed)."""
    mode = draw(st.sampled_from(["any", "few", "runs"]))
    if mode == "any":
        return draw(st.lists(_values(kind), min_size=n, max_size=n))
    pool = draw(st.lists(_values(kind), min_size=1, max_size=5))
    if mode == "few":
        return draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    out: list[Any] = []
    while len(out) < n:
        out += [draw(st.sampled_from(pool))] * draw(st.integers(1, 20))
    return out[:n]


def _as_column(kind: str, values: list[Any]) -> Any:
    """The column as `Result._raw_columns` gives it: array.array, a '?' buffer, or a list."""
    if kind == "?":
        return memoryview(bytes(values)).cast("?")
    if kind == "str":
        return values
    return array.array(kind, values)


def _arrow_type(kind: str) -> pa.DataType:
    if kind in _INT_RANGES:
        return _INT_RANGES[kind][0]
    return {"f": pa.float32(), "d": pa.float64(), "?": pa.bool_(), "str": pa.string()}[kind]


def _distinct(kind: str, values: list[Any]) -> int:
    """How many different values the column holds, told apart as the writer tells them (a
    number by its bits as stored, a string by its text)."""
    if kind in ("?", "str"):
        return len(set(values))
    raw = array.array(kind, values)
    b = raw.tobytes()
    return len({b[i : i + raw.itemsize] for i in range(0, len(b), raw.itemsize)})


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], int, list[list[Any]]]:
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6))
    n = draw(st.integers(0, 200))
    cols = [draw(_column(k, n)) for k in kinds]
    return kinds, n, cols


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=tables())
def test_random_tables_round_trip_through_pyarrow(table, tmp_path):
    kinds, n, cols = table
    names = [f"c{i}_{k}" for i, k in enumerate(kinds)]
    path = tmp_path / "t.parquet"
    meta = [("qoslab.scenario", "é ✓"), ("k", "")]
    rows = list(zip(names, kinds, cols, strict=True))
    _core.write_parquet(path, [(nm, _as_column(k, v)) for nm, k, v in rows], meta)
    back = pq.read_table(path)
    assert back.schema.metadata == {b"qoslab.scenario": "é ✓".encode(), b"k": b""}
    assert back.num_rows == n
    chunks = pq.ParquetFile(path).metadata.row_group(0) if rows else None
    for i, (nm, k, v) in enumerate(rows):
        field = back.schema.field(nm)
        assert field.type == _arrow_type(k) and field.nullable, (nm, field)
        got = back.column(nm)
        if k in ("?", "str"):
            assert got.to_pylist() == v, (nm, got, v)
        else:  # to the bit: NaN payloads and signs, -0.0
            assert got.to_numpy().tobytes() == array.array(k, v).tobytes(), (nm, got, v)
        # PLAIN where a dictionary cannot pay (booleans, every value distinct), a dictionary
        # where one value repeats
        encodings = chunks.column(i).encodings
        distinct = _distinct(k, v)
        if k == "?" or distinct == n:
            assert encodings == ("PLAIN", "RLE"), (nm, encodings)
        elif distinct == 1:
            assert encodings == ("PLAIN", "RLE", "RLE_DICTIONARY"), (nm, encodings)
    # the same table writes the same bytes
    _core.write_parquet(tmp_path / "again.parquet", [(nm, _as_column(k, v)) for nm, k, v in rows], meta)
    assert (tmp_path / "again.parquet").read_bytes() == path.read_bytes()
    # and pyarrow's own file of the same table reads back the same
    ref = pa.table({nm: pa.array(v, type=_arrow_type(k)) for nm, k, v in rows})
    pq.write_table(ref, tmp_path / "ref.parquet")
    assert_same_table(back, pq.read_table(tmp_path / "ref.parquet"))


def test_columns_of_few_values_are_dictionary_encoded(tmp_path):
    """A column of a few values is a dictionary page and RLE_DICTIONARY data pages (every kind
    but booleans); one of distinct values, booleans, and one whose dictionary would be over 1
    MiB are PLAIN. Fails if the dictionary path is switched off."""
    n = 1000
    few = {k: [lo, hi, lo, lo, 0] for k, (_, lo, hi) in _INT_RANGES.items()}
    few |= {"f": [0.0, -0.0, *_SPECIAL_F32], "d": [0.0, -0.0, *_SPECIAL_F64], "str": ["", "a", "é ✓"]}
    cols = [(f"few_{k}", _as_column(k, [v[i % len(v)] for i in range(n)])) for k, v in few.items()]
    cols += [
        ("runs", array.array("q", [i // 100 for i in range(n)])),
        ("distinct", array.array("d", [i / 7 for i in range(n)])),
        ("bool", _as_column("?", [i % 3 == 0 for i in range(n)])),
    ]
    path = tmp_path / "t.parquet"
    _core.write_parquet(path, cols, [])
    meta = pq.ParquetFile(path).metadata.row_group(0)
    back = pq.read_table(path)
    for i, (name, col) in enumerate(cols):
        chunk = meta.column(i)
        if name.startswith("few_") or name == "runs":
            assert chunk.encodings == ("PLAIN", "RLE", "RLE_DICTIONARY"), name
            assert chunk.has_dictionary_page and chunk.dictionary_page_offset < chunk.data_page_offset, name
            # a few bytes of dictionary, at most 3 bits of index per row
            assert chunk.total_compressed_size < 120 + n * 3 // 8, (name, chunk.total_compressed_size)
        else:
            assert chunk.encodings == ("PLAIN", "RLE") and not chunk.has_dictionary_page, name
        if isinstance(col, list) or name == "bool":
            assert back.column(name).to_pylist() == list(col), name
        else:
            assert back.column(name).to_numpy().tobytes() == col.tobytes(), name
    # the row group starts at the first column's dictionary page
    assert meta.column(0).dictionary_page_offset == 4

    # a dictionary over 1 MiB is not written, however much it would save: 1,100 strings of
    # 1,000 bytes three times each (1.1 MB of dictionary) are PLAIN, 1,000 of them a dictionary
    for distinct, encodings in ((1100, ("PLAIN", "RLE")), (1000, ("PLAIN", "RLE", "RLE_DICTIONARY"))):
        words = [f"{i:01000d}" for i in range(distinct)] * 3
        _core.write_parquet(path, [("s", words)], [])
        assert pq.ParquetFile(path).metadata.row_group(0).column(0).encodings == encodings
        assert pq.read_table(path).column("s").to_pylist() == words


def test_tables_of_many_pages_and_long_strings(tmp_path):
    """Columns of several ~1 MB pages (2.5 million doubles, 9 million booleans: over one page of
    8 million), strings some of which are longer than a page, and an empty table."""
    rng = np.random.default_rng(5)
    n = 2_500_000
    d = rng.standard_normal(n)
    d[::1000] = np.nan
    d[1::1000] = -np.inf
    u = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    path = tmp_path / "big.parquet"
    _core.write_parquet(path, [("d", d), ("u", u), ("i8", u.astype(np.int8))], [])
    back = pq.read_table(path)
    assert back.schema.types == [pa.float64(), pa.uint64(), pa.int8()]
    assert back.column("d").to_numpy().tobytes() == d.tobytes()
    assert back.column("u").to_numpy().tobytes() == u.tobytes()
    assert (back.column("i8").to_numpy() == u.astype(np.int8)).all()
    # the pages are bounded: the column chunk is the values plus a few bytes per page
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert n * 8 < chunk.total_uncompressed_size < n * 8 + 100 * 40

    b = rng.integers(0, 2, 9_000_001).astype(bool)
    _core.write_parquet(tmp_path / "b.parquet", [("b", b)], [])
    assert (pq.read_table(tmp_path / "b.parquet").column("b").to_numpy() == b).all()

    words = ["", "ü", "x" * 1_500_000, "日本語", "y" * 700_000, *(f"w{i}" for i in range(200_000))]
    _core.write_parquet(tmp_path / "s.parquet", [("s", words)], [])
    assert pq.read_table(tmp_path / "s.parquet").column("s").to_pylist() == words

    # dictionary-encoded columns of many pages, every page referring to the one dictionary:
    # 2.5 million doubles of 300 values (NaNs and zeros of both signs among them) in runs and
    # not, and 300,000 strings of 40 names (over 3 pages of PLAIN strings)
    values = rng.standard_normal(300)
    values[:4] = [np.nan, -np.nan, 0.0, -0.0]
    few = values[rng.integers(0, 300, n)]
    few[: n // 2] = np.sort(few[: n // 2])  # runs
    names = [f"flow-{i:02d}-{'x' * 20}" for i in range(40)]
    s = [names[i] for i in rng.integers(0, 40, 300_000)]
    path = tmp_path / "dict.parquet"
    _core.write_parquet(path, [("few", few), ("i", u % np.uint64(7))], [])
    _core.write_parquet(tmp_path / "dict_s.parquet", [("s", s)], [])
    meta = pq.ParquetFile(path).metadata.row_group(0)
    meta_s = pq.ParquetFile(tmp_path / "dict_s.parquet").metadata.row_group(0)
    for chunk in (meta.column(0), meta.column(1), meta_s.column(0)):
        assert chunk.encodings == ("PLAIN", "RLE", "RLE_DICTIONARY"), chunk
    # a dictionary of 300 doubles and 9 bits an index: far under the PLAIN 8 bytes a value
    assert meta.column(0).total_compressed_size < 300 * 8 + n * 9 // 8 + 100 * 40
    back = pq.read_table(path)
    assert back.column("few").to_numpy().tobytes() == few.tobytes()
    assert (back.column("i").to_numpy() == u % np.uint64(7)).all()
    assert pq.read_table(tmp_path / "dict_s.parquet").column("s").to_pylist() == s

    empty = [("s", []), ("d", array.array("d")), ("b", memoryview(b"").cast("?")), ("q", array.array("q"))]
    _core.write_parquet(tmp_path / "e.parquet", empty, [("a", "b")])
    e = pq.read_table(tmp_path / "e.parquet")
    assert e.num_rows == 0 and e.schema.types == [pa.string(), pa.float64(), pa.bool_(), pa.int64()]
    assert all(f.nullable for f in e.schema)
    _core.write_parquet(tmp_path / "none.parquet", [], [])
    assert pq.read_table(tmp_path / "none.parquet").num_columns == 0


# -- errors -------------------------------------------------------------------------------------------


def test_bad_columns_are_value_errors_naming_the_file_and_column(tmp_path):
    path = tmp_path / "t.parquet"
    with pytest.raises(ValueError, match=r"t\.parquet: column `y` has 1 values where column `x` has 2"):
        _core.write_parquet(path, [("x", array.array("d", [1, 2])), ("y", ["a"])], [])
    with pytest.raises(ValueError, match="column `x`: a list column must hold only str, not int"):
        _core.write_parquet(path, [("x", [1, 2])], [])
    with pytest.raises(ValueError, match="column `x`: expected a one-dimensional buffer"):
        _core.write_parquet(path, [("x", 3.5)], [])
    with pytest.raises(ValueError, match='column `x`: unsupported buffer format "e"'):
        _core.write_parquet(path, [("x", np.zeros(3, dtype=np.float16))], [])
    with pytest.raises(ValueError, match="column `x`: expected a one-dimensional buffer"):
        _core.write_parquet(path, [("x", np.zeros((2, 2)))], [])


def test_a_file_that_cannot_be_written_is_an_oserror_naming_it(tmp_path):
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "t.parquet"
    with pytest.raises(NotADirectoryError) as e:
        _core.write_parquet(target, [("x", array.array("d", [1.0]))], [])
    assert e.value.filename == str(target) and str(target) in str(e.value)
    res = qoslab.run(S1, seed=1)
    out = tmp_path / "out"
    (out / "flows.parquet").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as e:
        res.write(out)
    assert e.value.filename == str(out / "flows.parquet")


def test_qoslab_run_reports_an_unwritable_out_in_one_line(tmp_path):
    # A folder holding something else is refused before the run (qoslab.runs.rundir, issue 56) ...
    out = tmp_path / "out"
    (out / "flows.parquet").mkdir(parents=True)
    p = subprocess.run([QOSLAB, "run", S1, "--out", str(out)], capture_output=True, text=True, timeout=120)
    line = one_line_error(p)
    assert str(out) in line and "holds no qoslab run" in line, line
    # ... and one that cannot be made is one line naming it
    (tmp_path / "file").write_text("")
    bad = tmp_path / "file" / "out"
    p = subprocess.run([QOSLAB, "run", S1, "--out", str(bad)], capture_output=True, text=True, timeout=120)
    line = one_line_error(p)
    assert str(tmp_path / "file") in line and "Not a directory" in line, line


def test_the_writer_needs_no_numpy():
    code = (
        "import sys, array\n"
        "from qoslab import _core\n"
        "_core.write_parquet(sys.argv[1], [('x', array.array('Q', [1])), ('s', ['a'])], [])\n"
        "print(sorted(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))\n"
    )
    with_tmp = subprocess.run(
        [sys.executable, "-c", code, "/dev/null"], capture_output=True, text=True, timeout=60, check=True
    )
    assert with_tmp.stdout.strip() == "[]"
