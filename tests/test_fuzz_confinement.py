"""Fuzzing what a scenario may read and write (issue 56): generated scenarios whose trace, CDF
and capture paths are drawn from path tricks (absolute, ``..``, symbolic links out of the
folder, ``/proc/self/environ``, a home directory's ``.ssh/authorized_keys``, qoslab's own
output names, two captures into one file), checked and run from a directory standing in for
a user's home. Each is sorted into an outcome class; the classes that must stay at 0:

- ``echoed``: an error message (or anything the run printed) holds a byte of a file's content,
  recognised by marker strings planted in every file a scenario could name, and in the
  environment (so ``/proc/self/environ`` carries one);
- ``outside``: a file outside the run's own folder was created, changed or removed;
- ``other``: an exception other than ``ScenarioError`` (a traceback for the user).

``QOSLAB_FUZZ_EXAMPLES`` sets the number of scenarios (default 300 in the suite; the campaign
reported in docs/robustness.md ran 10,000)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qoslab
from conftest import two_nodes
from qoslab.runs.rundir import FRESH_ROOT

EXAMPLES = int(os.environ.get("QOSLAB_FUZZ_EXAMPLES", "300"))
#: Planted in every file a scenario could name, and in the environment.
MARKERS = ("QSECRET_HOME", "QSECRET_INNER", "QSECRET_ENV", "QSECRET_SSH", "424242")
os.environ["QOSLAB_FUZZ_TOKEN"] = "QSECRET_ENV"

HEAD = 'name = "fz"\nduration = "50ms"\n' + two_nodes()

READ_PATHS = [
    "/etc/passwd",
    "/proc/self/environ",
    "/proc/self/cmdline",
    "../secret.txt",
    "../.ssh/authorized_keys",
    "./../secret.txt",
    "sub/../../secret.txt",
    "link.txt",
    "sub/link.txt",
    "inner.txt",
    "ok.cdf",
    "ok.csv",
    "numbers.txt",
    "sub",
    "missing.txt",
    "",
    "websearch",
    "//etc//passwd",
    "SECRET_ABS",  # replaced by the secret's absolute path
]
WRITE_PATHS = [
    ".ssh/authorized_keys",
    ".ssh/authorized_keys.pcap",
    "../x.pcap",
    "/tmp/qoslab-fuzz-abs.pcap",
    "a.pcap",
    "a.pcap",
    "sub/a.pcap",
    "./a.pcap",
    "a.ab.pcap",
    "summary.json",
    "flows.parquet",
    "scenario.toml",
    ".qoslab-run",
    "out.link.pcap",
    "linkdir/x.pcap",
    "a.pcap/x.pcap",
    "",
    "x",
]


def _home(root: Path) -> Path:
    """A stand-in home directory: secrets outside the scenario's folder, a scenario folder
    with valid inputs, files with markers, and symbolic links that lead out."""
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 QSECRET_SSH user@host\n")
    (home / "secret.txt").write_text("QSECRET_HOME 0.5\n0,QSECRET_HOME\n1 2 3 QSECRET_HOME\n")
    s = home / "scen"
    (s / "sub").mkdir(parents=True)
    (s / "inner.txt").write_text("QSECRET_INNER x\nQSECRET_INNER,1\n")
    (s / "numbers.txt").write_text("424242 0.5\n424241 1\n")  # sizes must increase: an error
    (s / "ok.cdf").write_text("100 0.5\n1000 1\n")
    (s / "ok.csv").write_text("0.0,100\n0.01,200\n")
    (s / "link.txt").symlink_to(home / "secret.txt")
    (s / "sub" / "link.txt").symlink_to(home / ".ssh" / "authorized_keys")
    return home


def _snapshot(home: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``home`` but the runs' own folders: (size, mtime)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(home):
        if Path(dirpath) == home and FRESH_ROOT in dirnames:
            dirnames.remove(FRESH_ROOT)
        for f in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            p = Path(dirpath) / f
            st_ = p.lstat()
            out[str(p.relative_to(home))] = (st_.st_size, st_.st_mtime_ns)
    return out


#: Paths a scenario may use (three draws in four, so that many scenarios get as far as a run).
VALID_TRACES = ["ok.csv", "./ok.csv", "sub/../ok.csv"]
VALID_CDFS = ["ok.cdf", "websearch", "datamining"]
VALID_CAPTURES = ["a.pcap", "sub/b.pcap", ".ssh/authorized_keys.pcap", "c.pcap", "d.pcap"]


@st.composite
def scenarios(draw: st.DrawFn) -> str:
    body = [HEAD]
    trace = st.one_of(*[st.sampled_from(VALID_TRACES)] * 3, st.sampled_from(READ_PATHS))
    read = st.one_of(*[st.sampled_from(VALID_CDFS)] * 3, st.sampled_from(READ_PATHS))
    for _ in range(draw(st.integers(0, 2))):
        body.append(f'[[flow]]\nsrc = "a"\ndst = "b"\ntype = "trace"\ntrace = "{draw(trace)}"\n')
    for _ in range(draw(st.integers(0, 2))):
        body.append(
            f'[[arrivals]]\nname = "w{len(body)}"\nsrc = "a"\ndst = "b"\narrival_rate = 50.0\n'
            f'size = {{ dist = "empirical", cdf = "{draw(read)}" }}\n'
        )
    if draw(st.booleans()):
        body.append(
            '[[flow]]\nsrc = "a"\ndst = "b"\ntype = "cbr"\nrate = "1Mbps"\n'
            f'packet_size = {{ dist = "empirical", cdf = "{draw(read)}" }}\n'
        )
    if len(body) == 1:
        body.append('[[flow]]\nsrc = "a"\ndst = "b"\n')
    for _ in range(draw(st.integers(0, 3))):
        file = draw(st.one_of(*[st.sampled_from(VALID_CAPTURES)] * 2, st.sampled_from(WRITE_PATHS)))
        direction = draw(st.sampled_from(["ab", "ba", "both"]))
        body.append(f'[[capture]]\nlink = "ab"\ndirection = "{direction}"\nfile = "{file}"\n')
    return "\n".join(body)


def _echoed(text: str) -> bool:
    return any(m in text for m in MARKERS)


def classify(text: str, home: Path, *, run: bool) -> str:
    """Checks (and with ``run`` runs, from ``home``) the scenario ``text`` written into the
    scenario folder; returns its outcome class."""
    scen = home / "scen" / "fz.toml"
    text = text.replace("SECRET_ABS", str(home / "secret.txt"))
    scen.write_text(text)
    before = _snapshot(home)
    cwd = os.getcwd()
    os.chdir(home)
    try:
        sc = qoslab.load_scenario(scen)
        if run:
            qoslab.run(sc)
        outcome = "ran" if run else "valid"
    except qoslab.ScenarioError as e:
        outcome = "echoed" if _echoed(str(e)) else "refused"
    except Exception as e:  # noqa: BLE001 - classified, reported by the assertion
        outcome = f"other: {type(e).__name__}: {e}"
    finally:
        os.chdir(cwd)
    after = _snapshot(home)
    after.pop("scen/fz.toml", None)
    before.pop("scen/fz.toml", None)
    if after != before or Path("/tmp/qoslab-fuzz-abs.pcap").exists():
        outcome = "outside"
    return outcome


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _home(tmp_path_factory.mktemp("fuzz-confinement"))


COUNTS: Counter[str] = Counter()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios(), st.booleans())
def test_generated_scenarios_echo_nothing_and_write_only_into_their_folder(
    home: Path, text: str, run: bool
) -> None:
    outcome = classify(text, home, run=run)
    COUNTS[outcome.split(":")[0]] += 1
    assert outcome in ("valid", "ran", "refused"), f"{outcome}\n--- scenario:\n{text}"


def test_fuzz_counts_reported(home: Path) -> None:
    """Prints the outcome classes of the campaign above (run after it: pytest keeps file order)."""
    if COUNTS:
        print("\noutcome classes:", dict(sorted(COUNTS.items())))
    assert COUNTS.get("echoed", 0) == 0 and COUNTS.get("outside", 0) == 0


def test_the_classifier_sees_an_echo_and_a_write_outside(home: Path) -> None:
    # The classes above would pass vacuously if the classifier could not see either outcome.
    assert _echoed("line 1: got `QSECRET_HOME 0.5`")
    target = home / ".ssh" / "authorized_keys"
    before = _snapshot(home)
    original = target.read_text()
    try:
        target.write_text("pcap bytes")
        assert _snapshot(home) != before
    finally:
        target.write_text(original)
