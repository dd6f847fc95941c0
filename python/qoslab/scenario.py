"""Scenarios: loading TOML files, building them from Python tables, and ``--set`` overrides.

The schema and every check live in the Rust core (one schema, validated in one place): this
module only carries the TOML text (or a table, turned into TOML text) to it.
"""

from __future__ import annotations

import copy
import hashlib
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab import _core
from qoslab.errors import scenario_error, undecodable
from qoslab.gc_pause import paused

if TYPE_CHECKING:
    import threading
    from collections.abc import Sequence

#: The keys of each flow and link that a run reads (:attr:`Scenario.outline`).
OUTLINE_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("flows", ("name", "src", "dst", "kind", "dscp", "packet_size_bytes")),
    ("links", ("name", "bandwidth_bps", "delay_ns", "jitter_ns")),
)


def _resolve_limit() -> tuple[int, str]:
    """The memory a scenario's resolved form may take (bytes, what sets it): the run's memory
    budget (``QOSLAB_MAX_MEMORY``, else 80 % of the available memory), at most what the
    process may still allocate (``ulimit -v``, the cgroup's limit); 0 for none."""
    from qoslab.budget import Budget, BudgetError

    try:
        limit, what = Budget.from_env().memory_limit()
    except BudgetError:  # a malformed QOSLAB_MAX_MEMORY is reported where a run reads it
        return 0, ""
    return (int(min(limit, 2**63)), what) if limit > 0 else (0, "")


