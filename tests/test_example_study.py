"""A study outside the package (examples/study_red_vs_droptail/), from its declared claims to its
page: loaded by $QOSLAB_PLUGINS, reproduced quick and sequentially, each declared claim judged
against its declared magnitude in verdicts.json, its figure drawn, and its page written with the
verdict table where the user chooses; a claim declared twice is one clear error line.

Everything runs in subprocesses: a plugin registers its experiment and claims for the life of
the process, and the other tests' registry must stay the shipped studies'."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from test_tutorial import normalise, tutorial_steps

EXAMPLES = ROOT / "examples"
GUIDE = ROOT / "docs" / "write-your-own-study.md"
#: a block the guide shows as one of the example's files: the comment, then the fenced block
FILE_BLOCK = re.compile(r"<!-- file: (\S+) -->\n```python\n(.*?)```\n", re.S)
PKG = Path(__file__).resolve().parents[1] / "python"
QOSLAB = Path(sys.executable).parent / "qoslab"


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PKG), str(EXAMPLES), extra.get("PYTHONPATH")) if p)
    return env


PLUGIN = _env(QOSLAB_PLUGINS="study_red_vs_droptail")


def _run(*args: str, env: dict[str, str] = PLUGIN) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=240)


def _declared() -> list[dict[str, str]]:
    """The example's declared claim parts, as its claims module declares them."""
    code = (
        "import json; from study_red_vs_droptail.claims import CLAIMS; "
        "print(json.dumps([{'claim': c.words, 'section': c.place_of(p), 'magnitude': p.paper} "
        "for c in CLAIMS.claims for p in c.parts]))"
    )
    p = _run(sys.executable, "-c", code)
    assert p.returncode == 0, p.stderr
    return list(json.loads(p.stdout))


