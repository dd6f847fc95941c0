"""Machine-readable verdicts: one record per claim (or part of a compound claim) of a paper and
per reading of it.

An experiment's ``analyse`` adds :class:`Verdict` records through ``Context.verdict``; the runner
re-decides them against the paper's declared magnitudes with Holm's correction
(:mod:`qoslab.verdicts.rules`), writes them with their fingerprints to
``results/NAME/verdicts.json`` and puts their table at the head of the report. The README's
table of the studies and each study page's table are generated from the committed copies in
``docs/verdicts/`` (``python -m qoslab.verdicts readme``); ``python -m qoslab.verdicts check``
lists the stale and malformed ones; ``python -m qoslab.verdicts redecide`` re-decides the
committed files from their stored intervals after a change of the rules (no rerun).
"""

from qoslab.verdicts.core import (
    DOES_NOT,
    INCONCLUSIVE,
    NOT_TESTABLE,
    REPRODUCES,
    VERDICTS,
    WEAKER,
    Claim,
    Direction,
    Magnitude,
    Verdict,
    decide,
)
from qoslab.verdicts.currency import check, read, write
from qoslab.verdicts.docs import (
    BEGIN,
    END,
    FULL_BEGIN,
    FULL_END,
    block,
    column_of,
    kernel_validation,
    markdown,
    page_table,
    readme_table,
    sender_changes,
    sender_of,
    survival_table,
)
from qoslab.verdicts.rules import finalise, holm, p_from_interval
from qoslab.verdicts.tool import kernel_validations, main, redecide_file, update_docs

__all__ = [
    "BEGIN",
    "DOES_NOT",
    "END",
    "FULL_BEGIN",
    "FULL_END",
    "INCONCLUSIVE",
    "NOT_TESTABLE",
    "REPRODUCES",
    "VERDICTS",
    "WEAKER",
    "Claim",
    "Direction",
    "Magnitude",
    "Verdict",
    "block",
    "check",
    "decide",
    "finalise",
    "holm",
    "main",
    "markdown",
    "p_from_interval",
    "page_table",
    "read",
    "readme_table",
    "redecide_file",
    "column_of",
    "kernel_validation",
    "kernel_validations",
    "sender_changes",
    "sender_of",
    "survival_table",
    "update_docs",
    "write",
]
