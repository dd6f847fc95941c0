"""Realistic workloads (issue 19): packet sizes drawn from distributions, finite TCP transfers
arriving as a Poisson process, Pareto ON/OFF and trace-driven sources, one-way delay and RFC 3550
jitter, and the errors bad workload input gets. Closed forms: Pollaczek–Khinchine's mean waiting
time of M/G/1, processor sharing's mean slowdown 1/(1 − ρ)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

import qoslab
from conftest import two_nodes
from qoslab.scenario import Scenario

ARR = '[[arrivals]]\nname = "w"\nsrc = "a"\ndst = "b"\nload = 0.5\n'
FLOW = '[[flow]]\nsrc = "a"\ndst = "b"\n'


def link(limit: str) -> str:
    return two_nodes(queue=f'queue = {{ type = "droptail", limit = "{limit}" }}')


def scenario(body: str, *, duration: str = "10s", limit: str = "1000000pkts", head: str = "") -> Scenario:
    return Scenario(f'name = "w"\nduration = "{duration}"\n{head}\n{link(limit)}\n{body}')


# -- M/G/1 ------------------------------------------------------------------------------------------

C, MEAN_B, RATE = 10e6, 500, 7e6


def pk_mean_delay(second_moment_bytes2: float) -> float:
    """Mean one-way delay of M/G/1 (Pollaczek–Khinchine): W = λ·E[S²] / (2(1 − ρ)), plus the
    packet's own transmission time and the 1 ms propagation delay."""
    lam = RATE / (8 * MEAN_B)
    es, es2 = MEAN_B * 8 / C, second_moment_bytes2 * 64 / C**2
    rho = lam * es
    return lam * es2 / (2 * (1 - rho)) + es + 1e-3


@pytest.mark.parametrize(
    ("size", "second_moment"),
    [
        ('"500B"', MEAN_B**2),  # M/D/1
        ('{ dist = "exponential", mean = "500B" }', 2 * MEAN_B**2),  # M/M/1
        ('{ dist = "lognormal", mean = "500B", sigma = 1.0 }', MEAN_B**2 * math.e),  # E[B²] = m²·e^σ²
    ],
)
def test_poisson_packets_of_general_sizes_meet_pollaczek_khinchine(size: str, second_moment: float) -> None:
    # 200 s at ρ = 0.7 (350,000 packets a seed): the seeds' means were within 2 % of the formula;
    # the mean of three within 1.5 %. The three size laws' predictions differ by 15–40 %, so a
    # source that ignored its size distribution (M/D/1 for all) fails two of the three cases.
    sc = scenario(
        FLOW + f'type = "poisson"\nrate = "7Mbps"\npacket_size = {size}\n',
        duration="200s",
    )
    got = np.mean([qoslab.run(sc, seed=s).flows["delay_mean_s"].iloc[0] for s in (1, 2, 3)])
    want = pk_mean_delay(second_moment)
    assert got == pytest.approx(want, rel=0.015), (got, want)


# -- processor sharing ------------------------------------------------------------------------------


def test_large_tcp_transfers_at_load_half_approach_processor_sharing() -> None:
    """M/G/1-PS gives every flow the mean slowdown 1/(1 − ρ), whatever its size. TCP is not PS:
    a new flow opens in slow start and flows share through losses at a drop-tail queue, so it is
    somewhat slower; for transfers of 1 MB and more at ρ ≈ 0.5 (exponential sizes, mean 1 MB,
    10 Mbps, 2 ms round trip, 100-packet buffer) we measured 1.08–1.13 × the PS value of the load
    actually drawn. The test takes [1.0, 1.2]: PS as the floor (no TCP beats it), 20 % of TCP's
    inefficiency as the ceiling. A broken size law, load or ideal FCT moves it out (twice the
    load doubles the PS value; the small flows' slowdown, dominated by round trips, is over 3)."""
    sc = scenario(
        '[[arrivals]]\nname = "big"\nsrc = "a"\ndst = "b"\nload = 0.5\n'
        'size = { dist = "exponential", mean = "1MB" }\n',
        duration="2000s",
        limit="100pkts",
        head="[tcp]\nwindow = 10000\n",
    )
    ratios = []
    for seed in (1, 2, 3):
        r = qoslab.run(sc, seed=seed)
        t = r.transfers
        rho = float((t["segments"] * 1000 * 8).sum() / (C * 2000))  # the load actually offered
        big = t[(t["size_bytes"] >= 1_000_000) & t["fct_s"].notna()]
        assert len(big) > 250
        ratios.append(float(big["slowdown"].mean()) * (1 - rho))
        assert r.summary()["arrivals"]["big"]["refused"] == 0
    assert 1.0 <= np.mean(ratios) <= 1.2, ratios


