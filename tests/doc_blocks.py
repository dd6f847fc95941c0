"""The machinery of tests/test_doc_blocks.py: the fenced blocks a reader copies from the docs
(:func:`reader_blocks`), their commands (:func:`commands`), running them as a page shows them
(:func:`run_page`) and checking without running those that cannot run in the suite
(:func:`command_problems`).

Conventions, so that a page shows what a test compares:

- a block a reader copies: a ```python, ```sh, ```bash, ```shell or ```console block, or an
  unlabelled one whose first line is a command (``$ ``, ``qoslab``, ``.venv/bin/``, ``sudo``,
  ``make``);
- in ```console blocks (and ``$ `` blocks), lines starting with ``$ `` are commands and the lines
  after one are what it prints (tests/test_tutorial.py's convention); in ```sh blocks every line
  that is not a comment is a command (``\\`` continues it), and comment lines right after one
  that start with ``# error:`` are what it prints on stderr when it fails (status 1; the
  indented ``#   `` lines continue it);
- ``...`` or ``…`` in what a page shows stands for any text (an elided part);
- what varies between machines is replaced on both sides before comparing (:data:`VARIABLE`,
  and test_tutorial's :func:`normalise`: versions, wall times, table borders, line breaks);
- a command runs in a scratch checkout (:func:`scratch`: links to scenarios/, examples/, tests/,
  tools/ and the venv as .venv/), its ``/tmp/`` made the scratch's ``tmp/`` (and shown back as
  ``/tmp/``); a command ending in ``&`` runs in the background until the page's blocks end.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from conftest import ROOT
from test_tutorial import normalise, tutorial_steps

#: The venv the suite runs in (a scratch checkout's .venv/).
VENV = Path(sys.executable).parent.parent
SHELL_LANGS = ("sh", "bash", "shell", "console")
_FENCE = re.compile(r"^```(\w*)\s*$")
_COMMAND_START = re.compile(r"^(\$ |(sudo )?(\.venv/bin/|qoslab |make ))")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the checkout: docs/x.md, README.md
    line: int  # 1-based line of the block's first line (after the fence)
    lang: str  # python, sh, console, ... ("" unlabelled)
    text: str

    @property
    def first(self) -> str:
        """The block's first line: its key in the tables of tests/test_doc_blocks.py."""
        return self.text.split("\n", 1)[0]

    @property
    def shell(self) -> bool:
        return self.lang != "python"


