"""Slurm's time notations, printed one way everywhere (findings, remedies, panes, the demo)."""

from __future__ import annotations


def hms(seconds: float | None, unknown: str = "UNLIMITED") -> str:
    """sacct/scontrol ``[D-]HH:MM:SS`` (what ``--time=`` takes); ``unknown`` for None."""
    if seconds is None:
        return unknown
    d, rem = divmod(max(0, int(seconds)), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


def squeue_time(seconds: float | None, unknown: str = "UNLIMITED") -> str:
    """squeue ``%M``/``%l``: ``0:00``, ``1:27``, ``1:00:00``, ``1-02:03:04``; None: ``unknown``."""
    if seconds is None or seconds < 0:
        return unknown
    d, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    if d:
        return f"{d}-{h:02d}:{m:02d}:{s:02d}"
    if h:
        return f"{h}:{m:02d}:{s:02d}"
    return f"{m}:{s:02d}"


def human_size(n: float) -> str:
    """A byte count as people read it: 1.0 GiB, 150.0 MiB, 4.9 KiB, 12 B."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"
