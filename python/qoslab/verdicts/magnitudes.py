"""What each paper claims, as a quantity: one :class:`~qoslab.verdicts.Magnitude` per claim
(or part of a compound claim) of the five studies, in the units of the effect its verdict
records carry, derived from the claims each study declares once, as objects, in its ``claims``
module (``qoslab.studies.<study>.claims``; :mod:`qoslab.verdicts.claims`; :data:`REGISTRY`).

How the magnitudes were set (the papers are in ``../shared/papers/``):

- where the paper gives a range ("98 % to more than 99 %", "from two to three times",
  "[15 %, 30 %] versus [50 %, 60 %]"), that range;
- where it gives one number per scheme from **one simulation run** (Hur's Table 1, Hashemi's
  Tables 1-2, Kim's Table I and Figs. 7-9), the smallest effect that counts is **half the effect
  the paper reports**: a single run has no interval, and half its effect is the least that can
  still be called the effect the paper shows; larger effects reproduce (open far end);
- where it gives only a word or a plot ("remarkable", "consistently better", a frontier below
  another), a declared smallest effect, stated with its reason in ``why``; these are our
  declarations, not numbers read from the paper, and are marked so.

``threshold``/``margin`` keep the claim's direction as the experiments test it (a difference
inside the margin is no difference). ``kind``/``grid``: the metric's kind, which chooses the
interval (:mod:`qoslab.verdicts.intervals`). ``precondition``: a condition the experiment
evaluates on its runs, without which the claim cannot be tested (``not testable here``).
``primary``: the readings the paper's text supports, declared per claim with the reason
(the study pages' "what the text supports" tables); the README's and the pages' counts use them.
"""

from __future__ import annotations

import importlib

from qoslab import studies
from qoslab.verdicts.claims import DECLARED_ONLY, HALF, Registry, Study
from qoslab.verdicts.core import Magnitude

__all__ = ["DECLARED", "DECLARED_ONLY", "HALF", "REGISTRY", "register_claims"]

#: the studies with verdicts (:func:`qoslab.studies.with_claims`), each declaring its claims as
#: objects in its ``claims`` module (:class:`qoslab.verdicts.claims.Registry`: a claim declared
#: twice is refused)
REGISTRY = Registry.of_modules(
    tuple(importlib.import_module(studies.module(name, "claims")) for name in studies.with_claims())
)

#: the declarations of each experiment with verdicts, derived from its declared claims
DECLARED: dict[str, tuple[Magnitude, ...]] = {name: REGISTRY.declared(name) for name in REGISTRY.studies}


def register_claims(study: Study) -> Study:
    """Adds the claims of a study outside the package (a plugin: ``register_claims(declare(NAME,
    ...))`` beside its ``register(Experiment(NAME, ...))``): its runs' records are then decided
    against these magnitudes, ``--sequential`` grows the sweeps each claim rests on, and a
    record that is no declared claim's part is refused, as for a shipped study. A name or a claim
    declared twice raises (:meth:`~qoslab.verdicts.claims.Registry.add`)."""
    REGISTRY.add(study)
    DECLARED[study.name] = REGISTRY.declared(study.name)
    return study
