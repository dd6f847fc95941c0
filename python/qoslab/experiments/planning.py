"""Planning an experiment's runs: its sweeps in the reproduction's flavour and senders, the
runs they hold, and all experiments' runs computed in one sweep (``reproduce all``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from qoslab.experiments.base import Experiment, Options, Sweep
from qoslab.runs.executors import Executor
from qoslab.runs.sweep import RunSpec, SweepReport, plan, run_sweep, seed_list
from qoslab.store import Store

if TYPE_CHECKING:
    from qoslab.scenario import Scenario


def flavoured(scenario: Scenario, flavour: str) -> Scenario:
    """``scenario`` in ``flavour`` (only "ns2" exists besides each mechanism's own)."""
    from qoslab.ns2.flavour import ns2_flavoured

    assert flavour == "ns2", flavour
    return ns2_flavoured(scenario)[0]


def as_run(scenario: Scenario, options: Options) -> Scenario:
    """``scenario`` as the reproduction runs it: in its flavour, with its TCP senders."""
    if options.flavour is not None:
        scenario = flavoured(scenario, options.flavour)
    if options.sender is not None:
        scenario = scenario.with_tcp_variant(options.sender)
    if options.tcp_flavour is not None:
        scenario = scenario.with_overrides([f'tcp.flavour="{options.tcp_flavour}"'], via="--tcp-flavour")
    return scenario


def validate(exp: Experiment, sweeps: Sequence[Sweep]) -> None:
    """Refuses repeated sweep names and references to sweeps ``exp`` does not plan."""
    names = [s.name for s in sweeps]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"experiment {exp.name}: repeated sweep names {sorted(dup)}")
    for ref in exp.references:
        if ref.sweep not in names:
            raise ValueError(f"experiment {exp.name}: reference {ref.id} names unknown sweep {ref.sweep!r}")


def check_sender(exp: Experiment, sender: str | None) -> None:
    """Refuses a ``--sender`` the core lacks, or any for an experiment that compares senders."""
    if sender is None:
        return
    from qoslab.schema import tcp_variants

    if exp.own_senders:
        raise ValueError(f"experiment {exp.name} compares TCP senders itself: it takes no --sender")
    choices = tcp_variants()
    if sender not in choices:
        raise ValueError(f"unknown sender {sender!r}: expected one of {', '.join(choices)}")


#: While a :func:`remembered` scope is open: the last plans made, by experiment and options (an
#: experiment's ``plan`` and :func:`planned`), with the experiment (so that its ``id`` stays its
#: own), oldest first; and each plan's sweeps' points and seeds (what :func:`_reseeded` reads).
_MEMO: dict[tuple[Any, ...], tuple[Experiment, Any]] | None = None
#: How many plans of each kind ("plan", "planned", "seeds") :data:`_MEMO` keeps: a look plans at its
#: own seeds and at the next look's (the runs it computes ahead), and reseeds stopped sweeps from
#: the plans of earlier looks, of which it reads only the sweeps' points and seeds. Scenarios
#: are kept only for the plans in use: each scenario's resolved table (read for a report) takes
#: about 350 kB, and an experiment plans 500 points at each of nine looks.
_KEEP = {"plan": 3, "planned": 4, "seeds": 64}


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """A scope in which a plan once made is remembered: a sequential reproduction plans the
    same experiment at each look several times (its runs, the runs to compute ahead, the runs it
    keeps), each plan building every point's scenario afresh. Plans are pure functions of the
    experiment and its options, so a remembered plan is the plan; outside the scope (a notebook
    whose experiment reads a file edited since) every call plans afresh."""
    global _MEMO
    outer = _MEMO
    if outer is None:
        _MEMO = {}
    try:
        yield
    finally:
        _MEMO = outer


def _remember(key: tuple[Any, ...], exp: Experiment, make: Any) -> Any:
    if _MEMO is None:
        return make()
    hit = _MEMO.pop(key, None)
    if hit is None or hit[0] is not exp:
        hit = (exp, make())
    _MEMO[key] = hit  # the newest last
    same = [k for k in _MEMO if k[0] == key[0]]
    for k in same[: max(0, len(same) - _KEEP[key[0]])]:
        del _MEMO[k]
    return hit[1]


def _opts_key(opts: Options) -> tuple[Any, ...]:
    return (opts.quick, tuple(opts.seeds), opts.flavour, opts.sender, opts.tcp_flavour, opts.warmup)


def _plan_of(exp: Experiment, opts: Options) -> list[Sweep]:
    """``exp.plan(opts)`` (remembered within :func:`remembered`)."""
    return list(_remember(("plan", id(exp), *_opts_key(opts)), exp, lambda: exp.plan(opts)))


