"""qoslab: a fast, reproducible packet-level simulator for DiffServ traffic conditioners
and active queue management, with a Rust core.

>>> import qoslab
>>> sc = qoslab.load_scenario("scenarios/fdd-red-s1.toml")     # doctest: +SKIP
>>> res = qoslab.run(sc, seed=3)                               # doctest: +SKIP
>>> res.flows[["name", "throughput_bps"]]                      # doctest: +SKIP
"""

from qoslab._core import ScenarioError, __version__
from qoslab.scenario import Scenario, load_scenario
from qoslab.simulate import Result, run

__all__ = ["Result", "Scenario", "ScenarioError", "__version__", "load_scenario", "run"]
