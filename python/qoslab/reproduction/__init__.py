"""Reproducible experiments: a registry of named experiments, each a set of sweeps over
scenarios and seeds, the published numbers it is compared with, and an analysis that writes
tables, figures and ``report.md`` into ``results/NAME/``.

>>> from qoslab import reproduction
>>> [e.name for e in reproduction.available()]                       # doctest: +SKIP
['red-baseline']
>>> reproduction.reproduce("red-baseline", quick=True)               # doctest: +SKIP
"""

from qoslab.reproduction.base import (
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
from qoslab.reproduction.runner import Context, Reproduction, reproduce, select

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
