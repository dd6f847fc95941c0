"""qoslab: a fast, reproducible packet-level simulator for DiffServ traffic conditioners
and active queue management, with a Rust core.

>>> import qoslab
>>> sc = qoslab.load_scenario("scenarios/fdd-red-s1.toml")     # doctest: +SKIP
>>> res = qoslab.run(sc, seed=3)                               # doctest: +SKIP
>>> res.flows[["name", "throughput_bps"]]                      # doctest: +SKIP

``import qoslab`` loads the core and the scenario loader only; numpy comes with the first run
and pandas with the first table a caller reads (see :mod:`qoslab.runs.simulate`).
:mod:`qoslab.builder` (typed scenario classes and topologies) is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qoslab._core import __version__
from qoslab.errors import ScenarioError
from qoslab.scenario import Scenario, load_scenario

if TYPE_CHECKING:
    from qoslab import builder
    from qoslab.runs.simulate import Result, run

__all__ = ["Result", "Scenario", "ScenarioError", "__version__", "builder", "load_scenario", "run"]


def __getattr__(name: str) -> Any:
    # `run` and `Result` live in qoslab.runs.simulate, imported on first use (it brings numpy).
    if name in ("run", "Result"):
        from qoslab.runs import simulate

        return getattr(simulate, name)
    if name == "builder":
        import qoslab.builder

        return qoslab.builder
    raise AttributeError(f"module 'qoslab' has no attribute {name!r}")
