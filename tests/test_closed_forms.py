"""Closed forms: M/D/1 queue length, a single TCP flow filling an idle bottleneck."""

import numpy as np
import pytest

import qoslab


def mdl_scenario(rho: float, duration: str) -> qoslab.Scenario:
    # 1000-byte packets on a 1 Mbps link: service time D = 8 ms; Poisson arrivals at rate rho/D.
    rate_bps = rho * 1_000_000
    return qoslab.Scenario.from_table(
        {
            "name": f"md1-rho{rho}",
            "duration": duration,
            "measurement": {"interval": "10ms"},
            "node": [{"name": "a"}, {"name": "b"}],
            "link": [
                {
                    "a": "a",
                    "b": "b",
                    "bandwidth": "1Mbps",
                    "delay": "1ms",
                    "queue": {"type": "droptail", "limit": "100000pkts"},
                }
            ],
            "flow": [
                {"src": "a", "dst": "b", "type": "poisson", "rate": f"{rate_bps}bps", "packet_size": "1000B"}
            ],
        }
    )


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_md1_mean_queue_length(rho):
    """Mean number waiting (not in service) of M/D/1: Lq = rho^2 / (2 (1 - rho))."""
    res = qoslab.run(mdl_scenario(rho, "4000s"), seed=11)
    assert not res.violations
    q = res.series_queue
    waiting = q[q["queue"] == "a-b:ab"]["queue_packets"].to_numpy()
    lq = rho**2 / (2 * (1 - rho))
    # Time-average over 4000 s (about 5e5 packets at rho 0.8): relative error of a few percent.
    assert abs(waiting.mean() - lq) / lq < 0.06, (waiting.mean(), lq)
    # The server is busy a fraction rho of the time.
    util = res.links.set_index(["link_name", "direction"]).loc[("a-b", "ab"), "utilization"]
    assert abs(util - rho) < 0.01


def test_single_tcp_flow_fills_idle_bottleneck():
    """One Reno flow, buffer of more than one bandwidth-delay product: >= 95 % utilisation."""
    sc = qoslab.Scenario.from_table(
        {
            "name": "single-tcp",
            "duration": "60s",
            "tcp": {"window": 10000, "packet_size": "1000B"},
            "measurement": {"start": "10s", "bottleneck": "bn"},
            "node": [{"name": "s"}, {"name": "r"}, {"name": "d"}],
            "link": [
                {
                    "a": "s",
                    "b": "r",
                    "bandwidth": "100Mbps",
                    "delay": "5ms",
                    "queue": {"type": "droptail", "limit": "1000pkts"},
                },
                # 10 Mbps, RTT 40 ms: BDP = 50 packets of 1000 B; buffer 60 packets.
                {
                    "name": "bn",
                    "a": "r",
                    "b": "d",
                    "bandwidth": "10Mbps",
                    "delay": "15ms",
                    "queue": {"type": "droptail", "limit": "60pkts"},
                },
            ],
            "flow": [{"src": "s", "dst": "d"}],
        }
    )
    res = qoslab.run(sc, seed=1)
    assert not res.violations
    assert res.summary()["utilization"] >= 0.95
    assert res.flows["throughput_bps"].iloc[0] >= 0.95 * 10e6 * 0.999


def test_red_average_follows_ewma_in_the_engine():
    """The sampled RED average never exceeds the largest instantaneous queue and tracks its mean."""
    res = qoslab.run("scenarios/fdd-red-s1.toml", seed=2)
    q = res.series_queue[res.series_queue["queue"] == "bottleneck:ab"]
    steady = q[q["time_s"] >= 20]
    assert np.nanmax(steady["avg_queue"]) <= steady["queue_packets"].max()
    assert (
        abs(np.nanmean(steady["avg_queue"]) - steady["queue_packets"].mean())
        < 0.2 * steady["queue_packets"].mean()
    )


def test_exponential_on_off_source_mean_rate():
    """ON/OFF with exponential periods: long-run rate = peak · on / (on + off)."""
    sc = qoslab.Scenario.from_table(
        {
            "name": "onoff",
            "duration": "2000s",
            "node": [{"name": "a"}, {"name": "b"}],
            "link": [{"a": "a", "b": "b", "bandwidth": "10Mbps", "delay": "1ms"}],
            "flow": [
                {
                    "src": "a",
                    "dst": "b",
                    "type": "onoff",
                    "rate": "1Mbps",
                    "on": "500ms",
                    "off": "1500ms",
                    "packet_size": "1000B",
                },
            ],
        }
    )
    res = qoslab.run(sc, seed=4)
    # 1000 ON/OFF cycles: the ON fraction's standard error is about 2 %.
    assert res.flows["throughput_bps"].iloc[0] == pytest.approx(0.25e6, rel=0.06)
    assert not res.violations
