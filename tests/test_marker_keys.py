"""The markers that share a scenario key: `alpha` is the probe marker's filter gain (a real in
(0, 1]) and TWAM's operating interval in RTT_LSP (a whole number). Each is accepted where it
belongs and named in the error where it is wrong."""

from __future__ import annotations

import tomllib

import pytest

from qoslab.scenario import Scenario
from qoslab.studies.probe_marker import study as pm
from qoslab.studies.twam_dwred.study import lsp_scenario


def _set_meter_key(sc: Scenario, meter_type: str, key: str, value: str) -> Scenario:
    """`sc` with `key = value` set (as `--set` does) in every conditioner spec of `meter_type`."""
    specs = tomllib.loads(sc.text).get("conditioner", [])
    idx = [i for i, c in enumerate(specs) if c["meter"]["type"] == meter_type]
    assert idx, f"no {meter_type} conditioner"
    return sc.with_overrides([f"conditioner[{i}].meter.{key}={value}" for i in idx])


def test_probe_alpha_is_a_gain_and_twam_alpha_a_whole_number() -> None:
    probe = pm.single_bottleneck(10, "probe", 10, "hard", duration_s=30, start_s=5)
    ok = _set_meter_key(probe, "probe", "alpha", "0.25")
    metas = [c["meter"] for c in ok.resolved["conditioners"] if c["meter"]["type"] == "probe"]
    assert metas and all(m["probe"]["alpha"] == 0.25 for m in metas)

    twam = lsp_scenario(2, "twam-dwred", quick=True)
    ok = _set_meter_key(twam, "twam", "alpha", "2")
    (t,) = [c["meter"] for c in ok.resolved["conditioners"] if c["meter"]["type"] == "twam"]
    assert t["twam"]["alpha"] == 2
    with pytest.raises(Exception, match=r"`conditioner\[\d+\]\.meter\.alpha`.*whole number"):
        _set_meter_key(twam, "twam", "alpha", "0.5").resolved  # noqa: B018
