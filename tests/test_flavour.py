"""The `flavour` key: the reference algorithm or ns-2.35's dsRED, rule for rule.

The rules themselves are tested in crates/qoslab-core/src/aqm/dsred.rs; here: bad input is one
clear error naming the key, the default changes nothing, and the ns2 flavour changes what the
papers' RIO baseline shows in the direction ns-2 does (forced drops above max_th exist).
"""

import numpy as np
import pytest

import qoslab
from conftest import SCENARIOS, two_nodes
from qoslab import ScenarioError
from qoslab.ns2.flavour import flavoured_kinds, flavours_used, ns2_flavoured
from qoslab.scenario import Scenario

RIO = (
    "type = 'rio', limit = '60pkts', in = { min_th = 20, max_th = 40, max_p = 0.02 }, "
    "out = { min_th = 5, max_th = 15, max_p = 0.2 }"
)


def scenario(queue: str) -> Scenario:
    return Scenario.from_toml(f"""
name = "flavour"
duration = "10s"
{two_nodes(link="l", bandwidth="2Mbps", delay="20ms", queue=f"queue_ab = {queue}")}[[flow]]
name = "f{{i}}"
type = "tcp"
src = "a"
dst = "b"
count = 4
""")


@pytest.mark.parametrize(
    ("queue", "key", "words"),
    [
        ("{ " + RIO + ", flavour = 'ns3' }", "link[0].queue_ab.flavour", "unknown variant `ns3`"),
        ("{ " + RIO + ", flavour = 'ns2', gentle = true }", "link[0].queue_ab.gentle", "no gentle"),
        ("{ " + RIO + ", flavour = 'ns2', wait = true }", "link[0].queue_ab.wait", "no wait"),
        (
            "{ " + RIO.replace("min_th = 20", "min_th = 20.5") + ", flavour = 'ns2' }",
            "link[0].queue_ab.in.min_th",
            "atoi",
        ),
        (
            "{ " + RIO.replace("'60pkts'", "'60KB'") + ", flavour = 'ns2' }",
            "link[0].queue_ab.limit",
            "packets",
        ),
        (
            "{ type = 'rio_plus_o', flavour = 'ns2', in = { min_th = 20, max_th = 40, max_p = 0.02 }, "
            "out = { min_th = 5, max_th = 15, max_p = 0.2 }, "
            "avg_out = { min_th = 5, max_th = 15, max_p = 0.2 } }",
            "link[0].queue_ab.flavour",
            "no ns2 flavour",
        ),
    ],
)
def test_bad_flavour_is_one_error_naming_the_key(queue, key, words):
    with pytest.raises(ScenarioError) as e:
        scenario(queue)
    msg = str(e.value.args[0])
    assert key in msg and words in msg, msg
    assert "\n" not in msg


def test_the_kinds_with_an_ns2_flavour_come_from_the_core():
    queues, _ = flavoured_kinds()
    assert {"rio", "wred"} <= queues
    assert "red" not in queues and "rio_plus_o" not in queues


def test_reference_is_the_default_and_ns2_differs():
    """Same seeds: `flavour = "reference"` is bit-identical to no key; `ns2` is not."""
    base = scenario("{ " + RIO + " }")
    ref = scenario("{ " + RIO + ", flavour = 'reference' }")
    ns2 = scenario("{ " + RIO + ", flavour = 'ns2' }")
    a, b, c = (qoslab.run(s, 3).flows["throughput_bps"].to_numpy() for s in (base, ref, ns2))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_ns2_flavour_records_forced_drops_on_the_rio_baseline():
    """The issue's finding: no reference RIO run of the ARD baseline recorded more than a few
    drops with the average above max_th, while ns-2 records some every run (9.5 a run on
    10 seeds; early drops 370.9). The ns2 flavour (strict > th_min, unclamped count, limit
    first, single-precision averages, idle per precedence) records them too, and its early
    drops stay within 5 % of ns-2's."""
    sc = qoslab.load_scenario(SCENARIOS / "ard-rio-4flows.toml")
    fl, _ = ns2_flavoured(sc)
    early, forced = [], []
    for seed in range(1, 6):
        b = qoslab.run(fl, seed).links.set_index(["link_name", "direction"]).loc[("bottleneck", "ab")]
        early.append(b["early_drops"])
        forced.append(b["forced_drops"])
    assert np.mean(forced) >= 5, forced
    assert abs(np.mean(early) / 370.9 - 1) <= 0.05, early


def meter_scenario(meter: str) -> Scenario:
    return Scenario.from_toml(f"""
name = "meter flavour"
duration = "5s"
{two_nodes(link="l", bandwidth="2Mbps", delay="20ms", queue="")}[[flow]]
name = "f"
type = "cbr"
rate = "1Mbps"
src = "a"
dst = "b"
[[conditioner]]
name = "c"
link = "l"
meter = {meter}
""")


@pytest.mark.parametrize(
    ("meter", "key", "words"),
    [
        (
            "{ type = 'token_bucket', cir = '250kbps', cbs = '1500B', mode = 'aware', flavour = 'ns2' }",
            "conditioner[0].meter.mode",
            "colour-blind",
        ),
        (
            "{ type = 'tsw3cm', cir = '250kbps', pir = '500kbps', window = '2s', flavour = 'ns2' }",
            "conditioner[0].meter.window",
            "fixed at 1 s",
        ),
        ("{ type = 'srtcm', cir = '1Mbps', cbs = '1500B', ebs = '3000B', flavour = 'ns' }", "flavour", "ns2"),
    ],
)
def test_bad_meter_flavour_is_one_error_naming_the_key(meter, key, words):
    with pytest.raises(ScenarioError) as e:
        meter_scenario(meter)
    msg = str(e.value.args[0])
    assert key in msg and words in msg, msg


def test_ns2_token_bucket_shows_ns2s_floating_point_artefact():
    """docs/ns2-behaviour.md §9.4: a 1 Mb/s CBR of 1000-B packets through a 250 kb/s bucket
    with CBS = 1000 B leaves 2749 of 12501 green in ns-2 (refills of 999.999… bytes), 3126 in
    an exact bucket. The reference flavour gives the exact count, the ns2 flavour ns-2's."""
    greens = {}
    for flavour in ("reference", "ns2"):
        sc = meter_scenario(
            f"{{ type = 'token_bucket', cir = '250kbps', cbs = '1000B', flavour = '{flavour}' }}"
        ).with_overrides(["duration=100s"])
        f = qoslab.run(sc, 1).flows.iloc[0]
        greens[flavour] = f["green_packets"] / (f["green_packets"] + f["yellow_packets"])
    assert abs(greens["reference"] - 0.25) < 0.002, greens
    assert abs(greens["ns2"] - 2749 / 12501) < 0.02, greens


def test_flavours_used_sees_the_physical_queues_of_a_multi_queue():
    sc = scenario(
        "{ type = 'multi', scheduler = 'wrr', queues = [ { dscp = ['AF11'], weight = 2, queue = { "
        + RIO
        + " } }, { default = true, queue = { type = 'droptail' } } ] }"
    )
    assert flavours_used(sc) == {"rio": {"reference"}}
    fl, notes = ns2_flavoured(sc)
    assert flavours_used(fl) == {"rio": {"ns2"}} and notes == []
