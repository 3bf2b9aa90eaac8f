"""Text views of ModelArts data for the engine and the log viewer: a training job's events
and startup log as LogTexts, a pool's node table."""

from __future__ import annotations

from datetime import UTC, datetime

from cockpit.model import Artifacts, LogText, Pool, TrainingJob
from cockpit.model import training_log_path as log_path


def format_events(job: TrainingJob) -> str:
    """One line per event, oldest first: ``time level source message``."""
    far = datetime.min.replace(tzinfo=UTC)
    rows = sorted(job.events, key=lambda e: e.time or far)
    return "".join(
        f"{e.time.isoformat() if e.time else '-'} {e.level} {e.source or '-'} {e.message}\n"
        for e in rows
    )


def format_nodes(pool: Pool) -> str:
    """Node table of a pool: name phase flavor ip free/total cpu, memory GiB, gpu, npu."""

    def pair(free: float | int | None, total: float | int | None) -> str:
        f = "?" if free is None else f"{free:g}"
        t = "?" if total is None else f"{total:g}"
        return f"{f}/{t}"

    def gib(v: int | None) -> float | None:
        return None if v is None else round(v / 1024, 1)

    lines = [
        "NAME PHASE FLAVOR IP CPU(free/total) MEM_GiB(free/total) GPU(free/total) NPU(free/total)"
    ]
    for n in pool.nodes:
        lines.append(
            " ".join(
                [
                    n.name,
                    n.phase,
                    n.flavor or "-",
                    n.private_ip or "-",
                    pair(n.free_cpus, n.cpus),
                    pair(gib(n.free_memory_mib), gib(n.memory_mib)),
                    pair(n.free_gpus, n.gpus),
                    pair(n.free_npus, n.npus),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def job_artifacts(job: TrainingJob) -> Artifacts:
    """Events and startup log of one job as LogTexts for the engine and the log viewer."""
    logs = []
    if job.events:
        logs.append(
            LogText(
                name="events",
                kind="events",
                data=format_events(job).encode(),
                subject_id=job.job_id,
            )
        )
    if job.log_preview:
        logs.append(
            LogText(
                name=f"{job.log_task or 'worker-0'} startup log",
                kind="startup",
                data=job.log_preview.encode("utf-8", "replace"),
                path=log_path(job.job_id, job.log_task or "worker-0"),
                subject_id=job.job_id,
            )
        )
    return Artifacts(logs=tuple(logs))
