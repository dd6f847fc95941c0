"""CSV files a spreadsheet opens safely: a text cell that starts with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets (a flow named
``=HYPERLINK(...)`` would run as one), so such a cell is written with a leading ``'``, which
the spreadsheet shows as text (OWASP's "CSV injection" rule). Numbers, negative ones included,
are written as they are; only text cells change (and a cell holding a carriage return is
quoted, as one holding a newline is). Every CSV qoslab writes goes through :func:`write_csv`."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutral(v: Any) -> Any:
    """``v``, with a leading ``'`` if it is text starting with :data:`FORMULA_START`."""
    return "'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else v


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Writes ``df`` (without its index) to ``path`` as CSV, text cells neutralised
    (:func:`neutral`)."""
    import pandas as pd
    from pandas.api.types import is_object_dtype, is_string_dtype

    text = [
        c
        for c in df.columns
        if is_object_dtype(df[c].dtype)
        or is_string_dtype(df[c].dtype)
        or isinstance(df[c].dtype, pd.CategoricalDtype)
    ]
    if text:
        df = df.assign(**{str(c): df[c].map(neutral).astype(object) for c in text})
    # pandas quotes a cell holding a newline, not one holding a bare carriage return, which
    # spreadsheets and readers take for the end of the row: then every text cell is quoted.
    cr = any(isinstance(v, str) and "\r" in v for c in text for v in df[c])
    df.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC if cr else csv.QUOTE_MINIMAL)
    return Path(path)
