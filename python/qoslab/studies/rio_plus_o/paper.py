"""The paper's values for ``rio-plus-o`` (:mod:`qoslab.studies.rio_plus_o.study`): the RIO-C and RI+O
curves, Table I's profiles, buckets and rows, the settings and w_q readings the paper leaves open
(with what its text says of each), the swept BE counts, levels and granularities, and the
published numbers compared with."""

from __future__ import annotations

from typing import Any

from qoslab.reproduction.base import Reference

PAPER = (
    'H.-G. Kim, "A modified RIO for Improving Assured Service Performance" '
    "(`../shared/papers/kim-rio-plus-o.md`)"
)

#: RIO-C parameters of the paper (Sec. 4): IN 60/180/0.02, IN+OUT 30/90/0.05; RI+O adds OUT
#: 10/30/0.1 on avg_out.
IN_CURVE = {"min_th": 60, "max_th": 180, "max_p": 0.02}
TOTAL_CURVE = {"min_th": 30, "max_th": 90, "max_p": 0.05}
OUT_CURVE = {"min_th": 10, "max_th": 30, "max_p": 0.1}
#: Table I token bucket: (i+1)·320 KB for a profile of (i+1)·270 kbps, i.e. ~9.5 s of profile.
BUCKET_SECONDS = 320e3 * 8 / 270e3


KINDS = {"rio": "RIO", "rio_plus_o": "RI+O"}
#: Every queue run, the baseline in both flavours: ns-2.35 dsRED's RIO (the paper's simulator,
#: ref. [15]) next to RIO-C as its sources define it (RI+O has no ns-2 counterpart).
ALL_KINDS = {"rio": "RIO", "rio_ns2": "RIO (ns2)", "rio_plus_o": "RI+O"}
#: The baseline's flavours as readings: the RIO kind each one compares RI+O with.
BASELINES = {"rio": "reference RIO", "rio_ns2": "ns2 RIO"}
BASELINE_SUPPORT = {
    "rio": "RIO-C as Clark & Fang [6] define it",
    "rio_ns2": "RIO as ns-2.35's dsRED runs it (the paper used ns-2, ref. [15])",
}
#: Table I profiles and token buckets as the paper states them.
T1_PROFILES = tuple(270e3 * (i + 1) for i in range(5))
T1_BUCKETS = tuple(320e3 * (i + 1) for i in range(5))
#: Named settings of the parameters the paper leaves open: the TCP advertised window (packets)
#: and the token bucket size as a fraction of the stated (i+1)·320 KB.
SETTINGS: dict[str, dict[str, Any]] = {
    "stated": {
        "window": 1000,
        "bucket_scale": 1.0,
        "label": "stated: buckets (i+1)·320 KB, window not limiting",
        "figs": "buckets 9.5 s of profile (Table I's ratio), window not limiting",
    },
    "win20": {
        "window": 20,
        "bucket_scale": 1.0,
        "label": "window cap 20 pkts (ns-2 default window_), buckets as stated",
        "figs": "window cap 20 pkts, buckets 9.5 s of profile",
    },
    "kbit": {
        "window": 1000,
        "bucket_scale": 1 / 8,
        "label": "'320KB' read as 320 kbit: buckets (i+1)·40 KB, window not limiting",
        "figs": "buckets 1.2 s of profile, window not limiting",
    },
    "bucket4k": {
        "window": 1000,
        "bucket_scale": 1 / 80,
        "label": "small buckets (i+1)·4 KB, window not limiting",
        "figs": "small buckets, 0.12 s of profile, window not limiting",
    },
}
#: What the paper's text says about each setting (Table I states its buckets; Figs. 7-9 do not).
SETTING_SUPPORT = {
    "stated": "Table I's buckets as printed ('(flowid+1) 320KB'); no window is given, and Figs. 7-9 "
    "state no bucket (we keep Table I's 9.5 s of profile)",
    "win20": "buckets as printed; ns-2's default advertised window (the paper defers 'other parameters' "
    "to [12], an ns-2 study, and gives no window)",
    "kbit": "'KB' read as kilobits (40 KB buckets): the printed unit is ambiguous in a paper that writes "
    "rates as 'Kbps'",
    "bucket4k": "not the printed Table I bucket (ruled out there by '(flowid+1) 320KB'; run as the setting "
    "that gives the paper's RIO row); open for Figs. 7-9, whose buckets are not stated",
}
#: w_q readings: the paper gives no value in Sec. 4; Sec. 2 uses "a large w_q" (no value) for
#: the same topology and RIO parameters.
W_QS = (0.002, 0.02, 0.2)
#: The w_q readings of Figs. 7-9 (the default and the large one).
FIG_W_QS = (0.002, 0.2)
W_Q_SUPPORT = {
    0.002: "RED's customary weight (Floyd & Jacobson [11]; ns-2's q_weight_ default): Sec. 4 states no w_q",
    0.02: "an intermediate 'large w_q' (Sec. 2 gives no value)",
    0.2: "Sec. 2 (Fig. 2, the same topology and RIO parameters as Table I): 'we use a large w_q for RIO "
    "in this experiment'; 0.2 is our value for 'large'",
}
#: The sensitivity grid (full mode).
WINDOWS = (20, 1000)
BUCKET_SCALES = (1.0, 1 / 8, 1 / 80)
LIMITS = (100, 250)
#: Table I's published rows: (profile, throughput, markin, markout, dropout, OUT drop rate).
TABLE1: dict[str, list[tuple[float, float, float, float, float, float]]] = {
    "rio_plus_o": [
        (270e3, 570955, 27563, 35193, 852, 0.024),
        (540e3, 888546, 55999, 41001, 616, 0.015),
        (810e3, 1067381, 84353, 31779, 468, 0.015),
        (1080e3, 1220620, 109991, 22707, 461, 0.020),
        (1350e3, 1425098, 136643, 18135, 386, 0.021),
        (0.0, 236753, 0, 26936, 1270, 0.047),
    ],
    "rio": [
        (270e3, 292272, 27567, 4771, 626, 0.131),
        (540e3, 563199, 55307, 6196, 401, 0.064),
        (810e3, 782717, 80548, 4644, 315, 0.067),
        (1080e3, 961649, 102115, 2433, 318, 0.130),
        (1350e3, 1221734, 130057, 2593, 227, 0.087),
        (0.0, 308349, 0, 33971, 541.8, 0.015),
    ],
}
#: Fig. 7: BE counts, and the paper's BE count where the AS flows stop meeting the profile.
BE_COUNTS = (0, 1, 2, 6, 11, 16, 26, 46)
BE_COUNTS_QUICK = (0, 6, 16, 46)
FIG7_PAPER = {(40, "rio"): 13.0, (40, "rio_plus_o"): 30.0, (50, "rio"): 9.0, (50, "rio_plus_o"): 17.0}
#: Fig. 8: subscription levels (%) and profiles (bps).
LEVELS = tuple(range(10, 101, 10))
LEVELS_QUICK = (40, 60, 80, 100)
FIG8_PROFILES = (0.5e6, 1e6, 2e6)
#: Fig. 9: unit granularity (bps) -> number of AS flows.
GRANULARITY = {0.1e6: 13, 0.2e6: 9, 0.3e6: 7, 0.4e6: 6}


