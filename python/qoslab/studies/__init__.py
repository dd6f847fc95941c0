"""The studies shipped with qoslab, one package per paper (or per study of our own): its plan
and analysis (``study``), the paper's numbers (``paper``), its topology, its figures and, for
the studies with verdicts, its claims declared once as objects (``claims``). The reproduction
machinery they use is :mod:`qoslab.reproduction`.

:data:`STUDIES` is the one list of them: the experiments the registry imports
(:data:`qoslab.reproduction.base.BUILTIN`), the claims the verdicts judge
(:data:`qoslab.verdicts.magnitudes.REGISTRY`), the Makefile's ``VERDICT_STUDIES`` and
``OWN_STUDIES`` and the experiment pages in mkdocs.yml's nav (``tools/regenerate.py``) all come
from it (``tests/test_study_registry.py``). This module imports nothing of qoslab: every study
may name it without an import loop.
"""

from __future__ import annotations

from pathlib import Path

#: Every study by its experiment's name, in the order the docs list them; study ``a-b`` is the
#: package ``qoslab.studies.a_b``, its page ``docs/experiments/a-b.md``.
STUDIES: tuple[str, ...] = (
    "red-baseline",
    "ard",
    "rio-plus-o",
    "fdd-red",
    "twam-dwred",
    "probe-marker",
    "mixed-traffic",
    "modern-aqm",
    "buffer-sizing",
)

HERE = Path(__file__).resolve().parent


def module(name: str, job: str = "study") -> str:
    """The module of study ``name`` that does ``job``: ``module("fdd-red", "claims")`` is
    ``qoslab.studies.fdd_red.claims``."""
    return f"{__name__}.{name.replace('-', '_')}.{job}"


def having(job: str) -> tuple[str, ...]:
    """The studies with a module that does ``job`` (:func:`module`), by name, sorted: the
    machinery finds a study's pieces through them, never by naming the study."""
    return tuple(sorted(s for s in STUDIES if (HERE / s.replace("-", "_") / f"{job}.py").exists()))


def with_claims() -> tuple[str, ...]:
    """The studies that declare claims (a ``claims`` module), by name: the studies with verdicts
    (``make figures`` reproduces them sequentially)."""
    return having("claims")


def own() -> tuple[str, ...]:
    """The studies that declare no claims (ours, run at fixed seeds), in :data:`STUDIES`' order."""
    claimed = with_claims()
    return tuple(s for s in STUDIES if s not in claimed)
