"""A verdict record as an experiment writes it (before the rules decide it), from per-seed
values: shared by the tests of the verdict rules and of the studies' claims."""

from __future__ import annotations

import math
from typing import Any

import scipy.stats

from qoslab.verdicts import REPRODUCES


def record(claim: str, section: str, reading: str, values: list[float], **kw: Any) -> dict[str, Any]:
    """The record of ``values`` (a paired difference per seed) with its 95 % t interval."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1)) if n > 1 else math.nan
    h = scipy.stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) if n > 1 else math.nan
    r = {
        "claim": claim,
        "section": section,
        "reading": reading,
        "ours": "",
        "paper": "",
        "effect": mean,
        "ci95": [mean - h, mean + h],
        "test": "paired t",
        "p": 1.0,
        "seeds": n,
        "verdict": REPRODUCES,
        "reason": "sign",
        "values": values,
    }
    return {**r, **kw}
