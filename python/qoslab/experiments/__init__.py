"""Reproducible experiments: a registry of named experiments, each a set of sweeps over
scenarios and seeds, the published numbers it is compared with, and an analysis that writes
tables, figures and ``report.md`` into ``results/NAME/``.

>>> from qoslab import experiments
>>> [e.name for e in experiments.available()]                       # doctest: +SKIP
['red-baseline']
>>> experiments.reproduce("red-baseline", quick=True)               # doctest: +SKIP
"""

from qoslab.experiments.base import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    PLUGINS_ENV,
    Experiment,
    Options,
    PluginError,
    Point,
    Reference,
    Sweep,
    UnknownExperiment,
    Window,
    available,
    get,
    load_plugin,
    register,
    scenario,
    scenarios_dir,
)
from qoslab.experiments.runner import Context, Reproduction, reproduce, select

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "PLUGINS_ENV",
    "Context",
    "Experiment",
    "Options",
    "PluginError",
    "Point",
    "Reference",
    "Reproduction",
    "Sweep",
    "UnknownExperiment",
    "Window",
    "available",
    "get",
    "load_plugin",
    "register",
    "reproduce",
    "scenario",
    "scenarios_dir",
    "select",
]
