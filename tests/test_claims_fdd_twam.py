"""Issue 77 item 3 for FDD-RED and TWAM: Figs. 10-11 carry a declared magnitude of their own,
Fig. 11 is judged per flow number (an N where FDD-RED drops more shows), and the metrics of
Fig. 8 (convergence time), Fig. 9 (queue fluctuation) and TWAM's slow-start count measure what
they say."""

import numpy as np
import pandas as pd

from qoslab.reproduction.rests_on import RESTS_ON
from qoslab.studies.fdd_red import dynamics as dyn
from qoslab.studies.red_baseline.paper import FLOWS
from qoslab.studies.twam_dwred.study import flows_with_timeouts
from qoslab.verdicts import DOES_NOT, REPRODUCES, finalise
from qoslab.verdicts.magnitudes import DECLARED, DECLARED_ONLY
from verdict_records import record  # noqa: E402

FIG11 = "FDD-RED has lower drop count than RED algorithm for different flow numbers"


def _rec(m, values: list[float], section: str, reading: str) -> dict:
    return record(m.match, section, reading, values)


def test_figs_10_11_declare_their_own_magnitude_not_table_1s():
    decls = [m for m in DECLARED["fdd-red"] if m.match.startswith(("According to this figure", FIG11))]
    assert len(decls) == 1 + len(FLOWS)
    for m in decls:
        assert DECLARED_ONLY in m.why and "−27.5" not in m.paper and m.high == -0.10


def test_fig_11_is_judged_per_flow_number_and_an_n_with_more_drops_shows():
    decls = [m for m in DECLARED["fdd-red"] if m.match == FIG11]
    assert sorted(m.part for m in decls) == sorted(f"N = {n}" for n in FLOWS)
    by_n = {m.part: m for m in decls}
    # FDD-RED drops 32 % more at N = 10 and 30 % fewer at N = 50, in six seeds each
    more = [0.30, 0.35, 0.28, 0.33, 0.31, 0.34]
    fewer = [-0.30, -0.28, -0.33, -0.31, -0.29, -0.32]
    recs = [
        _rec(
            by_n["N = 10"], more, "Sec. III-C, Fig. 11 (20 s), N = 10 flows", "shares, estimator, window 20"
        ),
        _rec(
            by_n["N = 50"], fewer, "Sec. III-C, Fig. 11 (20 s), N = 50 flows", "shares, estimator, window 20"
        ),
    ]
    out = {r["part"]: r["verdict"] for r in finalise(decls, recs, "run")}
    assert out == {"N = 10": DOES_NOT, "N = 50": REPRODUCES}


def test_the_new_claims_rest_on_the_dynamics_sweep():
    fdd = RESTS_ON["fdd-red"]
    for words in ("converges more rapidly", "queue length fluctuation", "queue size"):
        (key,) = [k for k in fdd if words in k]
        assert "dynamics" in fdd[key]
    assert RESTS_ON["twam-dwred"]["no TCP flow experiences a Slow Start phase when TWAM+DWRED is used"] == (
        "s12",
    )


def _flow_series(totals: list[float], step: float = 0.05, flows: int = 5) -> pd.DataFrame:
    rows = []
    for k, tot in enumerate(totals):
        for f in range(flows):
            rows.append({"time_s": (k + 1) * step, "flow_name": f"ftp{f}", "throughput_bps": tot / flows})
    return pd.DataFrame(rows)


def test_convergence_is_the_time_from_which_the_link_stays_full():
    # 20 s at 50 ms: below 95 % of the link until 3 s and once more in (6.0, 6.5], full after
    tot = [0.5e6] * 60 + [1e6] * 60 + [0.8e6] * 10 + [1e6] * 270
    assert dyn.converged_full(_flow_series(tot)) == 6.5
    assert dyn.converged_full(_flow_series([1e6] * 400)) == 0.0
    # a run whose last bin is short counts as the run's end
    assert dyn.converged_full(_flow_series([1e6] * 390 + [0.5e6] * 10)) == 20.0


def test_fair_convergence_reads_the_shares_not_the_total():
    rows = []
    for k in range(400):
        t = (k + 1) * 0.05
        for f in range(5):
            share = 1e6 if (f == 0 and t <= 5.0) else (0.0 if t <= 5.0 else 2e5)
            rows.append({"time_s": t, "flow_name": f"ftp{f}", "throughput_bps": share})
    df = pd.DataFrame(rows)
    assert dyn.converged_full(df) == 0.0  # the link is full throughout
    # one flow holds the link until 5 s: the 2 s windows reaching back before 5 s are unfair
    assert 5.0 < dyn.converged_fair(df) <= 7.0


def test_queue_fluctuation_is_the_std_of_the_bottleneck_queue_in_the_window():
    t = np.arange(1, 401) * 0.05
    q = pd.DataFrame(
        {
            "time_s": np.concatenate([t, t]),
            "queue": ["bottleneck:ab"] * 400 + ["access0:ab"] * 400,
            "queue_packets": np.concatenate([40 + 10 * np.sign(np.sin(t * 7)), np.zeros(400)]),
        }
    )
    s = dyn._queue(q, 0.0, 20.0)
    assert len(s) == 400
    assert abs(dyn.QUEUE_STATS["std"](s) - 10.0) < 0.5
    assert abs(dyn.QUEUE_STATS["mean"](s) - 40.0) < 1.0
    assert abs(dyn.QUEUE_STATS["CV"](s) - 0.25) < 0.02


def test_slow_start_count_is_the_flows_with_a_timeout_per_seed():
    tf = pd.DataFrame(
        {
            "seed": [1, 1, 1, 2, 2, 2],
            "timeouts": [0, 2, 1, 0, 0, 0],
            "window_timeouts": [0, 1, 0, 0, 0, 0],
        }
    )
    assert flows_with_timeouts(tf, "timeouts").to_dict() == {1: 2.0, 2: 0.0}
    assert flows_with_timeouts(tf, "window_timeouts").to_dict() == {1: 1.0, 2: 0.0}
    (m,) = [m for m in DECLARED["twam-dwred"] if "Slow Start" in m.match]
    assert m.kind == "discrete" and m.high == 0.0 and m.threshold == 0.5