class Scenario:
    """A scenario: TOML text plus the name of where it came from (for error messages).

    Build one with :func:`load_scenario`, :meth:`Scenario.from_table` (a nested dict with the
    same keys as the file) or :meth:`Scenario.from_toml`. Validation happens at construction,
    so an invalid scenario raises :class:`qoslab.ScenarioError` naming the file and key.
    """

    def __init__(
        self, text: str, source: str = "<scenario>", *, allow_paths: Sequence[str | Path] = ()
    ) -> None:
        if not isinstance(text, str):
            got = type(text).__name__
            raise scenario_error(str(source), f"expected the scenario's TOML text (str), got {got}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:  # a lone surrogate (from undecodable bytes): not text
            where = f"U+{ord(text[e.start]):04X} at offset {e.start}"
            raise scenario_error(str(source), f"not Unicode text: {where}") from None
        self.text = text
        self.source = source
        #: Folders besides the scenario's own from which it may read files (traces, CDFs):
        #: ``--allow-path``. Without them a file outside the scenario's folder is refused.
        self.allow_paths: tuple[str, ...] = tuple(str(p) for p in allow_paths)
        #: The typed scenario the core resolved (parsed once; runs reuse it).
        self.core = _core.resolve(text, source, list(self.allow_paths), *_resolve_limit())
        self._outline: dict[str, Any] | None = None
        self._sha256: str | None = None
        #: A thread computing ``_sha256`` (qoslab.runs.simulate's run of a large scenario).
        self._hashing: threading.Thread | None = None

    @cached_property
    def resolved(self) -> dict[str, Any]:
        """The resolved scenario (every key with its default, units in ns, bps and bytes, groups
        expanded), built on first use: 3.35 million objects at 10,000 flows, which a run does
        not need (it reads :attr:`outline`)."""
        return paused(self.core.table)

    @property
    def outline(self) -> dict[str, Any]:
        """:attr:`resolved` with only the keys of each flow and link that a run reads
        (:data:`OUTLINE_FIELDS`), everything else as it is there; :attr:`resolved` itself once
        that exists. At 10,000 flows 250,000 objects instead of 3.35 million."""
        if "resolved" in self.__dict__:  # built already (cached_property)
            return self.resolved
        if self._outline is None:
            self._outline = paused(lambda: self.core.outline(OUTLINE_FIELDS))
        return self._outline

    def __repr__(self) -> str:
        r = self.outline
        n = {k: len(r[k]) for k in ("nodes", "links", "flows", "conditioners")}
        parts = [f"{v} {k}" for k, v in n.items() if v or k != "conditioners"]
        return (
            f"<Scenario {self.name!r} from {self.source}: {', '.join(parts)}, "
            f"{r['duration_ns'] / 1e9:g} s, sha256 {self.sha256()[:12]}>"
        )

    def __getstate__(self) -> dict[str, Any]:
        # The core's typed form does not pickle: a copy in another process parses it again.
        return {"text": self.text, "source": self.source, "allow_paths": self.allow_paths}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["text"], state["source"], allow_paths=state.get("allow_paths", ()))  # type: ignore[misc]

    @classmethod
    def from_toml(
        cls, text: str, source: str = "<string>", *, allow_paths: Sequence[str | Path] = ()
    ) -> Scenario:
        return cls(text, source, allow_paths=allow_paths)

    @classmethod
    def from_table(
        cls, table: dict[str, Any], source: str = "<python>", *, allow_paths: Sequence[str | Path] = ()
    ) -> Scenario:
        return cls(_core.table_to_toml(table), source, allow_paths=allow_paths)

    @property
    def name(self) -> str:
        return str(self.outline["name"])

    @property
    def default_seed(self) -> int:
        return int(self.outline["seed"])

    @property
    def timing(self) -> str:
        """The timing noise its link directions run with (``[timing] jitter``, a link's own
        ``jitter``): ``"exact"`` (none), the preset ``[timing]`` names (``"testbed"``), the
        one bound every link direction has (``"50us"``), or ``"per link"`` where they differ."""
        r = self.outline
        t = r.get("timing") or {}
        bounds = {int(lk.get("jitter_ns", 0)) for lk in r["links"]}
        if bounds == {int(t.get("jitter_ns", 0))} and t.get("preset"):
            return str(t["preset"])
        if len(bounds) > 1:
            return "per link"
        ns = bounds.pop() if bounds else 0
        return "exact" if ns == 0 else f"{ns / 1000:g}us"

    def table(self) -> dict[str, Any]:
        """The scenario as written (a nested dict), for programmatic changes."""
        import tomllib  # here, not at the top: a run of a file needs no TOML parsing in Python

        return tomllib.loads(self.text)

    def sha256(self) -> str:
        """Hash of the canonical resolved form: equal for equivalent scenario files."""
        if self._sha256 is None and self._hashing is not None:
            self._hashing.join()  # being computed on another thread
            self._hashing = None
        if self._sha256 is None:
            self._sha256 = self._compute_sha256()
        return self._sha256

    def _compute_sha256(self) -> str:
        """:meth:`sha256` computed afresh."""
        return hashlib.sha256(self.core.canonical_toml().encode()).hexdigest()

    def with_overrides(self, assignments: list[str], *, via: str = "override") -> Scenario:
        """Returns a copy with ``KEY=VALUE`` assignments applied (see :func:`set_key`).

        An invalid assignment raises a :class:`qoslab.ScenarioError` that names the assignment
        (``via`` is the word used for it: the CLI passes ``"--set"``) and the key, never a line of
        the TOML generated from the changed table."""
        if isinstance(assignments, str):  # iterated, it was read one character at a time
            why = "expected a list of KEY=VALUE strings, got one string: wrap it in a list"
            raise scenario_error(f"{via} {assignments!r}", why)
        if not assignments:
            return self
        table = self.table()
        for a in assignments:
            if "=" not in a:
                raise scenario_error(f"{via} {a!r}", "expected KEY=VALUE", key=a)
            key, value = a.split("=", 1)
            set_key(table, key.strip(), parse_value(value.strip()), via=via)
        label = f"{self.source} (with {via} {', '.join(assignments)})"
        try:
            return Scenario.from_table(table, label, allow_paths=self.allow_paths)
        except _core.ScenarioError as e:
            # The core located the error in TOML generated from the table: its line and column
            # point into no file the user has. The key and message are what they need, the key
            # written as the user wrote it (``link.bottleneck``, not ``link[1]``).
            key, msg = _as_typed(e.key or "", table, assignments), e.message or str(e)
            if msg.startswith("missing field `type`") and re.search(r"\.queue_(ab|ba)$", key):
                msg += f"; `{key}` replaces the link's queue whole: give its type, or set `{key[:-3]}.KEY`"
            raise scenario_error(label, msg, key=key) from None

    def with_tcp_variant(self, variant: str) -> Scenario:
        """Returns a copy in which every TCP sender runs ``variant`` (``"cubic"``, ``"bbr"``,
        ``"sack"``, …): the ``[tcp]`` default and every ``variant`` a flow's or an arrival
        process's own ``tcp`` table names. Nothing else changes (window, segment size, ECN,
        delayed ACKs stay as the scenario gives them); the core rejects a variant the scenario
        cannot run (DCTCP without a marking queue) with one line. A scenario without a TCP
        sender is returned as it is (the core refuses a ``[tcp]`` that no sender reads)."""
        if not self.has_tcp_senders():
            return self
        table = self.table()
        table.setdefault("tcp", {})["variant"] = variant
        for key in ("flow", "arrivals"):
            for entry in table.get(key, []):
                own = entry.get("tcp")
                if isinstance(own, dict) and "variant" in own:
                    own["variant"] = variant
        label = f"{self.source} (every TCP sender {variant})"
        try:
            return Scenario.from_table(table, label, allow_paths=self.allow_paths)
        except _core.ScenarioError as e:
            raise scenario_error(label, e.message or str(e), key=e.key or "tcp.variant") from None

    def has_tcp_senders(self) -> bool:
        """Whether any flow or arrival process is TCP (what ``[tcp]`` gives defaults to)."""
        r = self.outline
        return bool(r.get("arrivals")) or any(f["kind"] == "tcp" for f in r["flows"])

    def link_direction_index(self, link: str, direction: str = "ab") -> int:
        """The index of ``link``'s direction ``"ab"`` or ``"ba"`` (a ScenarioError otherwise)."""
        names = [lk["name"] for lk in self.outline["links"]]
        if link not in names or direction not in ("ab", "ba"):
            what = f"unknown link {link!r}" if link not in names else f"direction {direction!r}"
            msg = f'{what}: expected a link of the scenario and "ab" or "ba"'
            raise _core.ScenarioError(f"{self.source}: {msg}", self.source, None, "capture", msg)
        return names.index(link) * 2 + (0 if direction == "ab" else 1)