def fenced_blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, labelled or not."""
    out: list[Block] = []
    lang: str | None = None
    body: list[str] = []
    start = 0
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        m = _FENCE.match(line)
        if lang is None and m:
            lang, body, start = m.group(1), [], n + 1
        elif lang is not None and m and not m.group(1):
            out.append(Block(str(page.relative_to(ROOT)), start, lang, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


def pages() -> list[Path]:
    return [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]


def copied(b: Block) -> bool:
    """Whether a reader copies the block (the first convention above)."""
    if b.lang == "python" or b.lang in SHELL_LANGS:
        return True
    return b.lang == "" and bool(_COMMAND_START.match(b.first))


def reader_blocks() -> list[Block]:
    """Every block a reader copies, page by page in order."""
    return [b for p in pages() for b in fenced_blocks(p) if copied(b)]


# -- commands --------------------------------------------------------------------------------


@dataclass
class Command:
    code: str
    line: int
    error: str | None = None  # the ``# error:`` lines shown after it (stderr, status 1)
    shown: str | None = None  # what a console block shows it printing (stdout)
    background: bool = False


def commands(b: Block) -> list[Command]:
    """The commands of a shell block, in order, with what the page shows them printing."""
    if b.lang == "console" or b.first.startswith("$ "):
        steps = tutorial_steps(f"```console\n{b.text}\n```\n")
        return [Command(s.code, b.line + s.line - 2, shown=s.shown) for s in steps]
    out: list[Command] = []
    lines = b.text.split("\n")
    i = 0
    while i < len(lines):
        line, n = lines[i], b.line + i
        i += 1
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            if out and line.startswith("# error:") and lines[i - 2].strip() and out[-1].error is None:
                shown = [line[1:].strip()]
                while i < len(lines) and lines[i].startswith("#   "):
                    shown.append(lines[i][1:].strip())
                    i += 1
                out[-1].error = " ".join(shown)
            continue
        code = [line]
        while code[-1].rstrip().endswith("\\") and i < len(lines):
            code.append(lines[i])
            i += 1
        text = "\n".join(code)
        bare = re.sub(r"\s+#[^'\"]*$", "", text).rstrip()
        background = bare.endswith("&") and not bare.endswith("&&")
        out.append(Command(bare[:-1].rstrip() if background else text, n, background=background))
    return out


# -- comparing what a command printed with what the page shows -------------------------------

#: What varies with the machine, in what qoslab prints: the memory a budget error quotes (80 %
#: of the memory available), the simulated time a run reached by its --max-time and the pace
#: extrapolated from it, a job script's scheduler address, the worker's route to it and the
#: folder of the certificates made for the sweep.
VARIABLE = [
    (
        re.compile(r"above [\d.]+ [kMGT]B \(80 % of the available memory\)"),
        "above MEM (80 % of the available memory)",
    ),
    (re.compile(r"stopped at t = [\d.]+ s"), "stopped at t = T s"),
    (re.compile(r"about \d+ min of wall-clock time"), "about N min of wall-clock time"),
    (re.compile(r"tls://[\d.]+:\d+"), "tls://SCHEDULER"),
    (re.compile(r"' \d+\.\d+\.\d+\.\d+\)"), "' SCHEDULER)"),
    (re.compile(r"tls-[0-9a-f]{12}\b"), "tls-HASH"),
]
#: Where the page's examples put the checkout (a job script's paths).
PAGE_CHECKOUT = "/home/me/qoslab"
_WILDCARD = re.compile(r"\\\.\\\.\\\.|…")


def comparable(text: str, places: dict[str, str]) -> str:
    """``text`` with ``places`` replaced (longest first), :data:`VARIABLE` and normalise()."""
    for old in sorted(places, key=len, reverse=True):
        text = text.replace(old, places[old])
    for pattern, repl in VARIABLE:
        text = pattern.sub(repl, text)
    return " ".join(normalise(text))


def matches(printed: str, shown: str, places: dict[str, str]) -> bool:
    """Whether ``printed`` is what the page shows (``...``/``…`` standing for any text)."""
    pattern = _WILDCARD.sub(".*?", re.escape(comparable(shown, places)))
    return re.fullmatch(pattern, comparable(printed, places), re.S) is not None


# -- running a page's blocks -----------------------------------------------------------------


def scratch(work: Path) -> dict[str, str]:
    """A scratch checkout in ``work`` and the environment its commands run in."""
    for name in ("scenarios", "examples", "tests", "tools"):
        (work / name).symlink_to(ROOT / name)
    (work / ".venv").symlink_to(VENV)
    (work / "tmp").mkdir()
    env = dict(os.environ)
    env.pop("QOSLAB_STORE", None)  # the pages' store is results/store
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "200"
    return env


def places(work: Path) -> dict[str, str]:
    """The scratch's paths as the pages show them."""
    return {
        f"{work}/tmp/": "/tmp/",
        str(work): PAGE_CHECKOUT,
        str(VENV): f"{PAGE_CHECKOUT}/.venv",
        str(VENV.resolve()): f"{PAGE_CHECKOUT}/.venv",
    }


@dataclass
class PageRun:
    """The state of one page's blocks run in order: the scratch, the background commands, the
    page's Python namespace, and the last foreground command's output."""

    work: Path
    env: dict[str, str]
    background: list[subprocess.Popen[bytes]] = field(default_factory=list)
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__doc_block__"})
    last: tuple[Command, str] | None = None

    def shell(self, b: Block) -> None:
        where = f"{b.page}:{b.line}"
        for c in commands(b):
            code = c.code.replace("/tmp/", f"{self.work}/tmp/")
            for word in ("cd ", "export "):
                assert not code.startswith(word), f"{where}: `{word}` does not carry to the next command here"
            if c.background:
                self.background.append(
                    subprocess.Popen(
                        ["bash", "-c", code],
                        cwd=self.work,
                        env=self.env,
                        start_new_session=True,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )  # fmt: skip
                )
                continue
            p = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", code],
                cwd=self.work, env=self.env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            head = f"{b.page}:{c.line}: `{c.code.splitlines()[0]}`"
            want = 0 if c.error is None else 1
            assert p.returncode == want, (
                f"{head} exited {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}"
            )
            at = places(self.work)
            if c.error is not None:
                assert matches(p.stderr, c.error, at), f"{head}: the page shows another error\n{p.stderr}"
            if c.shown is not None:
                assert matches(p.stdout, c.shown, at), f"{head}: the page shows other output\n{p.stdout}"
            self.last = (c, p.stdout)

    def output(self, b: Block) -> None:
        """``b`` shows what the last command printed."""
        assert self.last is not None, f"{b.page}:{b.line}: shown output of no command"
        c, printed = self.last
        assert matches(printed, b.text, places(self.work)), (
            f"{b.page}:{b.line}: the page shows other output than `{c.code.splitlines()[0]}` prints now\n"
            f"--- printed\n{printed}\n--- on the page\n{b.text}"
        )

    def python(self, b: Block) -> None:
        code = compile("\n" * (b.line - 1) + b.text, str(ROOT / b.page), "exec")
        exec(code, self.namespace)

    def stop(self) -> None:
        """Ends the background commands (each started in a session of its own) and theirs."""
        for p in self.background:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for p in self.background:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            try:  # a child that outlived its shell
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# -- checking a command without running it ---------------------------------------------------

