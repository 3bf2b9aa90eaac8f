"""``sstat -a -n -P`` output (the fields of :data:`cockpit.slurm.commands.SSTAT_FIELDS`) -> steps.

sstat prints sizes with a unit suffix (``293768K``, ``1.50G``; ``0`` bare), or in bytes with
``--noconvert``; a step that has not reported yet has empty fields. A job that ended between
the squeue and the sstat is a line on stderr (``couldn't get steps for job N``), not a row.
Lines that are not rows (a warning sstat printed to stdout) are skipped and counted.
"""

from __future__ import annotations

import re

from cockpit.model import StepUsage
from cockpit.slurm.commands import SSTAT_FIELDS
from cockpit.slurm.hostlist import expand
from cockpit.slurm.parse import parse_duration_s

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)\s*$", re.I)
_KIB = {"": 1 / 1024, "K": 1, "M": 1024, "G": 1024**2, "T": 1024**3, "P": 1024**4}
_STEP_ID_RE = re.compile(r"^(\d+(?:_\d+)?)\.([A-Za-z0-9_+-]+)$")


def size_kib(text: str | None) -> int | None:
    """An sstat size -> KiB, rounded up: ``293768K`` -> 293768, ``1.5M`` -> 1536, a bare number
    is bytes (``--noconvert``; sstat's zero is ``0``); empty or junk -> None."""
    if not text:
        return None
    m = _SIZE_RE.match(text)
    if m is None:
        return None
    value = float(m.group(1)) * _KIB[m.group(2).upper()]
    return int(-(-value // 1))


def parse_sstat(text: str) -> tuple[list[StepUsage], int]:
    """(steps, lines skipped) of sstat's parsable output in :data:`SSTAT_FIELDS` order."""
    steps: list[StepUsage] = []
    skipped = 0
    width = len(SSTAT_FIELDS)
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = line.rstrip("|").split("|") if line.count("|") >= width else line.split("|")
        if len(cells) != width:
            skipped += 1
            continue
        jobstep, max_rss, node, ave_rss, ntasks, nodelist, ave_cpu = (c.strip() for c in cells)
        m = _STEP_ID_RE.match(jobstep)
        if m is None:
            skipped += 1
            continue
        try:
            n_nodes = len(expand(nodelist)) if nodelist else None
        except ValueError:
            n_nodes = None
        steps.append(
            StepUsage(
                job_id=m.group(1),
                step=m.group(2),
                max_rss_kib=size_kib(max_rss),
                max_rss_node=node,
                ave_rss_kib=size_kib(ave_rss),
                ntasks=int(ntasks) if ntasks.isdigit() else None,
                nodes=n_nodes or None,
                ave_cpu_s=parse_duration_s(ave_cpu) if ave_cpu else None,
            )
        )
    return steps, skipped
