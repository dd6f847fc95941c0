"""DiffServ conditioning and multi-precedence / multi-queue links, end to end."""

import pytest

import qoslab
from conftest import SCENARIOS


def two_nodes(flows, queue, conditioners=(), bandwidth="1Mbps", duration="100s"):
    return qoslab.Scenario.from_table(
        {
            "name": "ds-test",
            "duration": duration,
            "measurement": {"start": "0s", "bottleneck": "ab"},
            "node": [{"name": "a"}, {"name": "b"}],
            "link": [
                {"name": "ab", "a": "a", "b": "b", "bandwidth": bandwidth, "delay": "5ms", "queue_ab": queue}
            ],
            "flow": list(flows),
            "conditioner": list(conditioners),
        }
    )


def cbr(name, rate, dscp="BE", size="1000B"):
    return {
        "name": name,
        "src": "a",
        "dst": "b",
        "type": "cbr",
        "rate": rate,
        "packet_size": size,
        "dscp": dscp,
    }


def test_token_bucket_marker_greens_exactly_cir_times_t_plus_cbs():
    # 1 Mbps CBR of 1000-byte packets (one every 8 ms) through a 250 kbps / 10 KB marker.
    sc = two_nodes(
        [cbr("udp", "1Mbps")],
        {"type": "droptail", "limit": "10000pkts"},
        [{"link": "ab", "meter": {"type": "token_bucket", "cir": "250kbps", "cbs": "10KB"}}],
        bandwidth="10Mbps",
    )
    res = qoslab.run(sc, seed=1)
    f = res.flows.iloc[0]
    sent = int(f["sent_packets"])
    # Credit by the last packet (t = 8 ms * (sent - 1)): CBS + CIR * t bytes; each green costs 1000.
    t_last = 0.008 * (sent - 1)
    expected_green = int((10_000 + 250e3 / 8 * t_last) // 1000)
    assert abs(int(f["green_packets"]) - expected_green) <= 1
    assert int(f["green_packets"]) + int(f["yellow_packets"]) == sent
    assert not res.violations


def test_trtcm_policer_drops_red_and_passes_pir():
    sc = two_nodes(
        [cbr("udp", "2Mbps")],
        {"type": "droptail", "limit": "10000pkts"},
        [
            {
                "link": "ab",
                "meter": {"type": "trtcm", "cir": "500kbps", "cbs": "5KB", "pir": "1Mbps", "pbs": "5KB"},
                "red": "drop",
            }
        ],
        bandwidth="10Mbps",
    )
    res = qoslab.run(sc, seed=1)
    f = res.flows.iloc[0]
    assert f["throughput_bps"] == pytest.approx(1e6, rel=0.01)
    assert int(f["policed_drops"]) == int(f["red_packets"]) > 0
    lk = res.links.set_index(["link_name", "direction"]).loc[("ab", "ab")]
    assert int(lk["policed_drops"]) == int(f["policed_drops"])
    assert not res.violations


def test_rio_drops_out_before_in_in_the_ard_baseline():
    res = qoslab.run(SCENARIOS / "ard-rio-4flows.toml", seed=2)
    assert not res.violations
    b = res.links.set_index(["link_name", "direction"]).loc[("bottleneck", "ab")]
    # OUT (AF12, precedence 1) packets are a minority of arrivals but take most drops.
    out_rate = b["drops_prec1"] / b["arrivals_prec1"]
    in_rate = b["drops_prec0"] / max(b["arrivals_prec0"], 1)
    assert out_rate > 5 * in_rate
    # The time series carries both RIO-C averages: avg_in (IN backlog) below avg_total.
    q = res.series_queue[res.series_queue["queue"] == "bottleneck:ab"]
    q = q[q["time_s"] >= 100]
    assert 0 < q["avg_prec0"].mean() < q["avg_prec1"].mean() <= q["queue_packets"].max()
    # Every flow keeps (at least nearly) its 250 kbps contract on an under-subscribed link.
    assert (res.flows["throughput_bps"] > 0.95 * 250e3).all()


def multi(scheduler, queues):
    return {"type": "multi", "scheduler": scheduler, "queues": queues}


def test_priority_queue_protects_ef():
    q = multi(
        "priority",
        [
            {"dscp": ["EF"], "queue": {"type": "droptail", "limit": "20pkts"}},
            {"default": True, "queue": {"type": "droptail", "limit": "50pkts"}},
        ],
    )
    sc = two_nodes([cbr("ef", "300kbps", "EF"), cbr("be", "2Mbps", "BE")], q)
    res = qoslab.run(sc, seed=1)
    f = res.flows.set_index("name")
    assert f.loc["ef", "dropped_packets"] == 0
    assert f.loc["ef", "throughput_bps"] == pytest.approx(300e3, rel=0.01)
    assert f.loc["be", "throughput_bps"] == pytest.approx(700e3, rel=0.02)
    assert not res.violations


@pytest.mark.parametrize(
    "scheduler,extra,expected",
    [
        ("wrr", [{"weight": 3}, {"weight": 1}], 0.75),
        ("drr", [{"quantum": "3000B"}, {"quantum": "1000B"}], 0.75),
        ("rr", [{}, {}], 0.5),
    ],
)
def test_scheduler_shares_match_weights_under_saturation(scheduler, extra, expected):
    queues = [
        {"dscp": ["AF11"], "queue": {"type": "droptail", "limit": "50pkts"}, **extra[0]},
        {"default": True, "queue": {"type": "droptail", "limit": "50pkts"}, **extra[1]},
    ]
    sc = two_nodes([cbr("x", "2Mbps", "AF11"), cbr("y", "2Mbps", "BE")], multi(scheduler, queues))
    res = qoslab.run(sc, seed=1)
    thr = res.flows.set_index("name")["throughput_bps"]
    assert thr["x"] / (thr["x"] + thr["y"]) == pytest.approx(expected, abs=0.01)
    assert thr.sum() == pytest.approx(1e6, rel=0.01)
    assert not res.violations


@pytest.mark.parametrize(
    "change,key",
    [
        ({"link": "nope"}, "conditioner[0].link"),
        ({"meter": {"type": "trtcm", "cir": "1Mbps", "cbs": "1KB"}}, "conditioner[0].meter.pir"),
        (
            {"meter": {"type": "token_bucket", "cir": "1Mbps", "cbs": "1KB", "pir": "2Mbps"}},
            "conditioner[0].meter.pir",
        ),
        ({"green": "AF51"}, "conditioner[0].green"),
        ({"classify": "flow:missing"}, "conditioner[0].classify"),
    ],
)
def test_bad_conditioners_name_the_key(change, key):
    cond = {"link": "ab", "meter": {"type": "token_bucket", "cir": "250kbps", "cbs": "10KB"}, **change}
    with pytest.raises(qoslab.ScenarioError) as e:
        two_nodes([cbr("u", "1Mbps")], {"type": "droptail"}, [cond])
    assert e.value.args[3] == key, e.value.args[0]


def test_bad_multi_queue_is_rejected():
    with pytest.raises(qoslab.ScenarioError) as e:
        two_nodes([cbr("u", "1Mbps")], multi("wrr", [{"dscp": ["EF"], "queue": {"type": "droptail"}}]))
    assert "default = true" in e.value.args[0]
    with pytest.raises(qoslab.ScenarioError) as e:
        two_nodes([cbr("u", "1Mbps")], {"type": "rio", "in": {"min_th": 5, "max_th": 10, "max_p": 0.1}})
    assert e.value.args[3] == "link[0].queue_ab.out"
    # A discipline that holds its own packets cannot be a physical queue.
    for kind in ("codel", "fq_codel", "pie", "multi"):
        sub = (
            {"type": kind}
            if kind != "multi"
            else multi("rr", [{"default": True, "queue": {"type": "droptail"}}])
        )
        with pytest.raises(qoslab.ScenarioError) as e:
            two_nodes([cbr("u", "1Mbps")], multi("rr", [{"default": True, "queue": sub}]))
        assert e.value.args[3] == "link[0].queue_ab.queues[0].queue.type", (kind, e.value.args[0])
