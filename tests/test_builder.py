"""The Python scenario builder (qoslab.builder, issue 18): it cannot drift from the core's
schema, its TOML round-trips byte for byte and resolves to the same scenarios as the files,
its checks name the key and the choices, its topologies run, and a user's own experiment is
registered from outside the package."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qoslab
from conftest import QOSLAB, ROOT, SCENARIOS
from qoslab import builder as b
from qoslab.schema import json_schema

# -- the builder cannot drift from the schema ---------------------------------------------------

_NAME_KINDS = {"name", "dscp", "rates"}
_REF_KINDS = {
    "#/$defs/curve": "curve",
    "#/$defs/queue": "queue",
    "#/$defs/meter": "meter",
    "#/$defs/size": "size",
}


def _required(obj: dict[str, Any]) -> set[str]:
    """A schema object's required keys: its `required` list and every key documented as
    "Default: required." (the core declares a few required keys only in the docs, e.g. a physical
    queue's `queue`)."""
    req = set(obj.get("required", []))
    req |= {
        k
        for k, v in obj["properties"].items()
        if re.search(r"Default: required\.$", v.get("description", ""))
    }
    return req - {"type"}


def _compare_value(label: str, sch: dict[str, Any], meta: Any, out: list[str]) -> None:
    kind = meta["kind"]
    if "x-presets" in sch:  # a duration, or one of the key's named presets
        duration, names = sch["anyOf"]
        if (
            kind != "duration_or_preset"
            or tuple(meta["choices"]) != tuple(names["enum"])
            or tuple(sch["x-presets"]) != tuple(names["enum"])
            or b.UNIT_PATTERNS["duration"] != duration["pattern"]
        ):
            theirs = f"a duration or a preset of {names['enum']}"
            out.append(f"{label}: {theirs} in the schema, {kind} in the builder")
    elif "$ref" in sch:
        want = _REF_KINDS[sch["$ref"]]
        # a physical queue of a multi queue is any queue but another multi
        if kind != want and (want, kind) != ("queue", "single_queue"):
            out.append(f"{label}: the schema has a {want} table, the builder a {kind}")
    elif "enum" in sch:
        if kind != "choice" or tuple(meta["choices"]) != tuple(sch["enum"]):
            out.append(
                f"{label}: choices {sch['enum']} in the schema, {kind} {list(meta['choices'])} in the builder"
            )
    elif "pattern" in sch:
        unit = "duration" if kind == "start" else kind
        if b.UNIT_PATTERNS.get(unit) != sch["pattern"]:
            out.append(f"{label}: unit pattern {sch['pattern']!r} in the schema, builder kind {kind}")
    elif sch.get("type") == "number":
        lo = sch.get("minimum", sch.get("exclusiveMinimum"))
        hi = sch.get("maximum", sch.get("exclusiveMaximum"))
        theirs = (lo, hi, "exclusiveMinimum" in sch, "exclusiveMaximum" in sch)
        ours = (meta["lo"], meta["hi"], meta["lo_open"], meta["hi_open"])
        if kind != "number" or theirs != ours:
            out.append(f"{label}: number range {theirs} in the schema, {kind} {ours} in the builder")
    elif sch.get("type") == "integer":
        if kind != "integer" or (meta["lo"], meta["hi"]) != (sch["minimum"], sch.get("maximum")):
            out.append(
                f"{label}: integer in [{sch['minimum']}, {sch.get('maximum')}] in the schema, "
                f"{kind} in [{meta['lo']}, {meta['hi']}] in the builder"
            )
    elif sch.get("type") == "boolean":
        if kind != "bool":
            out.append(f"{label}: boolean in the schema, {kind} in the builder")
    elif sch.get("x-constants"):
        if kind != "constants":
            out.append(f"{label}: the variants' constants in the schema, {kind} in the builder")
    elif sch.get("type") == "object":
        if kind != "table":
            out.append(f"{label}: a table in the schema, {kind} in the builder")
        else:
            _compare_object(label, sch, meta["cls"], out)
    elif sch.get("type") == "array" and sch.get("items", {}).get("type") == "string":
        if kind != "codepoints":
            out.append(f"{label}: a list of codepoint names in the schema, {kind} in the builder")
    elif sch.get("type") == "array":
        if kind != "tables":
            out.append(f"{label}: a list of tables in the schema, {kind} in the builder")
        else:
            _compare_object(f"{label}[]", sch["items"], meta["cls"], out)
    elif kind not in _NAME_KINDS:
        out.append(f"{label}: a name (any value) in the schema, {kind} in the builder")


def _compare_object(label: str, obj: dict[str, Any], cls: type[b.Component], out: list[str]) -> None:
    props = obj["properties"]
    tag = props.get("type", {}).get("const")
    if tag != cls.KIND:
        out.append(f"{label}: type {tag!r} in the schema, {cls.KIND!r} for {cls.__name__}")
    theirs = set(props) - ({"type"} if tag else set())
    fields = {b.toml_key(f): f for f in dataclasses.fields(cls)}
    if any(f.metadata.get("kind") == "source" for f in fields.values()):
        # a flow: its `type` and the source kinds' keys (x-source) are its Source's
        if tuple(props["type"]["enum"]) != ("tcp", *b.SOURCES):
            out.append(
                f"{label}: flow types {props['type']['enum']} in the schema, tcp and {list(b.SOURCES)}"
            )
        theirs -= {"type", *(k for k, v in props.items() if v.get("x-source"))}
        fields = {k: f for k, f in fields.items() if f.metadata.get("kind") != "source"}
    for k in sorted(theirs - set(fields)):
        out.append(f"{label}: key `{k}` is in the schema but {cls.__name__} has no field for it")
    for k in sorted(set(fields) - theirs):
        out.append(f"{label}: {cls.__name__} has a field `{k}` the schema does not have")
    ours_req = {k for k, f in fields.items() if b.is_required(f)}
    for k in sorted((_required(obj) ^ ours_req) & theirs & set(fields)):
        which = "required" if k in ours_req else "optional"
        out.append(f"{label}: `{k}` is {which} in {cls.__name__}, not in the schema")
    for k in sorted(theirs & set(fields)):
        _compare_value(f"{label}.{k}", props[k], fields[k].metadata, out)


def differences(schema: dict[str, Any]) -> list[str]:
    """Every way in which the builder's classes differ from the core's JSON Schema: kinds and
    keys on one side only, required-ness, value kinds, units, ranges and choices."""
    out: list[str] = []
    _compare_object("scenario", schema, b.ScenarioSpec, out)
    _compare_object("curve", schema["$defs"]["curve"], b.Curve, out)
    # a size: a string with a unit, or a distribution table
    _compare_value("size (string)", schema["$defs"]["size"]["oneOf"][0], {"kind": "bytes"}, out)
    _compare_object("size", schema["$defs"]["size"]["oneOf"][1], b.SizeDistribution, out)
    for family, registry in (("queue", b.QUEUES), ("meter", b.METERS), ("source", b.SOURCES)):
        kinds = []
        for obj in schema["$defs"][family]["oneOf"]:
            kind = obj["properties"]["type"]["const"]
            kinds.append(kind)
            if kind not in registry:
                out.append(f"{family} type {kind!r} is in the schema but has no builder class")
            else:
                _compare_object(f"{family} {kind}", obj, registry[kind], out)
        for kind in sorted(set(registry) - set(kinds)):
            out.append(f"builder {family} class {registry[kind].__name__} ({kind!r}) is not in the schema")
    return out


def test_every_kind_and_key_of_the_schema_has_its_builder_counterpart_and_back():
    assert differences(json_schema()) == []
    # ... and the walk saw every kind (a walk that visits nothing passes vacuously)
    schema = json_schema()
    assert len(b.QUEUES) == len(schema["$defs"]["queue"]["oneOf"]) >= 9
    assert len(b.METERS) == len(schema["$defs"]["meter"]["oneOf"]) >= 9
    assert len(b.SOURCES) == len(schema["$defs"]["source"]["oneOf"]) >= 5


def test_the_drift_check_fails_on_each_kind_of_drift():
    base = json_schema()

    def drift(change) -> list[str]:
        s = copy.deepcopy(base)
        change(s)
        return differences(s)

    queues = {q["properties"]["type"]["const"]: q for q in base["$defs"]["queue"]["oneOf"]}
    red = list(queues).index("red")
    rio = list(queues).index("rio")

    def new_kind(s):
        s["$defs"]["queue"]["oneOf"].append({"properties": {"type": {"const": "sfq"}}, "required": ["type"]})

    def new_key(s):
        s["$defs"]["queue"]["oneOf"][red]["properties"]["limit_bytes"] = {"type": "string"}

    def dropped_key(s):
        del s["properties"]["flow"]["items"]["properties"]["dscp"]

    def enum(s):
        s["$defs"]["queue"]["oneOf"][rio]["properties"]["mode"]["enum"].append("hybrid")

    def bound(s):
        s["$defs"]["queue"]["oneOf"][red]["properties"]["max_p"]["maximum"] = 0.5

    def required(s):
        s["properties"]["link"]["items"]["required"].remove("delay")
        s["properties"]["link"]["items"]["properties"]["delay"]["description"] = (
            "Propagation delay. Default: 1ms."
        )

    def unit(s):
        s["properties"]["tcp"]["properties"]["tick"]["pattern"] = s["properties"]["link"]["items"][
            "properties"
        ]["bandwidth"]["pattern"]

    def meter_gone(s):
        s["$defs"]["meter"]["oneOf"] = [
            m for m in s["$defs"]["meter"]["oneOf"] if m["properties"]["type"]["const"] != "srtcm"
        ]

    def preset(s):
        s["properties"]["timing"]["properties"]["jitter"]["anyOf"][1]["enum"].append("lab")

    for change, needle in (
        (new_kind, "queue type 'sfq' is in the schema but has no builder class"),
        (preset, "scenario.timing.jitter: a duration or a preset of ['exact', 'testbed', 'lab']"),
        (new_key, "queue red: key `limit_bytes` is in the schema but RED has no field"),
        (dropped_key, "scenario.flow[]: Flow has a field `dscp` the schema does not have"),
        (enum, "queue rio.mode: choices"),
        (bound, "queue red.max_p: number range"),
        (required, "scenario.link[]: `delay` is required in Link, not in the schema"),
        (unit, "scenario.tcp.tick: unit pattern"),
        (meter_gone, "builder meter class SrTCM ('srtcm') is not in the schema"),
    ):
        found = drift(change)
        assert any(needle in d for d in found), (needle, found)


def test_every_field_is_documented_in_its_class_docstring():
    classes = {b.ScenarioSpec, b.Curve, b.PhysicalQueue, *b.QUEUES.values(), *b.METERS.values()}
    classes |= set(b.SOURCES.values())
    classes |= {b.TcpSettings, b.Measurement, b.Timing, b.Node, b.Link, b.Flow, b.Capture, b.Conditioner}
    for cls in classes:
        doc = cls.__doc__ or ""
        attrs = doc.split("Attributes:", 1)[1] if "Attributes:" in doc else ""
        for f in dataclasses.fields(cls):
            assert re.search(rf"\b{re.escape(f.name)}\b", attrs), f"{cls.__name__}.{f.name} is not documented"


# -- round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_scenario_files_load_and_resolve_to_the_same_scenario(path):
    spec = b.ScenarioSpec.load(path)
    text = spec.to_toml()
    assert b.ScenarioSpec.from_toml(text).to_toml() == text
    original, rebuilt = qoslab.load_scenario(path), spec.to_scenario()
    assert rebuilt.resolved == original.resolved
    assert rebuilt.sha256() == original.sha256()


def test_experiment_scenarios_round_trip_through_the_builder():
    """The first and last point of every sweep of every registered experiment: the scenarios
    the studies build with tables, overrides and their own helpers (multi queues, DWRED, TWAM,
    probe markers, ARD, FDD-RED...)."""
    from qoslab import reproduction

    kinds: set[str] = set()
    for exp in reproduction.available():
        for sweep in exp.plan(reproduction.Options(quick=True, seeds=[1])):
            for _, sc in (sweep.points[0], sweep.points[-1]):
                spec = b.ScenarioSpec.from_toml(sc.text, sc.source)
                assert b.ScenarioSpec.from_toml(spec.to_toml()).to_toml() == spec.to_toml()
                assert spec.to_scenario().sha256() == sc.sha256(), (exp.name, sweep.name)
                for lk in spec.links:
                    for q in (lk.queue, lk.queue_ab, lk.queue_ba):
                        if q is not None:
                            kinds.add(q.KIND or "")
                            if isinstance(q, b.MultiQueue):
                                kinds |= {pq.queue.KIND or "" for pq in q.queues}
                kinds |= {c.meter.KIND or "" for c in spec.conditioners}
    assert {"multi", "dwred", "twam", "probe", "ard", "fdd_red", "rio_plus_o", "wred", "tsw2cm"} <= kinds


#: The queue kinds the kitchen sink takes from their examples (each with the keys its example
#: sets): those registered after its list was written.
_FROM_EXAMPLES = [k for k in b.QUEUES if k not in {
    "droptail", "red", "ared", "rio", "wred", "rio_plus_o", "dwred", "multi", "fdd_red", "codel",
    "fq_codel", "pie", "step",
}]  # fmt: skip


def _example_queue(kind: str) -> b.Queue:
    """The first queue of type ``kind`` in scenarios/examples/, as the builder reads it."""
    for path in sorted((ROOT / "scenarios" / "examples").glob("*.toml")):
        if f'type = "{kind}"' in path.read_text():
            for lk in b.ScenarioSpec.load(path).links:
                for q in (lk.queue, lk.queue_ab, lk.queue_ba):
                    if isinstance(q, b.QUEUES[kind]):
                        return q
    raise AssertionError(f"no example of queue type {kind!r} in scenarios/examples/")


def kitchen_sink() -> b.ScenarioSpec:
    """A scenario that uses every queue kind and every meter kind (each with every key set where
    the core allows it) and every other table, and that the core accepts."""
    c = b.Curve
    queues: list[b.Queue] = [
        b.DropTail(limit="64KB"),
        b.RED(
            limit="60pkts",
            min_th=5,
            max_th=15.5,
            max_p=0.1,
            w_q=0.002,
            gentle=True,
            wait=False,
            byte_mode=False,
            mean_pkt_size="1000B",
            ecn=True,
        ),
        b.AdaptiveRED(
            limit="60pkts",
            min_th=5,
            max_th=20,
            max_p=0.05,
            w_q=0.002,
            gentle=True,
            wait=True,
            byte_mode=False,
            mean_pkt_size="1000B",
            ecn=False,
            alpha=0.01,
            beta=0.9,
            bottom=0.01,
            top=0.5,
            interval="0.5s",
        ),
        b.RIO(
            mode="decoupled",
            limit="80pkts",
            w_q=0.002,
            in_=c(min_th=40, max_th=70, max_p=0.02),
            mid=c(min_th=20, max_th=40, max_p=0.05),
            out=c(min_th=10, max_th=30, max_p=0.1),
            gentle=False,
            wait=False,
            mean_pkt_size="500B",
            ecn=False,
            flavour="ns2",
        ),
        b.WRED(
            limit="80pkts",
            w_q=0.002,
            in_=c(min_th=40, max_th=70, max_p=0.02),
            mid=c(min_th=20, max_th=40, max_p=0.05),
            out=c(min_th=10, max_th=30, max_p=0.1),
            gentle=True,
            wait=False,
            mean_pkt_size="500B",
            ecn=True,
            flavour="reference",
        ),
        b.RIOPlusO(
            limit="80pkts",
            w_q=0.002,
            in_=c(min_th=40, max_th=70, max_p=0.02),
            out=c(min_th=20, max_th=60, max_p=0.05),
            avg_out=c(min_th=10, max_th=30, max_p=0.1),
            gentle=False,
            wait=False,
            mean_pkt_size="500B",
        ),
        b.DWRED(
            limit="80pkts",
            signal="lsp",
            signal_delay="5ms",
            b=0.15,
            max_p=0.1,
            max_th=40,
            in_=c(min_th=40, max_th=70, max_p=0.02),
            w_q=0.002,
            wait=False,
            mean_pkt_size="500B",
        ),
        b.MultiQueue(
            scheduler="drr",
            queues=[
                b.PhysicalQueue(
                    # a weight is WRR's: under DRR the core refuses it
                    name="ef",
                    dscp=["EF"],
                    quantum="3000B",
                    queue=b.DropTail(limit="20pkts"),
                ),
                b.PhysicalQueue(name="af", default=True, queue=b.DWRED(signal="lsp", in_factor=1.5)),
            ],
        ),
        b.FDDRED(
            limit="60pkts",
            min_th=5,
            max_th=15,
            max_p=0.1,
            w_q=0.002,
            gentle=True,
            wait=True,
            mean_pkt_size="500B",
            rtt_source="oracle",
            penalty="fig2",
            victim="random",
        ),
        b.CoDel(limit="100pkts", target="5ms", interval="100ms", ecn=True),
        b.FQCoDel(
            limit="200pkts",
            target="5ms",
            interval="100ms",
            ecn=False,
            quantum="1514B",
            flows=256,
            drop_batch=32,
        ),
        b.PIE(
            limit="100pkts",
            target="15ms",
            t_update="15ms",
            alpha=0.125,
            beta=1.25,
            max_burst="150ms",
            ecn=True,
            mark_ecn_th=0.1,
            derandomize=False,
            mean_pkt_size="1500B",
        ),
        b.StepMarking(limit="100pkts", threshold="20pkts"),
    ]
    # a kind added since this list was written: the queue of its example (every kind has one,
    # tests/test_examples.py), read back through the builder
    covered = {type(q) for q in queues}
    queues += [_example_queue(kind) for kind in _FROM_EXAMPLES if b.QUEUES[kind] not in covered]
    assert {type(q) for q in queues} == set(b.QUEUES.values())
    meters: list[b.Meter] = [
        b.TokenBucket(cir=["250kbps", "500kbps"], cbs="10KB", mode="blind", flavour="ns2"),
        b.SrTCM(cir="250kbps", cbs="10KB", ebs="20KB", mode="blind", flavour="reference"),
        b.TrTCM(
            cir="250kbps", cbs="10KB", pir="500kbps", pbs="20KB", mode=["aware", "blind"], flavour="reference"
        ),
        b.TSW2CM(cir="250kbps", window="1s", flavour="ns2"),
        b.TSW3CM(cir="250kbps", pir="500kbps", window="500ms", flavour="reference"),
        b.ARM(
            tpr_max="1Mbps",
            bucket=60,
            t_rd=15,
            max_rem=0.5,
            tau="0.1s",
            n=1000,
            packet_size="1000B",
            drop_order="before_remark",
        ),
        b.ARD(
            tpr_max="1Mbps",
            bucket=60,
            t_rd=15,
            max_rem=0.5,
            tau="0.1s",
            n=1000,
            packet_size="1000B",
            drop_order="among_remarked",
            p_drop=0.02,
        ),
        b.TWAM(
            rates={"tcp0": "1Mbps", "cbr": "500kbps"},
            rtt="50ms",
            alpha=2,
            window_source="oracle",
            formula="eq3_neighbour",
        ),
        b.ProbeMarker(a0=10, alpha=0.5, increase="plus_one", isn=7),
    ]
    assert {type(m) for m in meters} == set(b.METERS.values())
    sc = b.ScenarioSpec(
        name='kitchen "sink"',
        description="every kind\tof queue and meter — ünïcode",
        duration="3s",
        seed=7,
        tcp=b.TcpSettings(
            variant="newreno",
            packet_size="1000B",
            ack_size="40B",
            window=30,
            initial_window=2,
            min_rto="200ms",
            max_rto="60s",
            initial_rto="3s",
            tick="10ms",
            delayed_ack=True,
            delack_interval="100ms",
            max_burst=0,
            dupack_threshold=3,
            ecn=True,
            syn=True,
        ),
        measurement=b.Measurement(
            start="1s", end="3s", interval="100ms", point="sender", bottleneck="q1", cwnd=False
        ),
        nodes=[b.Node(name="h{i}", count=2), b.Node(name="r{i}", count=len(queues) + 1)],
        links=[],
        flows=[],
        captures=[b.Capture(link="q0", direction="both", file="q0.pcap")],
    )
    sc.add(
        b.Link(
            name="access{i}", count=2, a="h{i}", b="r0", bandwidth=["10Mbps", "20Mbps"], delay=["1ms", "2ms"]
        )
    )
    for i, q in enumerate(queues):  # a row of routers r0 ... r9, one queue kind per link
        sc.add(b.Link(name=f"q{i}", a=f"r{i}", b=f"r{i + 1}", bandwidth="10Mbps", delay="2ms", queue_ab=q))
    sc.add(
        b.Flow(
            name="tcp{i}",
            count=2,
            src="h{i}",
            dst=f"r{len(queues)}",
            start=["0s", "uniform(0s, 0.5s)"],
            stop="2.5s",
            packet_size="1000B",
            dscp="AF11",
            tcp=b.TcpSettings(window=40),
        ),
        b.Flow(name="cbr", src="h0", dst=f"r{len(queues)}", source=b.CbrSource(rate="100kbps"), dscp=10),
        b.Flow(
            name="onoff",
            src="h1",
            dst=f"r{len(queues)}",
            source=b.OnOffSource(rate="200kbps", on="100ms", off="200ms"),
            start="1s",
            packet_size="500B",
        ),
        b.Flow(
            name="poisson{i}",
            count=1,
            src="h1",
            dst=f"r{len(queues)}",
            source=b.PoissonSource(rate=["100kbps"]),
        ),
        b.Flow(
            name="pareto",
            src="h0",
            dst=f"r{len(queues)}",
            source=b.ParetoSource(rate="100kbps", on="50ms", off="100ms", shape=1.2),
        ),
    )
    for i, m in enumerate(meters):
        many = any(isinstance(getattr(m, f.name), list) for f in dataclasses.fields(m))
        sc.add(
            b.Conditioner(
                name="lsp" if isinstance(m, b.TWAM) else (f"c{i}_{{i}}" if many else f"c{i}"),
                count=2 if many else None,
                link="access{i}" if many else "q0",
                direction="ab",
                classify="any" if many else "src:h0",
                meter=m,
                scope="aggregate" if isinstance(m, b.ARM | b.ARD | b.TWAM) else "per_flow",
                green="AF11",
                yellow="AF12",
                red=_red_action(m),
            )
        )
    return sc


def _red_action(m: b.Meter) -> str | None:
    """The kitchen sink's red action: none where the meter leaves no packet red (the core
    refuses one there: two colours, colour-blind; ARM, and ARD without drops), ARD's drop."""
    if isinstance(m, b.TSW2CM | b.ARM) or (isinstance(m, b.TokenBucket) and m.mode != "aware"):
        return None
    if isinstance(m, b.ARD):
        return None if m.p_drop == 0 else "drop"
    return "keep"


def test_a_scenario_with_every_kind_round_trips_and_the_core_accepts_it(tmp_path):
    sc = kitchen_sink()
    text = sc.to_toml()
    assert b.ScenarioSpec.from_toml(text) == sc
    assert b.ScenarioSpec.from_toml(text).to_toml() == text
    # every key of every class is written at least once
    table = tomllib.loads(text)
    written: dict[str, set[str]] = {}

    def visit(t: Any) -> None:
        if isinstance(t, dict):
            if "type" in t and t["type"] in b.QUEUES | b.METERS:
                written.setdefault(t["type"], set()).update(t)
            for v in t.values():
                visit(v)
        elif isinstance(t, list):
            for v in t:
                visit(v)

    visit(table)
    for kind, cls in {**b.QUEUES, **b.METERS}.items():
        keys = {"type", *(b.toml_key(f) for f in dataclasses.fields(cls))}
        if kind in _FROM_EXAMPLES:
            assert "type" in written[kind] and written[kind] <= keys, kind  # the keys its example sets
        else:
            assert written[kind] == keys, kind
    resolved = sc.to_scenario().resolved
    assert len(resolved["conditioners"]) == 11 and len(resolved["flows"]) == 6
    res = sc.run(seed=2, tables=False, out=tmp_path / "run")  # it captures: its files go there
    assert res.summary()["conservation_violations"] == []
    assert (tmp_path / "run" / "q0.ab.pcap").is_file() and (tmp_path / "run" / "q0.ba.pcap").is_file()


def _strategy(cls: type[b.Component]) -> st.SearchStrategy[Any]:
    """Instances of ``cls`` with arbitrary values of the right kinds (not necessarily a scenario
    the core accepts): for the round trip of every field's value through TOML."""
    units = {
        "duration": ["ns", "us", "µs", "ms", "s", "min"],
        "rate": ["bps", "kbps", "Mbps", "Gbps", "b/s"],
        "bytes": ["B", "KB", "kB", "KiB", "MB"],
        "limit": ["pkts", "packets", "B", "KB"],
    }

    def value(meta: Any) -> st.SearchStrategy[Any]:
        kind = meta["kind"]
        if kind in units or kind == "start":
            u = units["duration" if kind == "start" else kind]
            num = st.integers(0, 10**6).map(str) | st.floats(0, 1e6).map(repr)
            s = st.builds(lambda n, x: n + x, num, st.sampled_from(u))
            return s | st.builds(lambda a, z: f"uniform({a}, {z})", s, s) if kind == "start" else s
        if kind == "number":
            lo, hi = meta["lo"], meta["hi"]
            return st.floats(
                lo,
                hi,
                exclude_min=meta["lo_open"] and lo is not None,
                exclude_max=meta["hi_open"] and hi is not None,
                allow_nan=False,
                allow_infinity=False,
            )
        if kind == "integer":
            return st.integers(int(meta["lo"]), 2**40 if meta["hi"] is None else int(meta["hi"]))
        if kind == "bool":
            return st.booleans()
        if kind == "choice":
            return st.sampled_from(meta["choices"])
        if kind == "name":
            return st.text(max_size=8)
        if kind == "dscp":
            return st.text(min_size=1, max_size=4) | st.integers(0, 63)
        if kind == "codepoints":
            return st.lists(st.text(max_size=4), max_size=3)
        if kind == "rates":
            return st.dictionaries(st.text(max_size=5), value({**meta, "kind": "rate"}), max_size=3)
        if kind == "curve":
            return st.deferred(lambda: _strategy(b.Curve))
        if kind in ("queue", "single_queue"):
            kinds = [q for q in b.QUEUES.values() if kind == "queue" or q is not b.MultiQueue]
            return st.one_of([st.deferred(lambda q=q: _strategy(q)) for q in kinds])
        if kind == "meter":
            return st.one_of([st.deferred(lambda m=m: _strategy(m)) for m in b.METERS.values()])
        if kind == "constants":
            consts = st.dictionaries(st.sampled_from(["c", "beta", "g"]), st.floats(0.01, 0.99), max_size=2)
            return st.dictionaries(st.sampled_from(["cubic", "dctcp", "bbr"]), consts, max_size=2)
        if kind == "source":
            return st.one_of([st.deferred(lambda s=s: _strategy(s)) for s in b.SOURCES.values()])
        if kind == "table":
            return st.deferred(lambda: _strategy(meta["cls"]))
        if kind == "duration_or_preset":
            return st.sampled_from(meta["choices"]) | value({**meta, "kind": "duration"})
        if kind == "size":  # a size with a unit, or a distribution table
            return value({**meta, "kind": "bytes"}) | st.deferred(lambda: _strategy(b.SizeDistribution))
        assert kind == "tables", kind
        return st.lists(st.deferred(lambda: _strategy(meta["cls"])), max_size=2)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        kw = {}
        for f in dataclasses.fields(cls):
            v = value(f.metadata)
            if f.metadata["per_member"]:
                v = v | st.lists(v, min_size=1, max_size=3)
            if f.default is None:
                v = st.none() | v
            kw[f.name] = draw(v)
        if cls is b.Flow and kw["tcp"] is not None:  # the flow's cheap cross-check
            kw["source"] = None
        return cls(**kw)

    return build()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(_strategy(b.ScenarioSpec))
def test_any_spec_round_trips_through_toml_byte_for_byte(spec):
    text = spec.to_toml()
    again = b.ScenarioSpec.from_toml(text)
    assert again == spec
    assert again.to_toml() == text


# -- checks and errors --------------------------------------------------------------------------


def _error(fn, *args, **kw) -> qoslab.ScenarioError:
    with pytest.raises(qoslab.ScenarioError) as e:
        fn(*args, **kw)
    assert isinstance(e.value, ValueError)
    return e.value


def test_an_unknown_kind_names_the_key_and_every_choice():
    e = _error(b.Queue.from_table, {"type": "cake", "limit": "10pkts"}, key="link[1].queue_ab")
    assert e.key == "link[1].queue_ab.type"
    assert "'cake'" in e.message and all(repr(k) in e.message for k in b.QUEUES)
    e = _error(b.Meter.from_table, {"type": "srTCM"})
    assert e.key == "type" and all(repr(k) in e.message for k in b.METERS)
    e = _error(b.Meter.from_table, {"cir": "1Mbps"})
    assert e.key == "type" and "needs `type`" in e.message
    e = _error(b.Flow.from_table, {"src": "a", "dst": "b", "type": "quic"}, key="flow[0]")
    assert e.key == "flow[0].type" and "'quic'" in e.message
    assert all(repr(k) in e.message for k in ("cbr", "onoff", "poisson"))
    e = _error(
        b.RIO,
        mode="hybrid",
        in_=b.Curve(min_th=1, max_th=2, max_p=0.1),
        out=b.Curve(min_th=1, max_th=2, max_p=0.1),
    )
    assert e.key == "RIO.mode" and "'coupled', 'decoupled'" in e.message
    # a class's own table may carry its type, but not another's
    e = _error(b.RED.from_table, {"type": "wred", "min_th": 1, "max_th": 2})
    assert e.key == "type" and "'red'" in e.message
    assert b.Queue.from_table({"type": "red", "min_th": 1, "max_th": 2}) == b.RED(min_th=1, max_th=2)


def test_bad_values_fail_at_construction_naming_the_key():
    e = _error(b.Link, a="x", b="y", bandwidth=10_000_000, delay="1ms")
    assert e.key == "Link.bandwidth" and "has no unit" in e.message
    e = _error(b.Link, a="x", b="y", bandwidth="10Mbit", delay="1ms")
    assert e.key == "Link.bandwidth" and "'10Mbit'" in e.message
    e = _error(b.RED, min_th=5, max_th=15, max_p=1.5)
    assert e.key == "RED.max_p" and "(0, 1]" in e.message
    e = _error(b.RED, min_th=5, max_th=0)
    assert e.key == "RED.max_th"
    e = _error(b.Node, name="n", count=0)
    assert e.key == "Node.count" and ">= 1" in e.message
    e = _error(b.TcpSettings, ecn="yes")
    assert e.key == "TcpSettings.ecn" and "true or false" in e.message
    e = _error(b.Flow.from_table, {"src": "a", "dst": "b", "type": "cbr"}, key="flow[0]")
    assert e.key == "flow[0].rate" and "required" in e.message
    e = _error(b.Flow, src="a", dst="b", source=b.CbrSource(rate="1Mbps"), tcp=b.TcpSettings())
    assert e.key == "Flow.tcp" and "not TCP" in e.message
    e = _error(b.Flow, src="a", dst="b", start=["0s", "later"])
    assert e.key == "Flow.start" and "member 1" in e.message
    e = _error(b.PhysicalQueue, dscp=["EF"], queue=b.MultiQueue(queues=[]))
    assert e.key == "PhysicalQueue.queue" and "cannot itself be a multi queue" in e.message
    e = _error(b.Conditioner, link="l", meter=b.RED(min_th=1, max_th=2))
    assert e.key == "Conditioner.meter" and "expected a Meter" in e.message
    assert b.Flow(src="a", dst="b", start="uniform(0s, 1.5s)").start == "uniform(0s, 1.5s)"
    # a change after construction is checked when the table is written
    lk = b.Link(a="x", b="y", bandwidth="1Mbps", delay="1ms")
    lk.delay = 5
    e = _error(lk.to_table)
    assert e.key == "Link.delay"


def test_reading_a_table_names_the_full_key_path():
    table = tomllib.loads((SCENARIOS / "fdd-red-s1.toml").read_text())
    table["link"][1]["queue_ab"]["max_p"] = 2
    e = _error(b.ScenarioSpec.from_table, table, source="x.toml")
    assert (e.file, e.key) == ("x.toml", "link[1].queue_ab.max_p")
    table["link"][1]["queue_ab"]["max_p"] = 0.1
    table["flow"][0]["sorce"] = "s0"
    e = _error(b.ScenarioSpec.from_table, table)
    assert e.key == "flow[0].sorce" and "Flow takes name, count, src" in e.message
    del table["flow"][0]["sorce"]
    del table["link"][0]["delay"]
    e = _error(b.ScenarioSpec.from_table, table)
    assert e.key == "link[0].delay" and "required" in e.message
    e = _error(b.ScenarioSpec.from_toml, "name = [", "broken.toml")
    assert e.file == "broken.toml" and "not valid TOML" in e.message


BAD = ROOT / "tests" / "bad_scenarios"


@pytest.mark.parametrize("path", sorted(BAD.glob("*.toml")), ids=lambda p: p.name)
def test_bad_scenarios_fail_on_the_same_key_as_in_the_core(path):
    """The builder checks some keys itself and leaves the rest to the core: either way a bad
    file fails on the key the core names (tests/bad_scenarios/expected_keys.json)."""
    expected = json.loads((BAD / "expected_keys.json").read_text())[path.name]
    e = _error(lambda: b.ScenarioSpec.load(path).to_scenario())
    assert (e.key or "") == expected
    assert e.line is None or e.file == str(path)  # no line of generated text is reported


def test_the_core_is_the_authority_for_what_python_does_not_check():
    sc = b.dumbbell(2, bottleneck_queue=b.RED(min_th=30, max_th=20))
    e = _error(sc.to_scenario)
    assert e.key == "link[1].queue_ab.min_th" and "smaller than max_th" in e.message
    assert e.file == "<builder 'dumbbell'>" and e.line is None
    sc = b.dumbbell(2)
    sc.flows[0].dst = "nowhere"
    e = _error(sc.to_scenario)
    assert e.key == "flow[0].dst" and "unknown node" in e.message


# -- topologies ---------------------------------------------------------------------------------


def _dumbbell_1s(*args: Any, **kwargs: Any) -> b.ScenarioSpec:
    """A dumbbell sampled every second, as the scenario files are (the default is 100 ms)."""
    d = b.dumbbell(*args, **kwargs)
    assert d.measurement is not None
    d.measurement.interval = "1s"
    return d


def test_dumbbell_is_the_fdd_red_scenario_files():
    s1 = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    s3 = qoslab.load_scenario(SCENARIOS / "fdd-red-s3.toml")
    common: dict[str, Any] = dict(
        duration="100s",
        bottleneck_rate="1Mbps",
        bottleneck_delay="5ms",
        bottleneck_queue=b.RED(limit="100pkts", min_th=25, max_th=75, max_p=0.01, w_q=0.002),
        access_rate="10Mbps",
        flow_name="ftp{i}",
        tcp=b.TcpSettings(variant="reno", packet_size="500B", window=1000),
        warmup="20s",
    )
    d1 = _dumbbell_1s(
        5, name="fdd-red-s1", description=s1.resolved["description"], access_delay="44ms", **common
    )
    assert d1.to_scenario().sha256() == s1.sha256()
    # RTTs 20, 40, ... 100 ms: the access delays 4, 14, ... 44 ms, by spread or by list
    d3 = _dumbbell_1s(
        5,
        name="fdd-red-s3",
        description=s3.resolved["description"],
        access_delay="4ms",
        rtt_spread=5.0,
        **common,
    )
    assert d3.links[0].delay == ["4ms", "14ms", "24ms", "34ms", "44ms"]
    assert d3.to_scenario().sha256() == s3.sha256()
    listed = _dumbbell_1s(
        5,
        name="fdd-red-s3",
        description=s3.resolved["description"],
        access_delay=["4ms", "14ms", "24ms", "34ms", "44ms"],
        **common,
    )
    assert listed == d3
    e = _error(b.dumbbell, 3, access_delay=["1ms", "2ms"])
    assert e.key == "access_delay" and "2 delays for 3 flows" in e.message
    assert _error(b.dumbbell, 0).key == "n_flows"


def test_dumbbell_of_tcp_flows_fills_the_bottleneck_and_no_more():
    sc = b.dumbbell(4, bottleneck_rate="2Mbps", duration="10s", warmup="2s", rtt_spread=3.0)
    res = sc.run(seed=1)
    s = res.summary()
    assert s["bottleneck"].startswith("bottleneck")
    assert 0.95 <= s["utilization"] <= 1.0
    total = res.flows["throughput_bps"].sum()
    assert 0.9 * 2e6 <= total <= 2e6 * 1.0005
    assert (res.flows["throughput_bps"] > 0.05 * 2e6).all()
    assert s["conservation_violations"] == []


def test_parking_lot_long_flow_crosses_every_hop():
    hops = 3
    sc = b.parking_lot(hops, duration="10s", warmup="2s")
    res = sc.run(seed=1)
    flows = res.flows.set_index("name")
    links = res.links.set_index(["link_name", "direction"])
    for h in range(hops):
        on_hop = ["long0", f"cross{h}_0"]
        arrivals = links.loc[(f"hop{h}", "ab"), "arrivals"]
        # every delivered packet of the long flow and of this hop's cross flow went through the
        # hop, and nothing but their packets did: no other flow's data crosses hop h
        assert (
            flows.loc[on_hop, "delivered_packets"].sum()
            <= arrivals
            <= flows.loc[on_hop, "sent_packets"].sum()
        )
        assert links.loc[(f"hop{h}", "ab"), "utilization"] > 0.95
        others = [f"cross{g}_0" for g in range(hops) if g != h]
        assert arrivals < flows.loc[["long0", *others], "delivered_packets"].sum() or hops == 1
    # the long flow crosses three bottlenecks with a longer RTT: it gets less than each cross flow
    cross = flows.loc[[f"cross{h}_0" for h in range(hops)], "throughput_bps"]
    assert flows.loc["long0", "throughput_bps"] < cross.min()


def test_chain_bottleneck_and_udp_flows():
    sc = b.chain(3, rate=["10Mbps", "2Mbps", "10Mbps"], delay="5ms", flows=2, duration="10s", warmup="2s")
    res = sc.run(seed=1)
    s = res.summary()
    assert s["bottleneck"].startswith("link1") and s["utilization"] > 0.9
    assert res.flows["throughput_bps"].sum() <= 2e6 * 1.0005
    cbr = b.chain(2, flow_type="cbr", flow_rate="1Mbps", duration="10s", start="0s").run(seed=1)
    assert cbr.flows.loc[0, "kind"] == "cbr"
    assert cbr.flows.loc[0, "throughput_bps"] == pytest.approx(1e6, rel=0.01)
    # each link has its own queue object: changing one changes no other
    ch = b.chain(3, queue=b.RED(min_th=5, max_th=15))
    ch.links[0].queue.max_p = 0.5  # type: ignore[union-attr]
    red, changed = b.RED(min_th=5, max_th=15), b.RED(min_th=5, max_th=15, max_p=0.5)
    assert [lk.queue for lk in ch.links] == [changed, red, red]
    e = _error(b.chain, 3, rate=["1Mbps", "2Mbps"])
    assert e.key == "rate" and "2 values for 3 links" in e.message


def test_spec_converts_and_runs_through_the_public_api():
    sc = b.chain(1, duration="2s")
    scenario = sc.to_scenario()
    assert isinstance(scenario, qoslab.Scenario)
    assert scenario.table() == tomllib.loads(sc.to_toml())
    res = qoslab.run(scenario, seed=3)
    assert res.seed == 3 and len(res.flows) == 1
    assert qoslab.builder is b


# -- a user's own experiment --------------------------------------------------------------------

PLUGIN = """
from qoslab import builder as b
from qoslab.reproduction import Experiment, Options, Sweep, register


def plan(opts: Options) -> list[Sweep]:
    rates = ["1Mbps", "2Mbps"] if opts.quick else ["1Mbps", "2Mbps", "4Mbps"]
    points = [({"rate": r}, b.dumbbell(2, bottleneck_rate=r, duration="3s").to_scenario()) for r in rates]
    return [Sweep("rate", points, opts.seeds, "bottleneck rate")]


def analyse(ctx) -> None:
    st = ctx.stats("rate", ["utilization", "aggregate_throughput_bps"])
    ctx.table("utilization", st, title="Utilisation by rate", columns=["rate", "mean", "seeds"])


register(Experiment(name="NAME", title="A user's dumbbell", paper="none", summary="plugin test",
                    plan=plan, analyse=analyse, seeds=2, quick_seeds=1))
"""


def _env(**extra: str) -> dict[str, str]:
    pkg = str(Path(qoslab.__file__).resolve().parents[1])
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra.get("PYTHONPATH"), pkg) if p)
    return env