#: Programs a block may name whose use the checks leave to their own documentation.
PLAIN = {"cd", "mkdir", "echo", "printf", "export", "source", "openssl", "sinfo", "pip"}
#: Folders of the checkout whose paths a command names as inputs.
TRACKED = ("scenarios/", "tests/", "tools/", "docs/", "examples/", "crates/", "python/")
#: Options whose value is written, not read.
OUTPUTS = {"--out", "-o", "--json", "--csv", "--export", "--store"}
_PLACEHOLDER = re.compile(r"^([A-Z][A-Z_]+|\.\.\.|…)$")


def simple_commands(code: str, env: dict[str, str]) -> Iterator[list[str]]:
    """The words of each simple command of a shell line (split at ``;``, ``&&``, ``|``, ``&``;
    redirections, ``sudo`` and leading assignments dropped, a ``QOSLAB_PLUGINS`` one leaving
    ``--plugins`` first: the experiments it names are the reader's; ``$NAME`` of an assignment
    made earlier in the block expanded)."""
    for name, value in env.items():
        code = code.replace(f"${name}", value)
    lex = shlex.shlex(code.replace("\\\n", " "), posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    words: list[str] = []
    skip = False
    for tok in [*lex, ";"]:
        if tok in (";", "&&", "||", "|", "&"):
            assigned = []
            while words and (words[0] == "sudo" or re.match(r"^\w+=", words[0])):
                assigned.append(words.pop(0).split("=", 1)[0])
            if words:
                yield (["--plugins"] if "QOSLAB_PLUGINS" in assigned else []) + words
            words = []
        elif tok in (">", ">>", "<"):
            skip = True
        elif skip:
            skip = False
        else:
            words.append(tok)


def command_problems(code: str, env: dict[str, str]) -> list[str]:
    """What is wrong in a shell line without running it: a program, option, path, experiment,
    scenario key or value that does not exist. An assignment (``NAME=value``) alone is recorded
    in ``env`` for the lines after it."""
    if m := re.fullmatch(r"(\w+)=(\"[^\"]*\"|\S*)", code.strip()):
        env[m.group(1)] = shlex.split(m.group(2))[0] if m.group(2) else ""
        return []
    problems: list[str] = []
    for words in simple_commands(code, env):
        problems += [f"{' '.join(words)[:60]}: {p}" for p in _problems(words)]
    return problems


def _problems(words: list[str]) -> list[str]:
    plugins = words[0] == "--plugins"  # QOSLAB_PLUGINS names the reader's experiments
    words = words[plugins:]
    prog, args = Path(words[0]).name, words[1:]
    problems = _paths(args)
    if prog == "qoslab":
        return problems + _qoslab(args, plugins)
    if prog == "make":
        return problems + _make(args)
    if prog in ("python", "python3"):
        if args[:1] == ["-m"]:
            mod = args[1]
            ok = mod == "venv" or importlib.util.find_spec(mod) is not None
            return problems + ([] if ok else [f"no module {mod}"])
        return problems + _tool_options(args)
    if prog == "pytest":
        return problems
    if prog == "cargo":
        return problems + _cargo(args)
    if prog == "dask":
        return problems + _dask(args)
    if prog in PLAIN:
        return problems
    return problems + [f"no check knows the program {words[0]!r} (tests/doc_blocks.py)"]


def _paths(args: list[str]) -> list[str]:
    out = []
    for prev, a in zip(["", *args], args, strict=False):
        if prev in OUTPUTS or not a.startswith(TRACKED):
            continue
        if not glob.glob(str(ROOT / a)):
            out.append(f"no file {a}")
    return out


@cache
def _cli() -> Any:
    import typer.main

    import qoslab.cli  # noqa: F401 (the commands register on the app when imported)
    from qoslab.cli.app import app

    return typer.main.get_command(app)


def _qoslab(args: list[str], plugins: bool = False) -> list[str]:
    """The command line parsed as typer parses it (every option and value the command takes),
    then what it names: scenarios (with their --set and --grid values applied), experiments
    (planned as the options ask; not a plugin's), bench workloads."""
    from typer import _click as click

    try:
        ctx = _cli().make_context("qoslab", list(args))
        while hasattr(ctx.command, "resolve_command"):
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
            name, sub, rest = ctx.command.resolve_command(ctx, rest)
            ctx = sub.make_context(name, rest, parent=ctx)
    except click.ClickException as e:
        return [e.format_message()]
    try:
        return _named(ctx.command.name, ctx.params, plugins)
    except (ValueError, LookupError) as e:  # ScenarioError, UnknownExperiment (a KeyError)
        return [str(e)]


def _named(command: str | None, params: dict[str, Any], plugins: bool) -> list[str]:
    import qoslab

    if command == "reproduce" and not params["list_"] and not plugins:
        return _reproduce(params)
    if command == "bench":
        from qoslab.bench import linux
        from qoslab.bench.workloads import WORKLOADS

        known = {w.name for w in WORKLOADS} | {linux.WORKLOAD}
        return [f"no bench workload {w}" for w in params["workload"] if w not in known]
    scenarios = params.get("scenario")
    if not scenarios or command == "plot":
        return []
    sets = list(params.get("set_", ()))
    grid = [g.split("=", 1) for g in params.get("grid", ()) if not _PLACEHOLDER.match(g)]
    for path in [scenarios] if isinstance(scenarios, str) else scenarios:
        for f in [] if _PLACEHOLDER.match(path) else glob.glob(str(ROOT / path)):
            sc = qoslab.load_scenario(f)
            sc.with_overrides(sets)
            for key, values in grid:
                for v in values.split(","):
                    sc.with_overrides([*sets, f"{key}={v}"])
    return []


@cache
def _plan(name: str, quick: bool, seeds: int | None, options: tuple[Any, ...]) -> None:
    from qoslab.reproduction import get
    from qoslab.reproduction.planning import planned

    flavour, sender, tcp_flavour, timing = options
    planned(
        get(name),
        quick=quick,
        seeds=seeds,
        flavour=flavour,
        sender=sender,
        tcp_flavour=tcp_flavour,
        timing=timing,
    )


def _reproduce(p: dict[str, Any]) -> list[str]:
    """What `qoslab reproduce` checks before its first run: the experiments and the mode
    (qoslab.cli.reproduce._mode), and each one's plan under the options."""
    from qoslab.cli.reproduce import _mode

    mode = ("name", "sender", "seeds", "quick", "sequential", "max_seeds", "warmup", "no_futility")
    exps, _ = _mode(*(p[k] for k in mode))
    for e in exps:
        _plan(e.name, p["quick"], p["seeds"] or 1, (p["flavour"], p["sender"], p["tcp_flavour"], p["timing"]))
    return []


def _make(args: list[str]) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    out = []
    for a in args:
        if "=" in a:
            var = a.split("=", 1)[0]
            if f"$({var})" not in text:
                out.append(f"the Makefile reads no variable {var}")
        elif not a.startswith("-") and not re.search(rf"^{re.escape(a)}:", text, re.M):
            out.append(f"the Makefile has no target {a}")
    return out


def _tool_options(args: list[str]) -> list[str]:
    """A script of tools/: each option the line gives is one the script defines."""
    if not args or not args[0].startswith("tools/"):
        return [f"no check knows the script {args[:1]}"]
    src = (ROOT / args[0]).read_text() if (ROOT / args[0]).is_file() else ""
    return [f"{args[0]} has no option {a}" for a in args[1:] if a.startswith("--") and f'"{a}"' not in src]


def _cargo(args: list[str]) -> list[str]:
    opts = dict(zip(args, args[1:], strict=False))
    crate = ROOT / "crates" / opts.get("-p", "")
    out = [] if (crate / "Cargo.toml").is_file() else [f"no crate {opts.get('-p')}"]
    if "--bench" in opts and not (crate / "benches" / f"{opts['--bench']}.rs").is_file():
        out.append(f"no bench {opts['--bench']} in {crate.name}")
    return out


def _dask(args: list[str]) -> list[str]:
    """`dask scheduler|worker`: each option named is one of that command (its files and hosts
    are the cluster's)."""
    from distributed.cli import dask_scheduler, dask_worker

    cmd = {"scheduler": dask_scheduler.main, "worker": dask_worker.main}.get(args[0])
    if cmd is None:
        return [f"no dask command {args[0]}"]
    names = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    return [
        f"dask {args[0]} has no option {a}"
        for a in args[1:]
        if a.startswith("-") and a.split("=")[0] not in names
    ]
