"""Findings alike in all but their subject, folded into one printed line.

A folder of 5,000 ``slurm-N.out`` whose jobs all died of the same missing package printed 5,000
lines that differ only in the job id and file name. ``cockpit diagnose`` prints the first few
in full, then one line per kind of failure with the subjects it covers (``295 jobs
[1006-1300]``); ``--json`` keeps every finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cockpit.i18n import N_, _
from cockpit.model import Finding, Subject
from cockpit.slurm.hostlist import compress

MIN_GROUP = 3  # fewer alike findings are printed one by one, as before
IDS_SHOWN = 400  # characters of a group's compressed id list

_NUMBER = re.compile(r"\d+")
# a number that names the failure itself, kept: HTTP 404 and HTTP 503 (a wrong URL, a server
# down) are two failures, as exit 2 and exit 3 are; folded, 300 jobs read as all HTTP 503
_CODE = re.compile(
    r"\b(?:exit(?:\s+code|\s+status)?|status|code|errno|error|signal|http|rc)\s*[=:]?\s*-?\d+\b",
    re.IGNORECASE,
)


def _numbers_aside(title: str) -> str:
    """``title`` with its numbers as ``#`` (job ids, dates, sizes, line numbers) but for the
    codes a failure is named by."""
    out, at = [], 0
    for m in _CODE.finditer(title):
        out += [_NUMBER.sub("#", title[at : m.start()]), m.group()]
        at = m.end()
    return "".join([*out, _NUMBER.sub("#", title[at:])])


_KIND_COUNT = {
    "job": N_("{n} jobs"),
    "node": N_("{n} nodes"),
    "training_job": N_("{n} training jobs"),
    "file": N_("{n} files"),
}
_OTHER = N_("{n} subjects")


def alike_key(f: Finding) -> tuple:
    """What two findings must share to be folded: severity, cause, kind of subject, and the
    headline with its numbers (job ids, line numbers, file names' digits) set aside, not the
    codes that name the failure (exit 2, HTTP 404)."""
    return (f.severity, f.root_cause, f.subject.kind, _numbers_aside(f.title))


def group_alike(findings: Sequence[Finding]) -> list[tuple[Finding, tuple[Subject, ...]]]:
    """``findings`` as (the first of its kind, every subject of that kind), in the order each
    kind first appears; a kind with fewer than ``MIN_GROUP`` findings stays one per finding."""
    kinds: dict[tuple, list[Finding]] = {}
    for f in findings:
        kinds.setdefault(alike_key(f), []).append(f)
    out: list[tuple[Finding, tuple[Subject, ...]]] = []
    for members in kinds.values():
        if len(members) >= MIN_GROUP:
            out.append((members[0], tuple(m.subject for m in members)))
        else:
            out.extend((m, (m.subject,)) for m in members)
    order = {id(f): i for i, f in enumerate(findings)}
    out.sort(key=lambda g: order[id(g[0])])
    return out


def group_label(subjects: Sequence[Subject]) -> str:
    """``295 jobs [1006-1300]``: how many and which, compressed as Slurm writes host lists
    (numbered ids as ranges), cut at ``IDS_SHOWN`` characters."""
    kind = subjects[0].kind
    count = _(_KIND_COUNT.get(kind, _OTHER)).format(n=len(subjects))
    ids = compress(s.id for s in subjects) if kind in ("job", "node") else ""
    if not ids:
        first, last = subjects[0].id, subjects[-1].id
        ids = f"{first} … {last}"
    if len(ids) > IDS_SHOWN:
        ids = ids[: IDS_SHOWN - 1] + "…"
    return f"{count} {ids}"