#: The largest scenario file read, bytes: a file of 64 MiB is about 500,000 flows written one
#: table each, and parsing takes several times a file's size in memory.
MAX_SCENARIO_BYTES = 64 << 20


#: How long a named pipe may stay silent before its scenario is refused, seconds.
PIPE_WAIT_S = 30.0


def _read_named_pipe(p: Path, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the named pipe ``p`` until its writers close it, or ``None``
    if nothing came in :data:`PIPE_WAIT_S` (no writer, or one that never writes). Opened
    without blocking, so that a pipe no process writes to cannot hold the run for ever."""
    import os
    import select
    import time

    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    try:
        chunks: list[bytes] = []
        got = 0
        deadline = time.monotonic() + PIPE_WAIT_S
        while got < limit:
            left = deadline - time.monotonic()
            if not chunks and left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], max(min(left, 0.1), 0.0) if not chunks else 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(fd, min(1 << 20, limit - got))
            except BlockingIOError:
                continue
            if not chunk:
                if chunks:
                    break  # its writers closed it
                time.sleep(0.05)  # no writer yet: one may still open it
                continue
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def load_scenario(path: str | Path, *, allow_paths: Sequence[str | Path] = ()) -> Scenario:
    """Reads and validates a scenario file. The files it names for reading (traces, CDFs)
    must lie in its folder, or in one of the folders ``allow_paths``."""
    p = Path(path)

    def refuse(why: str, shown: str = str(p)) -> _core.ScenarioError:
        return _core.ScenarioError(f"{shown}: {why}", shown, None, "", why)

    if (shown := undecodable(p)) is not None:
        raise refuse("the file's path is not UTF-8 text: rename the file or its folder", shown)
    if "\0" in str(p):
        raise refuse("the path holds a NUL byte, which no file name can", repr(str(p)))
    try:
        # A file larger than the limit would take several times its size in memory to parse;
        # the read stops there (a device such as /dev/zero never ends). A pipe the shell hands
        # over (`qoslab run <(generate)`, /dev/fd/N) is read as a file, to its writer's end; a
        # named pipe in a folder nothing is written to is refused after PIPE_WAIT_S rather than
        # waited on for ever.
        if p.is_dir():
            raise refuse("a folder, not a scenario file")
        if p.is_fifo() and not str(p).startswith(("/dev/fd/", "/proc/self/fd/", "/dev/stdin")):
            data = _read_named_pipe(p, MAX_SCENARIO_BYTES + 1)
            if data is None:
                raise refuse(
                    f"a named pipe nothing was written to in {PIPE_WAIT_S:.0f} s: start its writer "
                    "first, or give a file"
                )
        else:
            with p.open("rb") as f:
                data = f.read(MAX_SCENARIO_BYTES + 1)
    except OSError as e:
        raise refuse(f"cannot read the scenario file ({e.strerror})") from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise refuse(
            f"larger than {MAX_SCENARIO_BYTES >> 20} MiB, the most a scenario file may hold "
            "(write repeated links and flows as groups: `count`)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        msg = f"not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start} (line {line})"
        raise _core.ScenarioError(f"{p}:{line}: {msg}", str(p), line, "", msg) from None
    return Scenario(text, str(p), allow_paths=allow_paths)


def parse_value(text: str) -> Any:
    """A ``--set`` value: a TOML literal (``0.02``, ``true``, ``[1, 2]``) or else a string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


_SEG = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def _as_typed(key: str, table: dict[str, Any], assignments: list[str]) -> str:
    """``key`` (``link[1].queue_ab``) with its leading array index written as the element's name
    (``link.bottleneck.queue_ab``) when an assignment addressed that element by its name."""
    m = re.match(r"([A-Za-z_]+)\[(\d+)\](.*)$", key)
    if not m:
        return key
    arr, i, rest = m.group(1), int(m.group(2)), m.group(3)
    items = table.get(arr)
    if not isinstance(items, list) or i >= len(items) or not isinstance(items[i], dict):
        return key
    name = items[i].get("name")
    typed = f"{arr}.{name}"
    if isinstance(name, str) and any(a.split("=", 1)[0].strip().startswith(typed + ".") for a in assignments):
        return typed + rest
    return key


def set_key(table: dict[str, Any], key: str, value: Any, *, via: str = "override") -> None:
    """Sets ``key`` in a scenario table. Keys are dotted paths; an array of tables is indexed
    by position (``flow[0].count``) or by the ``name`` of its element (``link.bottleneck.delay``).
    Errors name the assignment as ``via`` (the CLI: ``--set``) and the key.
    """
    parts = key.split(".")
    cur: Any = table
    i = 0
    while i < len(parts):
        m = _SEG.match(parts[i])
        if not m:
            raise scenario_error(via, f"bad key {key!r}: expected a dotted key path", key=key)
        name, idx = m.group(1), [int(x) for x in re.findall(r"\d+", m.group(2))]
        if not isinstance(cur, dict):
            where = ".".join(parts[:i])
            raise scenario_error(via, f"`{where}` is a value ({cur!r:.40}), not a table with keys", key=key)
        last = i == len(parts) - 1 and not idx
        if last:
            cur[name] = value
            return
        if name not in cur:
            if isinstance(cur, dict) and not idx:
                cur[name] = {}
            else:
                raise scenario_error(via, f"no key {name!r} in the scenario", key=key)
        nxt = cur[name]
        if isinstance(nxt, list) and not idx and i + 1 < len(parts):
            # Select an element of an array of tables by its name.
            wanted = parts[i + 1]
            found = [e for e in nxt if _is_named(e, wanted)]
            if i + 2 == len(parts) and (found or _group_member(nxt, wanted) is not None):
                # `link.bottleneck=…` names a whole element: nothing to set inside it.
                pos = next((k for k, e in enumerate(nxt) if _is_named(e, wanted)), None)
                instead = f", or replace it by position (`{name}[{pos}]=…`)" if pos is not None else ""
                raise scenario_error(
                    via,
                    f"`{name}.{wanted}` names a whole [[{name}]] table, not one of its keys: "
                    f"set a key of it (`{name}.{wanted}.KEY=…`){instead}",
                    key=key,
                )
            if not found:
                member = _group_member(nxt, wanted)
                if member is None:
                    raise scenario_error(via, f"no {name} named {wanted!r}", key=key)
                _set_member_key(name, *member, parts[i + 2 :], value, key=key, via=via)
                return
            nxt = found[0]
            i += 1
        for j in idx:
            if not isinstance(nxt, list) or j >= len(nxt):
                raise scenario_error(via, f"index {j} out of range", key=key)
            if i == len(parts) - 1 and j == idx[-1]:
                nxt[j] = value
                return
            nxt = nxt[j]
        cur = nxt
        i += 1


#: The keys a group takes once per member (a list of `count` values), by array of tables; a
#: conditioner's meter takes any of its keys per member.
_PER_MEMBER = {"link": ("bandwidth", "delay", "jitter"), "flow": ("start",)}


def _is_named(entry: Any, wanted: str) -> bool:
    """Whether an array of tables' ``entry`` is the element named ``wanted``."""
    return isinstance(entry, dict) and entry.get("name") == wanted


def _group_member(entries: list[Any], wanted: str) -> tuple[dict[str, Any], int] | None:
    """The group whose members' names include ``wanted`` (``access2`` of ``access{i}`` with
    count ≥ 3), with the member's index; None when no group has it."""
    for e in entries:
        template, count = (e.get("name"), e.get("count", 1)) if isinstance(e, dict) else (None, 1)
        if not isinstance(template, str) or "{i}" not in template or not isinstance(count, int):
            continue
        head, tail = template.split("{i}", 1)
        pattern = re.escape(head) + r"(0|[1-9][0-9]*)" + re.escape(tail).replace(r"\{i\}", r"\1")
        m = re.fullmatch(pattern, wanted)
        if m and int(m.group(1)) < count:
            return e, int(m.group(1))
    return None


def _set_member_key(
    section: str, group: dict[str, Any], k: int, rest: list[str], value: Any, *, key: str, via: str
) -> None:
    """Sets member ``k``'s own value of a per-member key in ``group`` (the shared value becomes
    a list of one value per member); any other key is refused with what to write instead."""
    count, template = group.get("count", 1), group["name"]
    sub = ".".join(rest)
    per_member = sub in _PER_MEMBER.get(section, ()) or (
        section == "conditioner" and len(rest) == 2 and rest[0] == "meter"
    )
    if not per_member:
        takes = ", ".join(f"`{p}`" for p in _PER_MEMBER.get(section, ())) or "a meter's keys"
        raise scenario_error(
            via,
            f"`{template.replace('{i}', str(k))}` is member {k} of the group `{template}` (count {count}), "
            f"whose `{sub}` is one value for every member (per member: {takes}); set it for the whole "
            f"group with `{section}.{template}.{sub}=…`, or give the member a [[{section}]] table of its own",
            key=key,
        )
    holder = group["meter"] if rest[0] == "meter" else group
    leaf = rest[-1]
    current = holder.get(leaf)
    values = list(current) if isinstance(current, list) else [current] * count
    if len(values) != count:
        raise scenario_error(
            via, f"`{section}.{template}.{sub}` has {len(values)} values for {count} members", key=key
        )
    values[k] = value
    holder[leaf] = values


def to_ns2_resolved(resolved: dict[str, Any], seed: int) -> dict[str, Any]:
    """The resolved scenario in the SI-unit form :mod:`qoslab.ns2` exports, with random start
    times drawn for ``seed`` (from the same distribution as qoslab's, not the same values)."""
    import random

    rng = random.Random(f"qoslab-ns2-start-{seed}")
    r = copy.deepcopy(resolved)

    def queue(q: dict[str, Any]) -> dict[str, Any]:
        out = dict(q)
        out.setdefault("limit_pkts", None)
        out.setdefault("limit_bytes", None)
        if out.get("queues"):  # a multi queue's physical queues (empty for the other kinds)
            out["queues"] = [
                {
                    "dscp": None if sq.get("default") else list(sq["dscp"]),
                    "weight": float(sq["weight"]),
                    "quantum_bytes": sq["quantum_bytes"],
                    "queue": queue(sq["queue"]),
                }
                for sq in out["queues"]
            ]
        return out

    links = [
        {
            "name": lk["name"],
            "a": lk["a"],
            "b": lk["b"],
            "bandwidth_bps": float(lk["bandwidth_bps"]),
            "delay_s": lk["delay_ns"] / 1e9,
            "jitter_s": lk["jitter_ns"] / 1e9,
            "queue_ab": queue(lk["queue_ab"]),
            "queue_ba": queue(lk["queue_ba"]),
        }
        for lk in r["links"]
    ]
    flows = []
    for f in r["flows"]:
        lo, hi = f["start_ns"], f["start_max_ns"]
        start = lo if hi <= lo else lo + rng.random() * (hi - lo)
        tcp = None
        if f.get("tcp"):
            t = f["tcp"]
            tcp = {
                # the core records a flow's flavour only when it is not ns2
                "flavour": t.get("flavour", "ns2"),
                "variant": t["variant"],
                "ack_size_bytes": t["ack_size_bytes"],
                "window_pkts": t["window_pkts"],
                "initial_window_pkts": t["initial_window_pkts"],
                "min_rto_s": t["min_rto_ns"] / 1e9,
                "max_rto_s": t["max_rto_ns"] / 1e9,
                "initial_rto_s": t["initial_rto_ns"] / 1e9,
                "tick_s": t["tick_ns"] / 1e9,
                "delayed_ack": t["delayed_ack"],
                "delack_interval_s": t["delack_interval_ns"] / 1e9,
                "max_burst": t["max_burst"],
                "syn": t["syn"],
                "ecn": t["ecn"],
                "pacing": t["pacing"],
                "sack": t["sack"],
            }
        flows.append(
            {
                "name": f["name"],
                "src": f["src"],
                "dst": f["dst"],
                "kind": f["kind"],
                "start_s": start / 1e9,
                "stop_s": f["stop_ns"] / 1e9 if f.get("stop_ns") is not None else None,
                "packet_size_bytes": f["packet_size_bytes"],
                "dscp": f.get("dscp", 0),
                "tcp": tcp,
                "rate_bps": float(f["rate_bps"]) if f.get("rate_bps") is not None else None,
                "on_s": f["on_ns"] / 1e9 if f.get("on_ns") is not None else None,
                "off_s": f["off_ns"] / 1e9 if f.get("off_ns") is not None else None,
                # finite transfers, per-packet size distributions, Pareto shape, trace
                "size_bytes": f.get("size_bytes"),
                "packet_size_dist": f.get("packet_size_dist"),
                "shape": f.get("shape"),
                "trace": f.get("trace"),
            }
        )
    conditioners = []
    for c in r.get("conditioners", []):
        mt = c["meter"]
        value: Any = c["classifier_value"] or None
        if c["classifier"] == "dscp":
            value = int(c["classifier_value"]) if str(c["classifier_value"]).isdigit() else value
        conditioners.append(
            {
                "name": c["name"],
                "link": c["link"],
                "direction": c["direction"],
                "classifier": {"kind": c["classifier"], "value": value},
                "scope": c["scope"],
                "meter": {
                    "type": mt["type"],
                    "mode": mt["mode"],
                    "cir_bps": float(mt["cir_bps"]),
                    "cbs_bytes": mt.get("cbs_bytes"),
                    "ebs_bytes": mt.get("ebs_bytes"),
                    "pir_bps": float(mt["pir_bps"]) if mt.get("pir_bps") is not None else None,
                    "pbs_bytes": mt.get("pbs_bytes"),
                    "win_len_s": mt["win_len_ns"] / 1e9 if mt.get("win_len_ns") is not None else None,
                },
                "actions": {k: c[k] for k in ("green", "yellow", "red")},
            }
        )
    m = r["measurement"]
    return {
        "name": r["name"],
        "duration_s": r["duration_ns"] / 1e9,
        "nodes": r["nodes"],
        "links": links,
        "flows": flows,
        "arrivals": [dict(a) for a in r.get("arrivals", [])],
        "conditioners": conditioners,
        "measurement": {"start_s": m["start_ns"] / 1e9, "end_s": m["end_ns"] / 1e9},
    }