# -- finite flows and their records -----------------------------------------------------------------


def test_transfers_table_and_summary_by_size_bin() -> None:
    sc = scenario(
        '[[flow]]\nname = "small"\nsrc = "a"\ndst = "b"\nsize = "20KB"\n'
        '[[flow]]\nname = "big"\nsrc = "a"\ndst = "b"\nsize = "2MB"\nstart = "1s"\n'
        '[[flow]]\nname = "bulk"\nsrc = "a"\ndst = "b"\nstart = "5s"\n'
    )
    r = qoslab.run(sc, seed=1)
    t = r.transfers.set_index("flow_name")
    assert list(t.index) == ["small", "big"]
    assert t.loc["small", "segments"] == 20 and t.loc["big", "segments"] == 2000
    assert (t["fct_s"] >= t["ideal_fct_s"]).all() and (t["slowdown"] >= 1).all()
    # 2 MB over 10 Mbit/s is 1.6 s at line rate: slow start from 2 segments adds a few round trips.
    assert 1.6 < t.loc["big", "fct_s"] < 1.8
    s = r.summary()["transfers"]
    assert s["by_size"]["<100KB"]["finished"] == 1 and s["by_size"]["100KB-10MB"]["finished"] == 1
    assert s["all"]["fct_s"]["median"] == pytest.approx(t["fct_s"].median())
    # A finished transfer sends nothing more: its flow sent exactly its segments and the SYN.
    f = r.flows.set_index("name")
    assert f.loc["small", "sent_packets"] == 21


# -- Pareto ON/OFF ----------------------------------------------------------------------------------


def test_pareto_on_off_source_mean_rate_and_heavy_tail() -> None:
    """Peak 2 Mbit/s during ON periods of mean 100 ms, silent during OFF periods of mean 400 ms:
    the mean rate is 2 · 0.1 / 0.5 = 400 kbit/s. With shape 1.2 the per-second byte counts are
    far burstier than with exponential periods of the same means."""
    body = (
        FLOW + 'type = "{t}"\nrate = "2Mbps"\non = "100ms"\noff = "400ms"\n{shape}'
        '[measurement]\ninterval = "1s"\n'
    )
    rates, cv = {}, {}
    for t, shape in (("pareto", "shape = 1.2\n"), ("onoff", "")):
        sc = scenario(body.format(t=t, shape=shape), duration="2000s")
        vals = []
        for seed in (1, 2):
            r = qoslab.run(sc, seed=seed)
            vals.append(float(r.flows["sent_bytes"].iloc[0]) * 8 / 2000)
            x = r.series_flow["throughput_bps"].to_numpy(float)[1:]
            cv.setdefault(t, []).append(float(x.std() / x.mean()))
        rates[t] = float(np.mean(vals))
    assert rates["onoff"] == pytest.approx(400e3, rel=0.05)
    # Pareto periods with shape 1.2 have infinite variance: their sample mean converges slowly
    # and from below (most periods are short), hence the wider band.
    assert rates["pareto"] == pytest.approx(400e3, rel=0.2)
    assert min(cv["pareto"]) > max(cv["onoff"]), cv


# -- traces -----------------------------------------------------------------------------------------


def _pcap_records(path: Path) -> list[tuple[int, int]]:
    """(timestamp ns, original length) of each record of a nanosecond pcap."""
    data = path.read_bytes()
    out, off = [], 24
    while off < len(data):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", data, off)
        out.append((sec * 1_000_000_000 + nsec, orig))
        off += 16 + incl
    return out


def test_a_trace_replays_byte_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.exponential(0.01, 500))
    sizes = rng.integers(40, 1500, 500)
    lines = ["time,size,flow"] + [
        f"{t:.9f},{s},{'x' if i % 5 else 'y'}" for i, (t, s) in enumerate(zip(times, sizes, strict=True))
    ]
    (tmp_path / "mix.csv").write_text("\n".join(lines) + "\n")
    sc_path = tmp_path / "trace.toml"
    sc_path.write_text(
        'name = "trace"\nduration = "10s"\n'
        + link("100000pkts")
        + FLOW
        + 'type = "trace"\ntrace = "mix.csv"\ntrace_flow = "x"\nstart = "1s"\n'
    )
    sc = qoslab.load_scenario(sc_path)
    pcap = tmp_path / "ab.pcap"
    r = qoslab.run(sc, seed=1, captures=[("ab", "ab", str(pcap))])
    keep = [i for i in range(500) if i % 5]
    f = r.flows.iloc[0]
    assert f["sent_packets"] == len(keep) and f["sent_bytes"] == int(sizes[keep].sum())
    recs = _pcap_records(pcap)
    assert [o for _, o in recs] == [int(sizes[i]) for i in keep]
    # Each packet leaves the (idle) link when its transmission ends: start + row time + size / rate.
    for (t_ns, size), i in zip(recs, keep, strict=True):
        sent = 1_000_000_000 + round(times[i] * 1e9)
        tx = math.ceil(size * 8 * 1e9 / C)
        behind = math.ceil(1500 * 8 * 1e9 / C)  # at most one packet ahead of it on the link
        assert sent + tx <= t_ns <= sent + tx + behind


