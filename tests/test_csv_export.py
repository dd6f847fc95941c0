"""CSV exports open safely in a spreadsheet: a text cell starting with = + - @, a tab or a
carriage return gets a leading ' (OWASP's CSV-injection rule); numbers are written as they are."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from conftest import QOSLAB
from qoslab.report.csvsafe import FORMULA_START, write_csv

FORMULA = '=HYPERLINK("http://x","y")'


def test_text_cells_that_spreadsheets_read_as_formulas_are_neutralised(tmp_path):
    cells = [f"{c}1+1" for c in FORMULA_START] + ["plain", "a=b", "'quoted"]
    df = pd.DataFrame(
        {
            "text": cells,
            "cat": pd.Categorical(["@x"] * len(cells)),
            "num": [-1.5] * len(cells),
            "int": [-3] * len(cells),
        }
    )
    back = pd.read_csv(write_csv(df, tmp_path / "x.csv"), keep_default_na=False)
    assert list(back["text"]) == [f"'{c}" for c in cells[:6]] + ["plain", "a=b", "'quoted"]
    assert set(back["cat"]) == {"'@x"}
    assert list(back["num"]) == [-1.5] * len(cells) and list(back["int"]) == [-3] * len(cells)
    assert list(df["text"]) == cells  # the frame itself is left as it was


@pytest.mark.parametrize("export", ["--export", "--out"])
def test_flow_and_scenario_names_are_not_exported_as_formulas(tmp_path, export):
    """A scenario named `@SUM(1+1)` with a flow named `=HYPERLINK(...)`: `results --export` and
    `sweep --out`'s runs.csv wrote both raw (a spreadsheet ran them)."""
    text = (
        'name = "@SUM(1+1)"\nduration = "1s"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n'
        '[[link]]\nname = "ab"\na = "a"\nb = "b"\nbandwidth = "10Mbps"\ndelay = "1ms"\n'
        f'[[flow]]\nname = {FORMULA!r}\ntype = "cbr"\nsrc = "a"\ndst = "b"\nrate = "1Mbps"\n'
    ).replace("'", '"', 2)
    s = tmp_path / "f.toml"
    s.write_text(text.replace(f'"{FORMULA}"', '"=HYPERLINK(\\"http://x\\",\\"y\\")"'))
    store = tmp_path / "store"
    args = [QOSLAB, "sweep", str(s), "--store", str(store), "--executor", "serial", "--quiet"]
    p = subprocess.run([*args, "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    if export == "--export":
        csv = tmp_path / "flows.csv"
        p = subprocess.run(
            [QOSLAB, "results", "--store", str(store), "--table", "flows", "--export", str(csv)],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        df = pd.read_csv(csv)
        assert list(df["name"]) == ["'" + FORMULA]
    else:
        df = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert list(df["scenario"]) == ["'@SUM(1+1)"]