def planned(
    exp: Experiment,
    *,
    seeds: int | None = None,
    quick: bool = False,
    flavour: str | None = None,
    sender: str | None = None,
    tcp_flavour: str | None = None,
    sweep_seeds: Mapping[str, int] | None = None,
) -> tuple[Options, list[Sweep], list[RunSpec]]:
    """The options, sweeps and runs :func:`qoslab.experiments.runner.reproduce` plans for
    ``exp`` (the same arguments). ``sweep_seeds``: sweeps planned at another number of seeds
    than the experiment's (each such sweep as the experiment plans it at that many: a sweep that
    takes twice the experiment's seeds, or its first seed only, keeps its rule); the sequential
    mode stops a sweep that way once every claim resting on it is decided. Remembered within
    :func:`remembered`."""
    key = (
        "planned",
        id(exp),
        seeds,
        quick,
        flavour,
        sender,
        tcp_flavour,
        tuple(sorted((sweep_seeds or {}).items())),
    )
    opts, sweeps, specs = _remember(
        key,
        exp,
        lambda: _planned(
            exp,
            seeds=seeds,
            quick=quick,
            flavour=flavour,
            sender=sender,
            tcp_flavour=tcp_flavour,
            sweep_seeds=sweep_seeds,
        ),
    )
    return opts, list(sweeps), list(specs)


def _planned(
    exp: Experiment,
    *,
    seeds: int | None = None,
    quick: bool = False,
    flavour: str | None = None,
    sender: str | None = None,
    tcp_flavour: str | None = None,
    sweep_seeds: Mapping[str, int] | None = None,
) -> tuple[Options, list[Sweep], list[RunSpec]]:
    """:func:`planned`, made afresh."""
    if flavour not in (None, "ns2"):
        raise ValueError(f"unknown flavour {flavour!r} (expected ns2, or none for the experiment's own)")
    check_sender(exp, sender)
    n = seeds if seeds is not None else (exp.quick_seeds if quick else exp.seeds)
    if tcp_flavour not in (None, "ns2", "linux"):
        raise ValueError(f"unknown TCP flavour {tcp_flavour!r} (expected ns2 or linux)")
    tcp_flavour = None if tcp_flavour == "ns2" else tcp_flavour
    opts = Options(quick=quick, seeds=seed_list(n), flavour=flavour, sender=sender, tcp_flavour=tcp_flavour)
    sweeps = _plan_of(exp, opts)
    validate(exp, sweeps)
    if sweep_seeds:
        sweeps = _reseeded(exp, opts, sweeps, sweep_seeds)
    if flavour is not None or sender is not None or tcp_flavour is not None:
        sweeps = [replace(sw, points=[(p, as_run(sc, opts)) for p, sc in sw.points]) for sw in sweeps]
    specs: list[RunSpec] = []
    for sw in sweeps:
        specs += plan(sw.points, sw.seeds, f"{exp.name}/{sw.name}", sw.metrics)
    return opts, list(sweeps), specs


def _reseeded(
    exp: Experiment, opts: Options, sweeps: list[Sweep], sweep_seeds: Mapping[str, int]
) -> list[Sweep]:
    """``sweeps`` with each sweep named in ``sweep_seeds`` taken from the experiment's plan at
    that many seeds (its points must be the same: only its seeds may differ)."""
    names = {s.name for s in sweeps}
    unknown = sorted(set(sweep_seeds) - names)
    if unknown:
        raise ValueError(f"experiment {exp.name}: no sweep {', '.join(map(repr, unknown))} to reseed")
    at: dict[int, dict[str, tuple[list[Any], list[int]]]] = {}
    out: list[Sweep] = []
    for sw in sweeps:
        n = sweep_seeds.get(sw.name)
        if n is None or n == len(opts.seeds):
            out.append(sw)
            continue
        if n not in at:
            at[n] = _points_and_seeds(exp, replace(opts, seeds=seed_list(n)))
        points, seeds = at[n][sw.name]
        if points != [p for p, _ in sw.points]:
            raise ValueError(f"experiment {exp.name}: sweep {sw.name!r} has other points at {n} seeds")
        out.append(replace(sw, seeds=list(seeds)))
    return out


def _points_and_seeds(exp: Experiment, opts: Options) -> dict[str, tuple[list[Any], list[int]]]:
    """Each sweep of ``exp.plan(opts)``: its points' parameters and its seeds (remembered)."""
    key = ("seeds", id(exp), *_opts_key(opts))
    return dict(
        _remember(
            key, exp, lambda: {s.name: ([p for p, _ in s.points], list(s.seeds)) for s in _plan_of(exp, opts)}
        )
    )


def compute_all(
    exps: Sequence[Experiment],
    *,
    store: Store,
    executor: Executor,
    progress: bool = True,
    **kw: Any,
) -> SweepReport:
    """Computes the planned runs of every experiment of ``exps`` in one sweep, so that the
    longest runs of all of them go first (:mod:`qoslab.runs.schedule`) and no experiment's last runs
    leave a core idle while the next experiment waits; each ``reproduce`` after it then
    finds its runs stored (the runs the analyses make themselves are not among them). ``kw``:
    ``seeds``, ``quick``, ``flavour``, ``sender`` as for ``reproduce``."""
    specs: list[RunSpec] = []
    for exp in exps:
        specs += planned(exp, **kw)[2]
    return run_sweep(specs, store, executor, progress=progress, label="all experiments")