def test_the_example_study_goes_from_its_declared_claims_to_its_page(tmp_path: Path) -> None:
    out, store = tmp_path / "out", tmp_path / "store.db"
    p = _run(
        str(QOSLAB), "reproduce", "red-vs-droptail", "--quick", "--sequential", "--max-seeds", "8",
        "--out", str(out), "--store", str(store), "--quiet",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    run = out / "red-vs-droptail"
    doc = json.loads((run / "verdicts.json").read_text())
    assert doc["quick"] is True and isinstance(doc.get("sequential"), dict)
    records = doc["verdicts"]
    declared = _declared()
    assert len(declared) == 2
    for part in declared:
        mine = [r for r in records if (r["claim"], r["section"]) == (part["claim"], part["section"])]
        # one record per reading (2 and 20 flows in a quick run), each decided against the
        # declared magnitude by the rules, not left with the sign test's verdict
        assert sorted(r["reading"] for r in mine) == ["2 flows", "20 flows"]
        for r in mine:
            assert r["decided_from"] == "run" and r["magnitude"].startswith(part["magnitude"])
            assert r["verdict"] in ("reproduces", "weaker than claimed", "does not reproduce", "inconclusive")
    queue = [r for r in records if r["claim"] == declared[0]["claim"]]
    assert all(r["verdict"] == "reproduces" and r["ci95"][1] < -0.25 for r in queue)
    assert (run / "queue.png").stat().st_size > 10_000

    page = tmp_path / "site" / "red-vs-droptail.md"
    p = _run(sys.executable, "-m", "qoslab.reproduction.study_page", str(run), str(page))
    assert p.returncode == 0, p.stderr
    text = page.read_text()
    assert "| claim [part] | reading | ours: effect [interval], seeds | tested against | verdict |" in text
    for part in declared:
        assert f"“{part['claim']}”" in text
    assert text.count("| **reproduces** |") == sum(r["verdict"] == "reproduces" for r in records)
    for img in ("verdicts.png", "queue.png"):
        assert f"](img/red-vs-droptail/{img})" in text
        assert (page.parent / "img" / "red-vs-droptail" / img).stat().st_size > 5_000

    # qoslab's own docs/ are refused, in one line
    p = _run(sys.executable, "-m", "qoslab.reproduction.study_page", str(run), str(ROOT / "docs" / "x.md"))
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "qoslab's own docs/" in p.stderr
    assert not (ROOT / "docs" / "x.md").exists()


def test_a_claim_declared_twice_is_one_clear_error(tmp_path: Path) -> None:
    twice = tmp_path / "twice.py"
    twice.write_text(
        "from study_red_vs_droptail.claims import SHORTER_QUEUE\n"
        "from qoslab.verdicts.magnitudes import register_claims\n"
        "from qoslab.verdicts.claims import declare\n"
        "register_claims(declare('red-vs-droptail-again', SHORTER_QUEUE))\n"
    )
    p = _run(str(QOSLAB), "reproduce", "--list", env=_env(QOSLAB_PLUGINS=f"study_red_vs_droptail,{twice}"))
    assert p.returncode == 1 and "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "cannot load experiment plugin" in p.stderr and "twice.py" in p.stderr
    assert "is declared twice (in red-vs-droptail and in red-vs-droptail-again)" in p.stderr


def test_the_guide_shows_the_example_as_it_is_and_prints_what_it_runs(tmp_path: Path) -> None:
    """docs/write-your-own-study.md: each file it shows is the example's file byte for byte, and
    each command runs and prints what the page shows (tests/test_tutorial.py's convention)."""
    text = GUIDE.read_text()
    shown = dict(FILE_BLOCK.findall(text))
    assert set(shown) == {
        f"examples/study_red_vs_droptail/{n}" for n in ("__init__.py", "claims.py", "study.py")
    }
    for path, code in shown.items():
        assert code == (ROOT / path).read_text(), f"{GUIDE}: the block of {path} is not the file as it is"
    steps = tutorial_steps(FILE_BLOCK.sub("", text))
    assert [s.kind for s in steps] == ["shell"] * 3 and all(s.shown for s in steps)
    (tmp_path / "examples").symlink_to(EXAMPLES)
    env = _env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for step in steps:
        p = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", step.code],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert p.returncode == 0, f"{GUIDE}:{step.line}: `{step.code}` exited {p.returncode}\n{p.stderr}"
        assert normalise(p.stdout) == normalise(str(step.shown)), (
            f"{GUIDE}:{step.line}: the page shows other output than `{step.code}` prints now\n{p.stdout}"
        )


def test_an_undecided_record_of_the_plugin_rests_on_the_sweeps_its_claim_declares() -> None:
    """``--sequential`` grows, while a record is undecided, the sweeps its claim declares: a
    plugin's claims are found there as a shipped study's (the example decides every record at
    its first look, so the test above never asks)."""
    code = (
        # the machinery first: a plugin may be loaded after it (load_plugin from Python)
        "from qoslab.reproduction import sequential_run as s\n"
        "import study_red_vs_droptail\n"
        "from qoslab.verdicts.magnitudes import DECLARED\n"
        "from study_red_vs_droptail.claims import SAME_UTILISATION as c\n"
        "r = {'claim': c.words, 'section': c.place, 'reading': '2 flows', 'part': ''}\n"
        "print(s.rests_on('red-vs-droptail', DECLARED['red-vs-droptail'], r))\n"
    )
    p = _run(sys.executable, "-c", code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "('queues',)"


def test_a_plugin_studys_fingerprint_covers_its_own_package_wherever_it_lies(tmp_path: Path) -> None:
    # the example copied to two places: the same fingerprint; one byte changed in the copy's
    # claims module: another (the verdict files it wrote are then stale, as a built-in study's)
    code = (
        "from qoslab.reproduction import get; "
        "from qoslab.verdicts.currency import experiment_fingerprint, plugin_files; "
        "plan = get('red-vs-droptail').plan; "
        "base, files = plugin_files(plan); "
        "print(experiment_fingerprint('red-vs-droptail', plan), base.name, len(files))"
    )
    prints = []
    for where in ("a", "b", "b"):
        root = tmp_path / where
        if not root.exists():
            shutil.copytree(EXAMPLES / "study_red_vs_droptail", root / "study_red_vs_droptail")
        elif where == "b":
            claims = root / "study_red_vs_droptail" / "claims.py"
            claims.write_text(claims.read_text() + "\n# a change of the user's own code\n")
        env = _env(QOSLAB_PLUGINS="study_red_vs_droptail")
        env["PYTHONPATH"] = os.pathsep.join((str(PKG), str(root)))
        p = _run(sys.executable, "-c", code, env=env)
        assert p.returncode == 0, p.stderr
        prints.append(p.stdout.split())
    (a, base_a, n), (b, base_b, _), (changed, _, _) = prints
    assert (base_a, base_b, int(n)) == ("a", "b", 3)  # the three modules, named from their own root
    assert a == b != changed
    # a study of qoslab's own has no plugin files
    code = "from qoslab.reproduction import get; from qoslab.verdicts.currency import plugin_files; "
    p = _run(sys.executable, "-c", code + "print(plugin_files(get('ard').plan))")
    assert p.stdout.strip() == "None", p.stderr
    # a plugin study's fingerprint without its plan: one clear error, not a fingerprint without
    # the plugin's own code
    code = "from qoslab.verdicts.currency import experiment_fingerprint as f\n"
    code += "try:\n    f('red-vs-droptail')\nexcept ValueError as e:\n    print(e)\n"
    p = _run(sys.executable, "-c", code, env=env)
    assert p.returncode == 0 and "no study of qoslab's own" in p.stdout and "its plan" in p.stdout, p.stderr
