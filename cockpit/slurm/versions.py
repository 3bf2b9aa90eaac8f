"""What differs between the Slurm releases the cockpit reads (22.05 to 26.05), in one place.

The release that matters for parsing is the one of the commands the cockpit runs (squeue,
sacct, scontrol on the login node or in the lab root): their output formats changed, and
sacct's exit code printing is client-side. :class:`~cockpit.slurm.source.SlurmSource` asks it
once per connection (``scontrol --version``) and passes it to the parsers and argv builders.
An unknown release ("" or unparsable) reads as the oldest behaviour the cockpit supports.
"""

from __future__ import annotations

import re

_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def release(version: str) -> tuple[int, int]:
    """``26.05.5`` / ``slurm 24.11.5`` / ``slurm-wlm 22.05.8`` -> (26, 5); unknown -> (0, 0)."""
    m = _VERSION_RE.search(version or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def parse_version_output(text: str) -> str:
    """``scontrol --version`` (``slurm 24.11.5``, ``slurm-wlm 22.05.8``) -> ``24.11.5``; ""."""
    m = re.search(r"\b(\d+\.\d+\.\d+)\b", text or "")
    return m.group(1) if m else ""


def has_only_job_state(version: str) -> bool:
    """23.11+: ``squeue --only-job-state`` (ids and states from a cache, no job table lock)."""
    return release(version) >= (23, 11)


def has_sluid(version: str) -> bool:
    """26.05+: a SLUID per job, squeue ``%s``."""
    return release(version) >= (26, 5)


def sacct_folds_exit(version: str) -> bool:
    """Before 25.11 sacct printed an exit status of 128 or more less 128 (``exit 137`` as
    ``9:0``; src/sacct/print.c, removed in 25.11 so that sacct and ``scontrol show job``
    agree). False for an unknown release: a code above 128 then proves a new sacct, and a
    lower one is taken as printed."""
    r = release(version)
    return (0, 0) < r < (25, 11)
