"""Map ModelArts v2 phases to the word the console shows (no SDK import: cheap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cockpit.model import TrainingJob

_CONSOLE = {
    "Running": "Running",
    "Completed": "Completed",
    "Failed": "Failed",
    "Terminating": "Stopping",
    "Terminated": "Stopped",
    "Abnormal": "Abnormal",
}


def console_phase(job: TrainingJob) -> str:
    """Creating, Pending/Queuing or an open ``preparing`` stage read as "Initializing"."""
    if job.phase in {"Creating", "Pending"}:
        return "Initializing"
    if job.phase == "Running" and job.stages and job.stages[-1].name == "preparing" and job.stages[-1].end_time is None:
        return "Initializing"
    return _CONSOLE.get(job.phase, job.phase or "Unknown")