# -- delay and jitter -------------------------------------------------------------------------------


def test_jitter_is_zero_on_an_idle_path_and_positive_behind_cross_traffic() -> None:
    voice = (
        '[[flow]]\nname = "v"\nsrc = "a"\ndst = "b"\ntype = "cbr"\nrate = "64kbps"\npacket_size = "200B"\n'
    )
    cross = '[[flow]]\nname = "x"\nsrc = "a"\ndst = "b"\ntype = "poisson"\nrate = "6Mbps"\n'
    idle = qoslab.run(scenario(voice), seed=1).flows.set_index("name").loc["v"]
    busy = qoslab.run(scenario(voice + cross), seed=1).flows.set_index("name").loc["v"]
    assert idle["jitter_s"] == 0.0
    # 200 B at 10 Mbit/s (160 µs) plus 1 ms: every packet's delay, exactly
    assert idle["delay_p99_s"] == pytest.approx(1.16e-3, rel=0.01) and idle["delay_max_s"] == pytest.approx(
        1.16e-3
    )
    assert busy["jitter_s"] > 1e-5 and busy["delay_p99_s"] > idle["delay_p99_s"]


# -- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "key", "words"),
    [
        (
            FLOW + 'type = "cbr"\nrate = "1Mbps"\nsize = "1MB"\n',
            "flow[0].size",
            "tcp flows only",
        ),
        (
            FLOW + 'packet_size = { dist = "exponential", mean = "1KB" }\n',
            "flow[0].packet_size",
            "UDP",
        ),
        (
            ARR + 'arrival_rate = 3.0\nsize = "1KB"\n',
            "arrivals[0].load",
            "not both",
        ),
        (
            ARR + 'size = { dist = "zipf", mean = "1KB" }\n',
            "arrivals[0].size.dist",
            "unknown variant `zipf`, expected `fixed`",
        ),
        (
            ARR + 'size = { dist = "pareto", mean = "1KB", shape = 0.9 }\n',
            "arrivals[0].size.shape",
            "(1, 100]",
        ),
        (
            ARR + 'size = { dist = "empirical", cdf = "nosuch.cdf" }\n',
            "arrivals[0].size.cdf",
            "cannot read",
        ),
        (
            FLOW + 'type = "pareto"\nrate = "1Mbps"\non = "1s"\noff = "1s"\nshape = 1.0\n',
            "flow[0].shape",
            "(1, 100]",
        ),
        (FLOW + 'type = "trace"\n', "flow[0].trace", "needs `trace`"),
    ],
)
def test_bad_workload_input_is_one_clear_error(body: str, key: str, words: str) -> None:
    with pytest.raises(qoslab.ScenarioError) as e:
        scenario(body)
    assert key in str(e.value) and words in str(e.value), str(e.value)


def test_malformed_trace_and_cdf_lines_are_named(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("0.0,100\n0.5,abc\n")
    (tmp_path / "c.cdf").write_text("# sizes\n1000 0.5\n500 1.0\n")
    for name, body, want in (
        (
            "t.toml",
            FLOW + 'type = "trace"\ntrace = "t.csv"\n',
            "t.csv: line 2: the size",
        ),
        (
            "c.toml",
            ARR + 'size = { dist = "empirical", cdf = "c.cdf" }\n',
            "c.cdf: line 3",
        ),
    ):
        p = tmp_path / name
        p.write_text('name = "bad"\nduration = "1s"\n' + link("10pkts") + body)
        with pytest.raises(qoslab.ScenarioError) as e:
            qoslab.load_scenario(p)
        msg = str(e.value)
        assert want in msg and str(p) in msg, msg
        assert "abc" not in msg and "size 500" not in msg, msg  # no content echoed
        assert "\n" not in msg
