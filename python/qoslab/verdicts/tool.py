"""``python -m qoslab.verdicts readme | check [--allow-stale] | redecide`` (from a source
checkout).

- ``readme``: rewrites the generated blocks of README.md, each experiment page and
  docs/experiments/todays-tcp.md (its two blocks) from ``docs/verdicts/**/*.json``;
- ``check``: lists problems (exit 1) and stale files (exit 3 unless ``--allow-stale``); see
  :mod:`qoslab.verdicts.currency`;
- ``redecide``: re-decides the committed files from their stored effects and intervals under
  the current rules and declared magnitudes (no rerun), then regenerates the docs.

``make verdicts`` reruns every study in full and copies its ``verdicts.json`` here instead.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qoslab import studies
from qoslab.verdicts.audit import records_digest
from qoslab.verdicts.currency import (
    EXACT_SENDERS,
    FULL_SENDERS,
    ROOT,
    check,
    core_fingerprint,
    own_senders,
    read,
    rules_fingerprint,
    sender_files,
    verdict_files,
    write,
)
from qoslab.verdicts.docs import (
    FULL_BEGIN,
    FULL_END,
    LINUX_RESULTS,
    OWN_SENDER_COLUMNS,
    OWN_SENDERS_NOT_RUN,
    SENDERS_BEGIN,
    SENDERS_END,
    Validation,
    by_reading_sender,
    core_of,
    generated_against,
    kernel_validation,
    page_table,
    readme_table,
    replace_block,
    sender_columns,
    survival_table,
)
from qoslab.verdicts.forest import forest
from qoslab.verdicts.rules import ALPHA, finalise, find

REDECIDED = (
    "re-decided from the stored effects and intervals by `python -m qoslab.verdicts redecide` (no rerun)"
)


def kernel_validations(root: Path = ROOT) -> dict[str, Validation]:
    """Per transport flavour with committed results, each kernel module's targets against the
    kernel (:func:`qoslab.verdicts.docs.kernel_validation`): what the today's-TCP tables' column
    headers and summary say. ``FLAVOUR`` is the simulated side with the testbed's timing noise,
    ``FLAVOUR-exact`` the same without it (``--timing exact``)."""
    return {
        fl: kernel_validation(json.loads(path.read_text(encoding="utf-8")))
        for fl in ("ns2", "linux", "ns2-exact", "linux-exact")
        if (path := root / LINUX_RESULTS.format(flavour=fl)).exists()
    }


def update_docs(root: Path = ROOT, against: str | None = None) -> list[Path]:
    """Rewrites the generated blocks (README.md, each experiment's page, todays-tcp.md) from
    ``docs/verdicts/``; ``against``: the core to call current (default: the checkout's).
    Returns the files that changed."""
    against = against or core_fingerprint(root) or "?"
    docs = [read(p) for p in sorted((root / "docs" / "verdicts").glob("*.json"))]
    changed = []
    if replace_block(root / "README.md", readme_table(docs, against)):
        changed.append(root / "README.md")
    for doc in docs:
        page = root / "docs" / "experiments" / f"{doc['experiment']}.md"
        if replace_block(page, page_table(doc, against)):
            changed.append(page)
        img = root / "docs" / "experiments" / "img" / "verdicts" / f"{doc['experiment']}.png"
        before = img.read_bytes() if img.exists() else b""
        if forest(doc, declared(doc["experiment"]), img).read_bytes() != before:
            changed.append(img)
    tcp_page = root / "docs" / "experiments" / "todays-tcp.md"
    senders = sender_files((root / "docs" / "verdicts" / "senders").glob("*.json"))
    val = kernel_validations(root)
    exact = [read(p) for p in sorted((root / "docs" / "verdicts" / EXACT_SENDERS).glob("*.json"))]
    if senders and replace_block(tcp_page, survival_table(senders, against, val, exact=exact)):
        changed.append(tcp_page)
    full = [read(p) for p in sorted((root / "docs" / "verdicts" / FULL_SENDERS).glob("*.json"))]
    # the page covers the studies run under other senders (a study that compares senders itself,
    # buffer-sizing, takes no --sender and has none of these files)
    under_senders = {d["experiment"] for d in [*senders, *full]}
    papers = [d for d in docs if d["experiment"] in under_senders]
    if full and replace_block(
        tcp_page, survival_table(papers + full, against, val, full_length=True), FULL_BEGIN, FULL_END
    ):
        changed.append(tcp_page)
    return changed + own_sender_pages(root, docs, against, val)


def own_sender_files(root: Path = ROOT) -> dict[str, dict[str, Any]]:
    """Per study that compares senders itself, its linux-flavour file (:func:`own_senders`)."""
    files = (read(p) for p in sorted((root / "docs" / "verdicts" / "senders").glob("*.json")))
    return {d["experiment"]: d for d in files if own_senders(d)}


def own_sender_block(
    paper: dict[str, Any], linux: dict[str, Any], against: str, val: dict[str, Validation]
) -> str:
    """The table of claims by sender of a study that compares senders itself: the paper's TCP
    from its committed file (``paper``), the linux flavour's senders from ``linux``."""
    runs = by_reading_sender(paper) | by_reading_sender(linux)
    return "\n".join(sender_columns(runs, against, val, OWN_SENDER_COLUMNS, OWN_SENDERS_NOT_RUN))


def own_sender_pages(
    root: Path, docs: Sequence[dict[str, Any]], against: str, val: dict[str, Validation]
) -> list[Path]:
    """Writes :func:`own_sender_block` into the page of each study that has one and a block
    for it; returns the pages that changed."""
    changed = []
    linux = own_sender_files(root)
    for doc in docs:
        page = root / "docs" / "experiments" / f"{doc['experiment']}.md"
        other = linux.get(doc["experiment"])
        if other is None or SENDERS_BEGIN not in page.read_text(encoding="utf-8"):
            continue
        if replace_block(page, own_sender_block(doc, other, against, val), SENDERS_BEGIN, SENDERS_END):
            changed.append(page)
    return changed


def declared(experiment: str) -> Any:
    from qoslab.verdicts.magnitudes import DECLARED

    if experiment not in DECLARED:
        raise ValueError(
            f"experiment {experiment!r}: no claims declared (qoslab.verdicts.magnitudes.REGISTRY)"
        )
    return DECLARED[experiment]


def _fits(decls: Any, r: dict[str, Any]) -> bool:
    if r.get("borrowed_from"):
        return True
    try:
        find(decls, r["claim"], r["section"])
    except ValueError:
        return False
    return True


def _backfilled(experiment: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records written before their runs evaluated the claims' preconditions, with the
    precondition filled in where the experiment can read it from the record
    (``precondition_of`` of its module, e.g. ARD's marker window)."""
    import importlib

    try:
        mod = importlib.import_module(studies.module(experiment))
    except ImportError:
        return records
    fill = getattr(mod, "precondition_of", None)
    out = []
    for r in records:
        got = fill(r) if fill is not None and r.get("precondition_met") is None else None
        out.append(r if got is None else {**r, "precondition_met": got[0], "precondition": got[1]})
    return out


def redecide_file(path: Path) -> bool:
    """Re-decides one committed file from its stored numbers; True when it changed."""
    doc = read(path)
    rules = rules_fingerprint(doc["experiment"])
    raw = doc.get("fingerprint")
    fp: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if fp.get("rules") == rules and all(v.get("decided_from") for v in doc["verdicts"]):
        if fp.get("records") == records_digest(doc["verdicts"]):
            return False
        # decided under these rules but never sealed: seal it as it is
        head = {k: v for k, v in doc.items() if k not in ("experiment", "verdicts")}
        write(path, doc["experiment"], head, doc["verdicts"])
        return True
    decls = declared(doc["experiment"])
    records = _backfilled(doc["experiment"], doc["verdicts"])
    kept = [r for r in records if _fits(decls, r)]
    gone = [r for r in records if not _fits(decls, r) and not r.get("borrowed_from")]
    seq = doc.get("sequential")
    looks = seq.get("looks") if isinstance(seq, dict) else None
    # a sequential file's intervals are the design's, at level 1 − 0.05/K for K looks
    alpha = ALPHA / len(looks) if looks else ALPHA
    recs = finalise(decls, kept, "stored interval", alpha)
    header = {k: v for k, v in doc.items() if k not in ("experiment", "verdicts")}
    if gone:
        header["dropped_records"] = header.get("dropped_records", []) + [
            f"{r['claim']} ({r['section']}) | {r['reading']}: its claim is declared otherwise now "
            "(rerun the study to judge it)"
            for r in gone
        ]
    header["fingerprint"] = {"core": core_of(doc), "experiment": fp.get("experiment"), "rules": rules}
    header["decided"] = REDECIDED
    write(path, doc["experiment"], header, recs)
    return True


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if (
        not args
        or args[0] not in ("readme", "check", "redecide")
        or not (ROOT / "docs" / "verdicts").is_dir()
    ):
        print(
            "usage (from a source checkout): "
            "python -m qoslab.verdicts readme | check [--allow-stale] | redecide",
            file=sys.stderr,
        )
        return 2
    try:
        if args[0] == "check":
            return _check(allow_stale="--allow-stale" in args[1:])
        if args[0] == "redecide":
            for p in verdict_files(ROOT):
                if redecide_file(p):
                    print(f"re-decided {p.relative_to(ROOT)}")
        changed = update_docs(ROOT)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("\n".join(f"updated {p.relative_to(ROOT)}" for p in changed) or "docs already up to date")
    return 0


def _check(allow_stale: bool) -> int:
    problems, stale = check(ROOT, declared)
    core = core_fingerprint(ROOT)
    readme_core = generated_against(ROOT / "README.md")
    print(f"checkout core fingerprint: {core}; README and pages generated against: {readme_core}")
    if readme_core != core:
        print("  (their 'current' column describes that core: `python -m qoslab.verdicts readme` updates it)")
    for s in stale:
        print(s)
    for p in problems:
        print(f"problem: {p}")
    n = len(verdict_files(ROOT))
    print(f"{n} verdict files: {n - len(stale)} current, {len(stale)} stale, {len(problems)} problems")
    if problems:
        return 1
    return 3 if stale and not allow_stale else 0