def test_a_users_experiment_file_is_listed_and_reproduced(tmp_path):
    plugin = tmp_path / "my_study.py"
    plugin.write_text(PLUGIN.replace("NAME", "my-dumbbell"))
    env = _env(QOSLAB_PLUGINS=str(plugin))
    p = subprocess.run([QOSLAB, "reproduce", "--list"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "my-dumbbell" in p.stdout.split() and "red-baseline" in p.stdout.split()
    out, store = tmp_path / "out", tmp_path / "store"
    cmd = [QOSLAB, "reproduce", "my-dumbbell", "--quick", "--out", str(out), "--store", str(store), "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "my-dumbbell: 2 runs (2 computed" in p.stdout
    report = (out / "my-dumbbell" / "report.md").read_text()
    assert "Utilisation by rate" in report
    table = (out / "my-dumbbell" / "utilization.csv").read_text()
    assert "1Mbps" in table and "2Mbps" in table
    # without the plugin it is unknown
    p = subprocess.run(
        [QOSLAB, "reproduce", "my-dumbbell"], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert p.returncode == 1 and "unknown experiment 'my-dumbbell'" in p.stderr


def test_an_installed_packages_entry_point_registers_its_experiment(tmp_path):
    (tmp_path / "pkg_study.py").write_text(
        PLUGIN.replace("register(Experiment(", "EXPERIMENT = (Experiment(").replace("NAME", "pkg-dumbbell")
    )
    dist = tmp_path / "pkg_study-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg-study\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[qoslab.experiments]\npkg-dumbbell = pkg_study:EXPERIMENT\n")
    code = "from qoslab import reproduction; print(' '.join(e.name for e in reproduction.available()))"
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(PYTHONPATH=str(tmp_path))
    )
    assert p.returncode == 0, p.stderr
    assert "pkg-dumbbell" in p.stdout.split()
    code = "from qoslab import reproduction; print(reproduction.get('pkg-dumbbell').title)"
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(PYTHONPATH=str(tmp_path))
    )
    assert p.stdout.strip() == "A user's dumbbell", p.stderr


def test_a_broken_plugin_is_one_clear_error(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("import no_such_module_qoslab\n")
    p = subprocess.run(
        [QOSLAB, "reproduce", "--list"],
        capture_output=True,
        text=True,
        env=_env(QOSLAB_PLUGINS=str(bad)),
        timeout=120,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert (
        "cannot load experiment plugin" in p.stderr
        and "broken.py" in p.stderr
        and "$QOSLAB_PLUGINS" in p.stderr
    )
    assert "ModuleNotFoundError" in p.stderr


def test_load_plugin_in_process(tmp_path, monkeypatch):
    from qoslab.reproduction import base

    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    plugin = tmp_path / "inproc_study.py"
    plugin.write_text(PLUGIN.replace("NAME", "inproc-dumbbell"))
    base.load_plugin(str(plugin))
    base.load_plugin(str(plugin))  # a second load does nothing (no "already registered")
    exp = base.get("inproc-dumbbell")
    sweeps = exp.plan(base.Options(quick=True, seeds=[1]))
    assert [p for p, _ in sweeps[0].points] == [{"rate": "1Mbps"}, {"rate": "2Mbps"}]
    with pytest.raises(base.PluginError, match="no_such_module_qoslab"):
        base.load_plugin("no_such_module_qoslab")


# -- the documentation --------------------------------------------------------------------------

DOC = ROOT / "docs" / "python-api.md"


def test_the_python_api_page_runs(tmp_path, monkeypatch):
    """Every ```python block of docs/python-api.md, in order, in one namespace."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 4
    from qoslab.reproduction import base

    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))  # the page registers an experiment
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").symlink_to(SCENARIOS)
    ns: dict[str, Any] = {"__name__": "python_api_doc"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(textwrap.dedent(block), f"{DOC.name} block {i}", "exec"), ns)
        except Exception as e:
            raise AssertionError(f"block {i} of {DOC} fails:\n{block}") from e


def test_the_python_api_page_lists_every_kind():
    text = DOC.read_text()
    for kind, cls in {**b.QUEUES, **b.METERS}.items():
        assert f'`"{kind}"`' in text and f"`{cls.__name__}`" in text, kind
