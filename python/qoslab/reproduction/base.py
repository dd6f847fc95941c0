"""What an experiment is: a registered, named description of sweeps, published numbers and the
analysis that turns stored runs into tables and figures.

An experiment module builds an :class:`Experiment` and calls :func:`register` at import time;
:data:`BUILTIN` lists the modules :func:`get` imports. A user's own experiments need no change
to the package: a module (or ``.py`` file) named in ``$QOSLAB_PLUGINS``, or an installed
package's entry point in the group ``qoslab.experiments``, is imported with the built-in ones
(:func:`load_plugin` imports one from Python). See ``studies/red_baseline/`` for a complete example
and ``docs/experiments.md`` for the guide.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab import studies
from qoslab.scenario import Scenario, load_scenario

#: Modules that define the experiments shipped with qoslab (imported on first lookup): each
#: study's ``study`` module, from the list of studies (:data:`qoslab.studies.STUDIES`).
BUILTIN: tuple[str, ...] = tuple(studies.module(name) for name in studies.STUDIES)

Point = tuple[dict[str, Any], Scenario]


class UnknownExperiment(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Sweep:
    """A named set of scenario points, each run with every seed. ``points`` pairs the
    parameters shown in tables with the scenario they produce (see
    :func:`qoslab.runs.sweep.override_points` and :func:`qoslab.runs.sweep.grid`)."""

    name: str
    points: Sequence[Point]
    seeds: Sequence[int]
    description: str = ""
    metrics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.points:
            raise ValueError(f"sweep {self.name!r} has no points")
        if not self.seeds:
            raise ValueError(f"sweep {self.name!r} has no seeds")

    @property
    def params(self) -> list[str]:
        keys: list[str] = []
        for p, _ in self.points:
            keys.extend(k for k in p if k not in keys)
        return keys


@dataclass(frozen=True)
class Reference:
    """A published number and where our counterpart comes from: ``metric`` of the runs of
    ``sweep`` whose parameters match ``where``. A metric ``flow:COLUMN`` reads the per-flow
    table (select the flow with ``where={"flow_name": ...}``)."""

    id: str
    source: str
    quantity: str
    value: float
    sweep: str
    metric: str
    where: Mapping[str, Any] = field(default_factory=dict)
    unit: str = ""


@dataclass(frozen=True)
class Window:
    """Who sets an experiment's measurement window (when its runs start being measured and how
    long they last): the paper (``fixed_by_paper``, ``cited`` quoting the paper's words and
    where they are) or we (``cited`` saying why: the paper states no length, or the study is our
    own). Only a window of ours may start where a run's own warm-up ends (``--warmup mser5``,
    :mod:`qoslab.reproduction.warmup_window`); a paper's window is never moved."""

    fixed_by_paper: bool
    cited: str


@dataclass(frozen=True)
class Options:
    """How an experiment is being run: quick or full, with which seeds, in which flavour
    (None: each mechanism as the experiment defines it; "ns2": every mechanism that has ns-2.35
    dsRED's flavour switched to it, see :func:`qoslab.ns2.flavour.ns2_flavoured`) and with which
    TCP senders (None: as the paper's scenarios give them; a variant such as "cubic": every TCP
    sender runs it, see :meth:`qoslab.Scenario.with_tcp_variant`) in which transport flavour
    (None: the scenarios' own, ns-2's one-way agents by default; "linux": ``tcp.flavour``
    "linux" for every TCP sender, docs/models/tcp-linux.md), with which host timing noise
    (``timing``)."""

    quick: bool
    seeds: list[int]
    flavour: str | None = None
    sender: str | None = None
    tcp_flavour: str | None = None
    #: None: each scenario's own timing (exact unless it declares ``[timing]``); else the
    #: ``timing.jitter`` every run takes: a preset ("testbed": the kernel testbed's measured noise,
    #: the linux flavour's validated configuration; "exact") or a bound ("50us").
    timing: str | None = None
    #: None: each run measured over the window its scenario declares; "mser5": an experiment
    #: whose window is ours starts measuring where MSER-5 finds the warm-up ends (see
    #: :mod:`qoslab.reproduction.warmup_window`).
    warmup: str | None = None