def setting_of(name: str) -> dict[str, Any]:
    s = SETTINGS[name]
    return {"window": s["window"], "bucket_scale": s["bucket_scale"]}


def t1_where(setting: str, w_q: float = 0.002) -> dict[str, Any]:
    """The parameters of one Table 1 reading's runs: the setting's window and bucket scale
    (:func:`setting_of`), the averaging weight ``w_q`` and the 250-packet buffer."""
    return {**setting_of(setting), "w_q": w_q, "buffer": 250}


#: Short forms of what the text says about each reading, for the verdict records.
T1_SETTING_NOTE = {
    "stated": "buckets as printed, window not given",
    "win20": "buckets as printed, ns-2's default window 20",
    "kbit": "'320KB' read as kbit",
    "bucket4k": "the printed '(flowid+1) 320KB' rules these buckets out for Table I: a diagnostic",
}
FIG_SETTING_NOTE = {
    "stated": "Table I's bucket/profile ratio (Figs. 7-9 state no bucket)",
    "bucket4k": "small buckets (Figs. 7-9 state no bucket)",
}
W_Q_NOTE = {
    0.002: "RED's default w_q (Sec. 4 states none)",
    0.02: "an intermediate 'large w_q' (Sec. 2, no value given)",
    0.2: "Sec. 2's 'large w_q' (our value)",
}
BASELINE_NOTE = {"rio": "RIO-C", "rio_ns2": "ns-2 dsRED's RIO (the paper's simulator)"}
FIG7_CLAIMS = {
    40: "In 40% subscription level, AS flows can maintain their profile rates until the number of BE flows "
    "is 13 with RIO and 30 with RI+O",
    50: "In 50% subscription level, 9 with RIO and 17 with RI+O",
}
FIG8_CLAIMS = {
    1.0: (
        "With 1Mbps profile rate, RIO can assure the profile rate up to 60% subscription level, but RI+O "
        "can assure it up to 80% subscription level",
        "60 % (RIO) → 80 % (RI+O): +20",
    ),
    2.0: (
        "Even with 2Mbps profile rate, RI+O can assure the profile rate until the subscription level "
        "reaches 60%, but RIO always fails to assure it",
        "never (RIO) → 60 % (RI+O)",
    ),
}
#: Fig. 8 as numbers: the highest subscription level (%) up to which the paper's text says each
#: scheme assures a profile (Mbps), from FIG8_CLAIMS' words; None: never.
FIG8_PAPER: dict[tuple[float, str], float | None] = {
    (1.0, "rio"): 60.0,
    (1.0, "rio_plus_o"): 80.0,
    (2.0, "rio"): None,
    (2.0, "rio_plus_o"): 60.0,
}
FIG9_PAPER_RIO = {0.1: 10, 0.2: 5, 0.3: 3, 0.4: 2}


def _references() -> tuple[Reference, ...]:
    refs = []
    for kind, label in KINDS.items():
        for i, row in enumerate(TABLE1[kind][:5]):
            refs.append(
                Reference(
                    f"t1-{kind}-as{i}",
                    "Table I",
                    f"{label} throughput of the {row[0] / 1e3:.0f}K flow, stated setting",
                    float(row[1]),
                    "table1",
                    "flow:throughput_bps",
                    {"kind": kind, **t1_where("stated"), "flow_name": f"as{i}"},
                    "bps",
                )
            )
    return tuple(refs)


REFERENCES = _references()
