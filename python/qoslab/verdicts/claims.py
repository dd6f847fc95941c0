"""Each claim of a paper declared once, as an object, and the registry the verdict rules read.

A :class:`PaperClaim` carries the paper's words with their place (section, figure, table), how
the study's analysis tests its sign (direction, threshold and margin, the paper's numbers set
beside ours, the unit), its parts (:class:`Part`: each part's direction, the paper's magnitude
with its source, the metric's kind, its precondition and the readings the text supports) and the
sweeps its verdict records rest on. A study declares its claims in one module
(``qoslab.studies.<study>.claims``) with :func:`declare`; its analysis makes every verdict
from those objects (:meth:`PaperClaim.one_sample`, :meth:`PaperClaim.paired`,
:meth:`PaperClaim.at`), so the words a record carries are the object's, never retyped.

:class:`Registry` holds the declared studies and derives what the rules and the sequential
design read: the :class:`~qoslab.verdicts.core.Magnitude` declarations of a study
(``qoslab.verdicts.magnitudes.DECLARED``) and the sweeps each claim rests on
(``qoslab.reproduction.rests_on.RESTS_ON``). It refuses a claim declared twice (the same words at
the same place, in one study or two) and finds the object a record was made from by its exact
words, place and part (:meth:`Registry.part_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from qoslab.stats import Estimate, Paired
from qoslab.verdicts.core import Claim, Direction, Magnitude, Quantity, Verdict

#: the source of a magnitude that halves a single run's effect (``verdicts/magnitudes.py``)
HALF = "half the effect of the paper's single run"
#: the source of a magnitude the paper gives no number for
DECLARED_ONLY = "declared by us: the paper gives only a plot or a word, no number"

#: a claim part's key: the claim's words, the part's place and the part's name
Key = tuple[str, str, str]


class Verdicts(Protocol):
    """Where an analysis hands its verdicts (the runner's ``Context``): a study's claims module
    names this, not the runner, so the declarations import nothing of the machinery."""

    def verdict(self, v: Verdict) -> Verdict: ...


@dataclass(frozen=True)
class Part(Quantity):
    """One part of a paper's claim (a claim with one part has one, named ""), as a quantity: the
    fields of :class:`~qoslab.verdicts.core.Quantity` (see there), and ``name``: the part's name
    (the records' ``part``); ``place``: where the part's records are, when that is not the
    claim's place (a part per flow count or unit); ``borrow``: the claim on whose records this
    part is tested (its copies carry that claim's place)."""

    name: str = ""
    place: str = ""
    borrow: PaperClaim | None = None


@dataclass(frozen=True)
class PaperClaim:
    """A claim of a paper, declared once (see the module's text).

    - ``words``: the paper's words as the records quote them; ``place``: where they are;
    - ``direction``/``threshold``/``margin``: the sign test the analysis runs (the record's
      ``sign_verdict``); ``stated``: the paper's numbers set beside ours (the record's
      ``paper``); ``unit``/``scale``/``digits``: how ours are written;
    - ``parts``: the claim's parts (at least one);
    - ``rests_on``: the sweeps whose runs the analysis reads for the claim's records (every part's
      and every reading's: ``--sequential`` grows them while a record is undecided)."""

    words: str
    place: str
    direction: Direction
    stated: str
    parts: tuple[Part, ...]
    rests_on: tuple[str, ...]
    threshold: float = 0.0
    margin: float = 0.0
    unit: str = ""
    scale: float = 1.0
    digits: int = 3

    def __post_init__(self) -> None:
        if not self.words.strip() or not self.place.strip():
            raise ValueError(
                f"a paper's claim needs its words and its place: {self.words!r} at {self.place!r}"
            )
        if not self.parts:
            raise ValueError(f"claim {self.words!r} ({self.place}): declares no part")
        if not self.rests_on:
            raise ValueError(f"claim {self.words!r} ({self.place}): declares no sweep it rests on")
        keys = [self.key(p) for p in self.parts]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"claim {self.words!r}: part {twice[0][2]!r} at {twice[0][1]!r} declared twice")

    def place_of(self, part: Part) -> str:
        """Where ``part``'s records are: its own place, the lender's for a borrowed part, else
        the claim's."""
        if part.place:
            return part.place
        return part.borrow.place if part.borrow is not None else self.place

    def key(self, part: Part) -> Key:
        return (self.words, self.place_of(part), part.name)

    def at(self, place: str | None = None, stated: str | None = None, unit: str | None = None) -> Claim:
        """The sign test of the claim's records at ``place`` (default: the claim's place; else
        one of its parts' places), with the paper's numbers ``stated`` and ours in ``unit``
        (default: the claim's)."""
        where = self.place if place is None else place
        places = {self.place} | {self.place_of(p) for p in self.parts if p.borrow is None}
        if where not in places:
            raise ValueError(f"claim {self.words!r}: no part declared at {where!r}")
        return Claim(
            self.words,
            where,
            self.direction,
            self.stated if stated is None else stated,
            threshold=self.threshold,
            margin=self.margin,
            unit=self.unit if unit is None else unit,
            scale=self.scale,
            digits=self.digits,
        )

    def paired(self, reading: str, test: Paired, **kw: Any) -> Verdict:
        """:meth:`~qoslab.verdicts.core.Claim.paired` at the claim's place."""
        return self.at().paired(reading, test, **kw)

    def one_sample(self, reading: str, est: Estimate, **kw: Any) -> Verdict:
        """:meth:`~qoslab.verdicts.core.Claim.one_sample` at the claim's place."""
        return self.at().one_sample(reading, est, **kw)

    def magnitudes(self) -> tuple[Magnitude, ...]:
        """The parts as the rules' declarations (their text is the claim's whole words, their
        section the part's whole place)."""
        return tuple(
            Magnitude(
                **{f.name: getattr(p, f.name) for f in fields(Quantity)},
                match=self.words,
                section=self.place_of(p),
                part=p.name,
                borrow=p.borrow.words if p.borrow is not None else "",
            )
            for p in self.parts
        )


@dataclass(frozen=True)
class Study:
    """A study's declared claims (:func:`declare`), in the order its pages list them."""

    name: str
    claims: tuple[PaperClaim, ...]


def declare(name: str, *claims: PaperClaim) -> Study:
    """The claims of study ``name``; refuses a claim declared twice (:func:`refuse_twice`)."""
    refuse_twice((name, c) for c in claims)
    return Study(name, tuple(claims))


def refuse_twice(claims: Iterable[tuple[str, PaperClaim]]) -> None:
    """Raises when two declared objects are one claim: the same words at the same place (the
    claim's, or one of a part's), naming the studies that declare it."""
    seen: dict[tuple[str, str], str] = {}
    for study, c in claims:
        places = {c.place} | {c.place_of(p) for p in c.parts if p.borrow is None}
        for place in sorted(places):
            where = seen.get((c.words, place))
            if where is not None:
                raise ValueError(
                    f"claim {c.words!r} at {place!r} is declared twice (in {where} and in {study}): "
                    "declare each claim once and refer to that object"
                )
            seen[(c.words, place)] = study


class Registry:
    """The declared studies (see the module's text); ``files``: the modules that declare them,
    in the studies' order (``file_of``: by study). A study's verdict files are sealed with the
    rules' fingerprint of its own declarations (:func:`qoslab.verdicts.currency.rules_fingerprint`):
    a changed magnitude re-decides that study's files, no other's."""

    @classmethod
    def of_modules(cls, modules: Sequence[ModuleType]) -> Registry:
        """The studies declared by ``modules`` (each module's ``CLAIMS``, a :class:`Study`)."""
        studies = []
        for mod in modules:
            study = getattr(mod, "CLAIMS", None)
            if not isinstance(study, Study):
                raise ValueError(f"module {mod.__name__}: CLAIMS must be the study's declare(...)")
            studies.append(study)
        return cls(studies, tuple(Path(str(mod.__file__)) for mod in modules))

    def __init__(self, studies: Sequence[Study], files: Sequence[Path] = ()) -> None:
        self.files = tuple(files)
        names = [s.name for s in studies]
        if self.files and len(self.files) != len(names):
            raise ValueError(f"{len(names)} studies declared by {len(self.files)} modules")
        #: the module that declares each shipped study (a plugin's :meth:`add` has none here: its
        #: claims are its own package's, which its experiment fingerprint covers)
        self.file_of: dict[str, Path] = dict(zip(names, self.files, strict=False))
        again = sorted({n for n in names if names.count(n) > 1})
        if again:
            raise ValueError(f"study {again[0]!r} is declared twice")
        refuse_twice((s.name, c) for s in studies for c in s.claims)
        self.studies: dict[str, Study] = {s.name: s for s in studies}
        self._parts: dict[str, dict[Key, tuple[PaperClaim, Part]]] = {
            s.name: {c.key(p): (c, p) for c in s.claims for p in c.parts} for s in studies
        }

    def add(self, study: Study) -> None:
        """Adds a study declared outside the package (a plugin's :func:`declare`); refuses a name
        already declared, or a claim any declared study has (``files``, the shipped declarations
        the rules' fingerprint covers, is unchanged)."""
        if study.name in self.studies:
            raise ValueError(f"study {study.name!r} is declared twice")
        declared = [(s.name, c) for s in self.studies.values() for c in s.claims]
        refuse_twice([*declared, *((study.name, c) for c in study.claims)])
        self.studies[study.name] = study
        self._parts[study.name] = {c.key(p): (c, p) for c in study.claims for p in c.parts}

    def declared(self, study: str) -> tuple[Magnitude, ...]:
        """Study ``study``'s declarations, claim by claim and part by part."""
        return tuple(m for c in self.studies[study].claims for m in c.magnitudes())

    def rests_on(self, study: str) -> dict[str, tuple[str, ...]]:
        """The sweeps each claim of ``study`` rests on, by its words (a claim declared at several
        places rests on the union, in declaration order)."""
        out: dict[str, tuple[str, ...]] = {}
        for c in self.studies[study].claims:
            had = out.get(c.words, ())
            out[c.words] = had + tuple(s for s in c.rests_on if s not in had)
        return out

    def part_of(self, study: str, record: Mapping[str, Any]) -> tuple[PaperClaim, Part]:
        """The declared claim and part a verdict record of ``study`` was made from, by its exact
        words, place and part (a borrowed copy: the compound claim's part it was copied for)."""
        key = (str(record["claim"]), str(record["section"]), str(record.get("part", "")))
        found = self._parts.get(study, {}).get(key)
        if found is None:
            raise ValueError(
                f"study {study}: no declared claim has the words {key[0]!r} at {key[1]!r} (part {key[2]!r})"
            )
        claim, part = found
        if (part.borrow is not None) != bool(record.get("borrowed_from")):
            raise ValueError(f"study {study}: a record of {key[0]!r} and its part disagree on borrowing")
        return found

    def checked(self, study: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``records`` of ``study``, each found to be one declared claim's part
        (:meth:`part_of` raises for one that is not); a study not declared here passes as is."""
        for r in records if study in self.studies else ():
            self.part_of(study, r)
        return records