@dataclass(frozen=True)
class Experiment:
    """A reproducible experiment.

    ``plan(options)`` returns its sweeps; ``analyse(ctx)`` writes its tables, figures and text
    through the :class:`~qoslab.reproduction.runner.Context`; ``references`` are the published
    numbers compared in the report. ``seeds``/``quick_seeds`` are the default numbers of seeds.
    """

    name: str
    title: str
    paper: str
    summary: str
    plan: Callable[[Options], list[Sweep]]
    #: Called with the runner's :class:`~qoslab.reproduction.runner.Context` (not named here: the
    #: runner imports this module, and a type-checking import back would be a loop).
    analyse: Callable[[Any], None]
    references: tuple[Reference, ...] = ()
    seeds: int = 10
    quick_seeds: int = 3
    notes: str = ""
    #: How the README's table of studies names the paper ("Hur, ARD marker"); experiments
    #: without one (e.g. a baseline of another study) give no verdicts.
    study: str = ""
    #: The experiment compares TCP senders itself (its sweeps set ``tcp.variant``), so a
    #: reproduction with every sender replaced (``--sender``) would be meaningless: refused.
    own_senders: bool = False
    #: Who sets the measurement window (None: undeclared, as a plugin may leave it; then the
    #: warm-up is reported but ``--warmup`` is refused).
    window: Window | None = None


_REGISTRY: dict[str, Experiment] = {}
_loaded = False


def register(exp: Experiment) -> Experiment:
    """Adds ``exp`` to the registry (its name must be new)."""
    if exp.name in _REGISTRY and _REGISTRY[exp.name] is not exp:
        raise ValueError(f"an experiment named {exp.name!r} is already registered")
    _REGISTRY[exp.name] = exp
    return exp


def _load_builtins() -> None:
    global _loaded, _plugins_loaded
    if not _loaded:
        for mod in BUILTIN:
            importlib.import_module(mod)
        _loaded = True
    if not _plugins_loaded:
        _plugins_loaded = True  # first, so that a plugin that lists experiments does not recurse
        _load_plugins()


#: Environment variable naming the user's experiment modules: module names or ``.py`` paths,
#: separated by commas (``QOSLAB_PLUGINS=my_experiments,./study.py qoslab reproduce --list``).
PLUGINS_ENV = "QOSLAB_PLUGINS"
#: Entry-point group of installed packages' experiments; an entry names a module that registers
#: at import, or an :class:`Experiment` (``[project.entry-points."qoslab.experiments"]``).
ENTRY_POINT_GROUP = "qoslab.experiments"
_plugins_loaded = False


class PluginError(ValueError):
    """A user's experiment module could not be loaded (the message names it and where it was
    listed)."""


def load_plugin(spec: str, *, origin: str = "load_plugin") -> None:
    """Imports a user's experiment module, which registers its experiments: a module name
    (``"my_experiments"``, found on ``sys.path``) or the path of a ``.py`` file. Loading the same
    module or file again does nothing."""
    try:
        if spec.endswith(".py") or os.sep in spec:
            path = Path(spec).resolve()
            digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
            name = f"qoslab_plugin_{path.stem}_{digest}"
            if name in sys.modules:
                return
            found = importlib.util.spec_from_file_location(name, path)
            if found is None or found.loader is None or not path.is_file():
                raise FileNotFoundError(f"no such file: {path}")
            module = importlib.util.module_from_spec(found)
            sys.modules[name] = module
            try:
                found.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
        else:
            importlib.import_module(spec)
    except Exception as e:  # any failure of the user's code becomes one clear error
        raise PluginError(f"cannot load experiment plugin {spec!r} (from {origin}): {_reason(e)}") from e


def _reason(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _load_plugins() -> None:
    for spec in os.environ.get(PLUGINS_ENV, "").split(","):
        if spec.strip():
            load_plugin(spec.strip(), origin=f"${PLUGINS_ENV}")
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {ep.name!r} of group {ENTRY_POINT_GROUP!r}"
        try:
            obj = ep.load()
        except Exception as e:
            raise PluginError(f"cannot load experiment plugin {ep.value!r} ({origin}): {_reason(e)}") from e
        if isinstance(obj, Experiment):
            register(obj)
        elif not isinstance(obj, type(sys)):
            raise PluginError(f"{ep.value!r} ({origin}) is neither a module nor an Experiment: {obj!r}")


def available() -> list[Experiment]:
    """Every registered experiment, by name."""
    _load_builtins()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get(name: str) -> Experiment:
    """The experiment called ``name``; :class:`UnknownExperiment` lists the known ones."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownExperiment(f"unknown experiment {name!r} (known: {known})") from None


def scenarios_dir() -> Path:
    """Where the shipped scenario files are: ``$QOSLAB_SCENARIOS``, else the repository's
    ``scenarios/`` next to the package source, else ``./scenarios``."""
    env = os.environ.get("QOSLAB_SCENARIOS")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[3] / "scenarios"
    if repo.is_dir():
        return repo
    return Path("scenarios")


def scenario(name: str, overrides: Sequence[str] = ()) -> Scenario:
    """A shipped scenario file by name (``"fdd-red-s1"``), with ``--set``-style overrides."""
    return load_scenario(scenarios_dir() / f"{name}.toml").with_overrides(list(overrides))
