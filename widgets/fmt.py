"""Formatting shared by panes: durations the Slurm way, ages, state colours."""

from __future__ import annotations

from datetime import datetime

from cockpit.units import squeue_time

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
SEVERITY_MARK = {"critical": "CRIT", "warning": "WARN", "info": "INFO"}

_JOB_STATE_STYLE = {
    "PENDING": "yellow",
    "RUNNING": "green",
    "CONFIGURING": "green",
    "COMPLETING": "green",
    "COMPLETED": "dim",
    "CANCELLED": "magenta",
    "SUSPENDED": "yellow",
    "REQUEUED": "yellow",
}
_BAD_JOB_STATES = {"FAILED", "OUT_OF_MEMORY", "TIMEOUT", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED"}

# squeue's compact state codes, for narrow screens and muscle memory
JOB_STATE_SHORT = {
    "PENDING": "PD", "RUNNING": "R", "COMPLETING": "CG", "COMPLETED": "CD", "CONFIGURING": "CF",
    "CANCELLED": "CA", "FAILED": "F", "TIMEOUT": "TO", "NODE_FAIL": "NF", "OUT_OF_MEMORY": "OOM",
    "PREEMPTED": "PR", "SUSPENDED": "S", "BOOT_FAIL": "BF", "DEADLINE": "DL", "REQUEUED": "RQ",
}


def job_state_style(state: str) -> str:
    if state in _BAD_JOB_STATES:
        return "bold red"
    return _JOB_STATE_STYLE.get(state, "")


def node_state_style(state: str, flags: tuple[str, ...]) -> str:
    if state in {"DOWN", "FAIL", "FAILING", "UNKNOWN"} or "NOT_RESPONDING" in flags:
        return "bold red"
    if "DRAIN" in flags or state in {"DRAINED", "DRAINING"}:
        return "yellow"
    if state in {"IDLE"}:
        return "green"
    return ""


def phase_style(phase: str) -> str:
    return {
        "Failed": "bold red",
        "Abnormal": "bold red",
        "Running": "green",
        "Completed": "dim",
        "Initializing": "yellow",
        "Pending": "yellow",
        "Creating": "yellow",
        "Stopped": "magenta",
        "Terminated": "magenta",
    }.get(phase, "")


def slurm_duration(seconds: int | None) -> str:
    """Slurm's ``[D-]HH:MM:SS`` (``M:SS`` under an hour), ``-`` when unknown."""
    return squeue_time(seconds, "-")


def age(seconds: float | None) -> str:
    """Human age: ``42s``, ``7m``, ``3h12m``, ``2d4h``."""
    if seconds is None:
        return "-"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600}h"


def since(t: datetime | None, now: datetime) -> float | None:
    return None if t is None else (now - t).total_seconds()


def stamp(t: datetime | None) -> str:
    return "-" if t is None else t.strftime("%Y-%m-%d %H:%M")


def mib(n: int | None) -> str:
    """MiB as operators read it: 512M, 7.8G."""
    if n is None:
        return "-"
    if n < 1024:
        return f"{n}M"
    g = n / 1024
    return f"{g:.0f}G" if g >= 100 or g == int(g) else f"{g:.1f}G"
