"""Issue 22: the five studies under today's TCP. ``reproduce(..., sender="cubic")`` runs every
TCP sender of every scenario (and of every run the analysis makes itself) with that congestion
control, into ``NAME-cubic/``, and its verdicts record the sender; docs/experiments/todays-tcp.md
sets each claim's verdicts under the paper's TCP beside those under SACK, CUBIC and BBR."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

import qoslab
from conftest import QOSLAB, ROOT, SCENARIOS, one_line_error
from qoslab import reproduction, verdicts
from qoslab.reproduction.base import Experiment, Sweep
from qoslab.stats import paired
from qoslab.verdicts import Claim
from qoslab.verdicts.currency import FULL_SENDERS, own_senders


def _variants(sc: qoslab.Scenario) -> list[str]:
    r = sc.resolved
    return [f["tcp"]["variant"] for f in [*r["flows"], *r["arrivals"]] if f.get("tcp")]


def test_with_tcp_variant_replaces_every_sender_and_nothing_else():
    sc = qoslab.load_scenario(SCENARIOS / "mixed-traffic.toml")
    assert set(_variants(sc)) == {"reno"} and sc.resolved["arrivals"], "a web mix of arrivals"
    cubic = sc.with_tcp_variant("cubic")
    assert set(_variants(cubic)) == {"cubic"}
    assert len(_variants(cubic)) == len(_variants(sc))

    # UDP sources, links and every other TCP setting are as they were
    def rest(s: qoslab.Scenario) -> tuple:
        r = s.resolved
        both = [*r["flows"], *r["arrivals"]]
        rest = [{k: v for k, v in f.items() if k != "tcp"} for f in both]
        tcp = [{k: v for k, v in f["tcp"].items() if k != "variant"} for f in both if f.get("tcp")]
        return rest, tcp, r["links"], r["conditioners"]

    assert rest(cubic) == rest(sc)
    assert cubic.sha256() != sc.sha256() and cubic.name == sc.name
    # a flow's own tcp table naming a variant is replaced too
    t = sc.table()
    t["flow"][0]["tcp"] = {"variant": "newreno"}
    own = qoslab.Scenario.from_table(t).with_tcp_variant("bbr")
    assert set(_variants(own)) == {"bbr"}


def test_a_sender_the_scenario_cannot_run_is_one_clear_error():
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_tcp_variant("dctcp")
    msg = str(e.value)
    assert "\n" not in msg and "every TCP sender dctcp" in msg, msg
    with pytest.raises(qoslab.ScenarioError, match="variant"):
        sc.with_tcp_variant("vegas")


def _experiment(seen: list[list[str]], *, own_senders: bool = False) -> Experiment:
    short = ["duration=20s", "measurement.start=5s", "measurement.end=20s"]
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(short)

    def plan(opts: reproduction.Options) -> list[Sweep]:
        return [Sweep("one", [({"k": 1}, sc)], opts.seeds)]

    def analyse(ctx: reproduction.Context) -> None:
        r = ctx.run(sc, ctx.options.seeds[0])
        seen.append(_variants(r.scenario))
        flows = ctx.flows("one")
        ctx.table("flows", flows[["seed", "flow_name", "throughput_bps"]], title="flows")
        per_seed = flows.groupby("seed")["throughput_bps"].sum()
        claim = Claim("flows get something", "Sec. 1", "greater", "> 0")
        ctx.verdict(claim.paired("as stated", paired(per_seed, per_seed * 0)))

    return Experiment(
        "sender-probe",
        "t",
        "",
        "",
        plan=plan,
        analyse=analyse,
        seeds=2,
        quick_seeds=2,
        own_senders=own_senders,
    )


def test_reproduce_with_every_sender_replaced(tmp_path):
    seen: list[list[str]] = []
    exp = _experiment(seen)
    store = tmp_path / "store"
    ref = reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False)
    cub = reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False, sender="cubic")
    assert ref.out.name == "sender-probe" and cub.out.name == "sender-probe-cubic"
    # the analysis's own run follows the reproduction's senders
    assert set(seen[0]) == {"reno"} and set(seen[1]) == {"cubic"}, seen
    # other runs (another scenario), with other results
    assert cub.sweep.computed == 2, "a sender run must not reuse the paper's runs"
    a = pd.read_csv(ref.out / "flows.csv")["throughput_bps"]
    b = pd.read_csv(cub.out / "flows.csv")["throughput_bps"]
    assert not a.equals(b)
    rep = (cub.out / "report.md").read_text()
    assert "| TCP senders | **cubic** for every TCP sender" in rep, rep[:3000]
    assert "| TCP senders | reno (as the scenarios give them) |" in (ref.out / "report.md").read_text()
    doc = verdicts.read(cub.out / "verdicts.json")
    assert doc["sender"] == "cubic" and {v["sender"] for v in doc["verdicts"]} == {"cubic"}
    assert doc["command"].endswith("--sender cubic")
    assert verdicts.read(ref.out / "verdicts.json")["sender"] == "as published"
    assert doc["tcp_flavour"] == "ns2"
    # the same senders as Linux runs them: other runs, and the file says so (and how to redo it)
    lin = reproduction.reproduce(
        exp, quick=True, out=tmp_path, store=store, progress=False, sender="cubic", tcp_flavour="linux"
    )
    assert lin.out.name == "sender-probe-cubic-tcp-linux" and lin.sweep.computed == 2
    assert not pd.read_csv(lin.out / "flows.csv")["throughput_bps"].equals(b)
    ldoc = verdicts.read(lin.out / "verdicts.json")
    assert ldoc["tcp_flavour"] == "linux" and ldoc["command"].endswith("--sender cubic --tcp-flavour linux")
    assert "transport flavour **linux** for every TCP flow" in (lin.out / "report.md").read_text()
    with pytest.raises(ValueError, match="unknown sender 'vegas': expected one of reno, newreno"):
        reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False, sender="vegas")
    own = _experiment([], own_senders=True)
    with pytest.raises(ValueError, match="compares TCP senders itself"):
        reproduction.reproduce(own, quick=True, out=tmp_path, store=store, progress=False, sender="bbr")


def test_cli_sender_option_is_one_line_on_bad_input(tmp_path):
    for args, want in (
        (["red-baseline", "--sender", "vegas"], "unknown sender 'vegas'"),
        (["modern-aqm", "--sender", "cubic"], "modern-aqm compares TCP senders itself"),
    ):
        p = subprocess.run(
            [QOSLAB, "reproduce", *args, "--quick", "--out", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 1 and want in one_line_error(p), (p.returncode, p.stderr[-500:])


def test_todays_tcp_page_is_generated_from_the_committed_verdicts():
    """docs/experiments/todays-tcp.md's tables are what ``python -m qoslab.verdicts readme``
    writes from docs/verdicts/senders/*.json, the linux flavour's runs with exact timing
    (docs/verdicts/senders-exact/) and the kernel validation's results: every study of
    docs/verdicts/ under its paper's TCP and under each of SACK, CUBIC and BBR in the ns2 flavour
    and in the linux flavour, each flavour's runs of one mode and seed count; a file that
    predates claims declared since shows them as not run (the table's note says so). An exact
    file is the same sender's run with the same seeds as its linux column's, exact timing."""
    committed = {verdicts.read(f)["experiment"] for f in (ROOT / "docs" / "verdicts").glob("*.json")}
    studies = {name for name in committed if not reproduction.get(name).own_senders}
    docs = [verdicts.read(f) for f in sorted((ROOT / "docs" / "verdicts" / "senders").glob("*.json"))]
    # a study that compares senders itself (buffer-sizing) takes no --sender: none of its files
    # here but its own linux column (its own senders, in the linux flavour), and no section of
    # its own on the page
    page = (ROOT / "docs" / "experiments" / "todays-tcp.md").read_text(encoding="utf-8")
    for name in committed - studies:
        assert not any(d["experiment"] == name and not own_senders(d) for d in docs), name
        assert f"(`{name}`)" not in page, name
    docs = [d for d in docs if not own_senders(d)]
    exact = [verdicts.read(f) for f in sorted((ROOT / "docs" / "verdicts" / "senders-exact").glob("*.json"))]
    for name in studies:
        mine = [d for d in docs if d["experiment"] == name]
        assert sorted(verdicts.column_of(d) for d in mine) == sorted(verdicts.docs.COLUMNS), name
        for flavour in ("ns2", "linux"):
            runs = {(d["quick"], d["seeds"]) for d in mine if verdicts.column_of(d)[1] == flavour}
            assert len(runs) == 1, (name, flavour, runs)
        claims = [{(v["claim"], v["section"]) for v in d["verdicts"]} for d in mine]
        if any(c != claims[0] for c in claims):
            assert verdicts.docs.NOT_RUN_NOTE in verdicts.survival_table(mine, "", {}), name
    cols = {(d["experiment"], verdicts.column_of(d)): d for d in docs}
    for e in exact:
        ours = cols[(e["experiment"], verdicts.column_of(e))]
        assert (e.get("timing"), ours.get("timing"), e["seeds"], e["quick"]) == (
            "exact",
            "testbed",
            ours["seeds"],
            True,
        )
    page = ROOT / "docs" / "experiments" / "todays-tcp.md"
    against = verdicts.docs.generated_against(ROOT / "README.md")
    val = verdicts.kernel_validations(ROOT)
    assert set(val) == {"ns2", "linux", "ns2-exact", "linux-exact"}  # with the testbed's noise, and without
    assert verdicts.block(page) == verdicts.survival_table(docs, against, val, exact=exact)


def test_kernel_validation_counts_each_modules_targets():
    """Each linux-flavour column's "N of M kernel targets hold" counts the judged targets of the
    grid's points where a flow runs that module; a target not judged (a lone flow's share) is
    not counted, and a failing one is named."""
    res = {
        "points": [
            {
                "point": {"name": "a", "variants": ["bbr", "cubic"]},
                "verdict": {"share": True, "qdelay": False},
            },
            {"point": {"name": "b", "variants": ["cubic"]}, "verdict": {"share": None, "qdelay": True}},
        ]
    }
    val = verdicts.kernel_validation(res)
    assert val == {"bbr": (1, 2, ["a (qdelay)"]), "cubic": (2, 3, ["a (qdelay)"])}


def test_a_columns_kernel_count_is_the_one_of_the_timing_its_runs_had():
    """A linux-flavour column quotes the kernel grid judged in the timing its runs had: a file
    without ``timing`` (exact, as the scenarios run by default) the grid with exact timing (CUBIC:
    the five-flow split fails there), a file recording ``timing: testbed`` the testbed table."""
    val = {
        "linux": {"cubic": (34, 34, [])},
        "linux-exact": {"cubic": (33, 34, ["cubic5-1bdp (share)"])},
    }
    col = ("cubic", "linux")
    assert (
        verdicts.docs.validation_cell(col, val)
        == "33 of 34 kernel targets hold with exact timing, as these runs"
    )
    assert verdicts.docs.validation_cell(col, val, "testbed").startswith(
        "34 of 34 kernel targets hold with the"
    )
    # the page's CUBIC column ran with the testbed's timing (--timing testbed) and says so (33 of
    # 34 there: the five-flow split misses at the edge of its rule, docs/validation/linux.md)
    page = (ROOT / "docs" / "experiments" / "todays-tcp.md").read_text()
    assert "cubic, linux flavour — 33 of 34 kernel targets hold with the testbed's timing noise" in page


def test_sender_files_in_one_column_are_refused_and_the_paper_column_is_the_runners():
    """Two files of a study in one column (a linux-flavour file without its ``tcp_flavour``
    reads as the ns2 flavour's) are an error, not one file silently hiding the other; the
    page's first column is what the runner writes for the paper's senders."""
    from qoslab.reproduction.runner import PAPER_SENDERS

    assert verdicts.docs.COLUMNS[0] == (PAPER_SENDERS, "ns2")
    a = {"experiment": "x", "sender": "cubic", "tcp_flavour": "linux", "verdicts": [], "command": "a"}
    b = {"experiment": "x", "sender": "cubic", "verdicts": [], "command": "b"}
    assert set(verdicts.docs.by_column([a, b])["x"]) == {("cubic", "linux"), ("cubic", "ns2")}
    with pytest.raises(ValueError, match="two sender files of x in one column"):
        verdicts.docs.by_column([a, dict(a, command="c")])


def test_full_length_block_is_generated_from_the_studies_and_the_linux_flavours_full_runs():
    """The todays-tcp page's full-length block is what ``python -m qoslab.verdicts readme``
    writes from the studies' own files (the paper's TCP) and docs/verdicts/senders-full/: each
    file there a full (not quick) sequential run of a study in the linux flavour, over the
    study's claims (or those declared when it ran, the page marking the rest not run), decided
    under the same sequential design (looks and cap); each sender there has every study."""
    full = [verdicts.read(f) for f in sorted((ROOT / "docs" / "verdicts" / FULL_SENDERS).glob("*.json"))]
    assert full, "no full-length linux-flavour runs committed"
    committed = [verdicts.read(f) for f in sorted((ROOT / "docs" / "verdicts").glob("*.json"))]
    papers = {d["experiment"]: d for d in committed if not reproduction.get(d["experiment"]).own_senders}
    for sender in {verdicts.sender_of(d) for d in full}:
        assert {d["experiment"] for d in full if verdicts.sender_of(d) == sender} == set(papers), sender
    for d in full:
        paper = papers[d["experiment"]]
        assert verdicts.column_of(d)[1] == "linux" and not d.get("quick"), d["command"]
        # the same schedule of looks and cap (each run records the looks it made: a prefix)
        mine, theirs = d["sequential"]["looks"], paper["sequential"]["looks"]
        n = min(len(mine), len(theirs))
        assert n >= 1 and mine[:n] == theirs[:n], d["experiment"]
        assert d["sequential"]["max_seeds"] == paper["sequential"]["max_seeds"], d["experiment"]
        # every record is one of the study's claims, and one of its readings unless the run
        # predates the study's file (probe-marker's "high load" was one reading a packet size
        # before its full run split it into four); readings declared after the run are missing,
        # and the page says so (below)
        claims = {(v["claim"], v["section"], v["reading"]) for v in d["verdicts"]}
        ours = {(v["claim"], v["section"], v["reading"]) for v in paper["verdicts"]}
        missing = ours - claims
        assert {c[:2] for c in claims} <= {c[:2] for c in ours}, d["experiment"]
        if d["fingerprint"]["core"] == paper["fingerprint"]["core"]:
            assert claims <= ours, d["experiment"]
        if missing:
            assert verdicts.docs.NOT_RUN_NOTE in verdicts.survival_table([paper, d], "", full_length=True)
    page = ROOT / "docs" / "experiments" / "todays-tcp.md"
    against = verdicts.docs.generated_against(ROOT / "README.md")
    val = verdicts.kernel_validations(ROOT)
    text = verdicts.block(page, verdicts.FULL_BEGIN, verdicts.FULL_END)
    assert text == verdicts.survival_table([*papers.values(), *full], against, val, full_length=True)


def test_sender_changes_compare_each_linux_sender_with_the_papers_tcp():
    """A claim decided both ways under the paper's TCP and a linux-flavour sender is listed as a
    flip; one inconclusive on either side is counted as decided under one only; the ns2
    flavour's files take no part (its flips are the quick table's)."""
    R, D, U = verdicts.REPRODUCES, verdicts.DOES_NOT, verdicts.INCONCLUSIVE

    def doc(sender: str | None, flavour: str | None, a: str, b: str, c: str) -> dict:
        recs = [
            {"claim": name, "section": "s", "reading": "r", "verdict": v}
            for name, v in (("A", a), ("B", b), ("C", c))
        ]
        extra = {"sender": sender} if sender else {}
        return {"experiment": "x", "verdicts": recs, **extra, **({"tcp_flavour": flavour} if flavour else {})}

    lines = verdicts.sender_changes(
        [doc(None, None, R, R, R), doc("bbr", "linux", R, D, U), doc("cubic", "ns2", D, D, D)]
    )
    text = "\n".join(lines)
    assert "bbr, linux flavour: 1 the same, 1 decided both ways and differently (below), 1 decided" in text
    assert "cubic" not in text
    assert "| `x` | “B” | bbr, linux flavour | reproduces | does not reproduce |" in text
    assert verdicts.sender_changes([doc("bbr", "linux", R, R, R)])[2].endswith(": no study has both.")


def test_timing_changes_compare_each_linux_sender_with_its_exact_timing_runs():
    """The linux flavour's columns (testbed timing) against the same sender's runs with exact
    timing: a claim decided both ways is listed as a flip, one inconclusive on either side is
    counted as decided under one only; ns2-flavour files and a file of another timing in the
    exact set take no part; without exact files there is no section."""
    R, D, U = verdicts.REPRODUCES, verdicts.DOES_NOT, verdicts.INCONCLUSIVE

    def doc(sender: str, flavour: str, timing: str, a: str, b: str, c: str) -> dict:
        recs = [
            {"claim": name, "section": "s", "reading": "r", "verdict": v}
            for name, v in (("A", a), ("B", b), ("C", c))
        ]
        return {
            "experiment": "x",
            "verdicts": recs,
            "sender": sender,
            "tcp_flavour": flavour,
            "timing": timing,
        }

    ours = [doc("cubic", "linux", "testbed", R, D, U), doc("cubic", "ns2", "exact", D, D, D)]
    exact = [doc("cubic", "linux", "exact", R, R, R), doc("cubic", "ns2", "exact", R, R, R)]
    text = "\n".join(verdicts.docs.timing_changes(ours, exact))
    assert "(testbed), the same seeds: cubic, linux flavour: 1 the same, 1 decided both ways" in text
    assert "| `x` | “B” | cubic, linux flavour | reproduces | does not reproduce |" in text
    assert "ns2 flavour" not in text
    assert verdicts.docs.timing_changes(ours, []) == []
    assert verdicts.docs.timing_changes(ours, [doc("cubic", "linux", "testbed", R, R, R)]) == []
