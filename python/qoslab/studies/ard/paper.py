"""The ARD experiment's declarations (:mod:`qoslab.studies.ard.study`): the paper's numbers, the
settings of what it leaves open and their readings, with what its text says of each."""

from __future__ import annotations

from typing import Any

PAPER = (
    'K. Hur, "Performance Analysis of Random Early Dropping Effect at an Edge Router for TCP '
    'Fairness of DiffServ Assured Service" (`../shared/papers/hur-ard-marker.md`)'
)
METRICS = ("qoslab.studies.ard.study:run_metrics",)

#: Table 1 (Jain's index) of the paper: (flows, scheme) -> value.
TABLE1 = {
    (4, "rio"): 0.786,
    (4, "arm"): 0.990,
    (4, "ard"): 0.999,
    (20, "rio"): 0.852,
    (20, "arm"): 0.950,
    (20, "ard"): 0.991,
}
#: Section III: λ_IN, λ_OUT measured over the first nτ and the TPR they give (bit/s).
#: ARM/ARD's re-marking and drop threshold (packets), the paper's T_rd.
T_RD = 15
LAMBDAS = {4: (494e3, 546e3, 570e3), 20: (1658e3, 4102e3, 1727e3)}

SETTINGS: dict[str, dict[str, Any]] = {
    "stated": {"host_cbs_bytes": 2000},
    "cbs10": {"host_cbs_bytes": 10_000},
    "rtt8": {"host_cbs_bytes": 2000, "rtt_ratio": 8.0},
    "rtt10b1": {"host_cbs_bytes": 1000, "rtt_ratio": 10.0, "rtt_min_ms": 20.0},
}
SETTING_TEXT = {
    "stated": "paper's parameters, host bucket 2 packets",
    "cbs10": "paper's parameters, host bucket 10 packets",
    "rtt8": "RTTs spread 8:1 (26-208 ms), host bucket 2 packets",
    "rtt10b1": "RTTs spread 10:1 (20-200 ms), host bucket 1 packet",
}
#: The settings as readings (verdicts' ``reading``) and what the paper's text says about each.
SETTING_READING = {
    "stated": "paper's RTTs, host bucket 2 pkts",
    "cbs10": "paper's RTTs, host bucket 10 pkts",
    "rtt8": "RTTs 8:1 (26-208 ms), host bucket 2 pkts",
    "rtt10b1": "RTTs 10:1 (20-200 ms), host bucket 1 pkt",
}
SETTING_SUPPORT = {
    "stated": "the text's RTTs and parameters; the host bucket depth is not given: 2 packets is the depth "
    "at which our λ_IN matches the paper's 494 kbps",
    "cbs10": "the text's RTTs and parameters; the host bucket depth is not given: 10 packets is as "
    "consistent with the text (λ_IN ~920 kbps against the paper's 494)",
    "rtt8": "a regime beyond the text (its RTTs span 26-32 / 26.4-34 ms), where RIO alone is measurably "
    "unfair",
    "rtt10b1": "a regime beyond the text (its RTTs span 26-32 / 26.4-34 ms): 1-packet host buckets and "
    "RTTs spread 10:1",
}
#: The measurement windows: the paper's (Table 1 and Figs. 8) and the start-up.
PERIODS = {"steady": "100-200 s", "startup": "0-20 s"}
#: Table 1's window (s), shaded on the time series.
STEADY_WINDOW = (100.0, 200.0)
PERIOD_SUPPORT = {
    "steady": "the text: 'we compare the throughputs ... during the second 100 sec time interval'",
    "startup": "not Table 1's window (the text measures 100-200 s): the start-up, where RIO alone is least "
    "fair and ARM/ARD still fill at TPR = TPR_max (the first nτ = 100 s)",
}
#: Settings also measured over the start-up window (20 s runs: the first 20 s of the 200 s runs,
#: since nothing after 20 s changes what happens before it).
STARTUP_SETTINGS = ("stated", "rtt8", "rtt10b1")
#: ARD's two drop orders, as readings, and what the text says about each.
DROP_ORDERS = {"before_remark": "drop before re-mark", "among_remarked": "drop among re-marked"}
DROP_SUPPORT = {
    "before_remark": "the text: the dropper 'drops excessive incoming IN packets randomly with a constant "
    "probability P_drop, only when the token level ... stays in the remarking and drop region'",
    "among_remarked": "the text: 'an aggregate dropper is combined to drop some excessive IN packets ... "
    "instead of remarking them to OUT'; equally plausible",
}
CBS_PKTS = (1, 2, 3, 5, 10)
WINDOWS = (8, 20, 64)
RTT_RATIOS = (1.2, 2.0, 4.0, 8.0)
FLOWS = (4, 10, 20, 40)
#: The (flows, setting) cases of the time-series figures (Figs. 4-7).
TIMESERIES = ((4, "stated"), (20, "stated"), (4, "rtt8"))
