"""What a training job's start says beyond its events: the image-pull stage with no pod
placed, a startup log gone silent, the storage lines of the log, the good-run diff.

* **Pull with no placement.** The console's stage says "start pulling image", but no event
  shows the pod scheduled to a node or a pull attempted, and nothing says the job is queued:
  the job was never placed (pool capacity, node selector/taint, Volcano), so waiting for the
  "pull" does nothing. A pull that really runs leaves ``Scheduled`` / ``Pulling`` events.
* **Silent startup log.** No new line for :data:`LOG_SILENT_S` while Initializing: its own
  timer finding, naming the last line and its age.
* **Storage lines** (:func:`cockpit.diagnosis.startup_log.keyword_lines`) and the **good-run
  diff** (``Artifacts.startup_diffs``, computed by ``cockpit.watch.baseline``) become
  evidence of the ModelArts findings, with line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

from cockpit.diagnosis.context import RuleContext, clip
from cockpit.diagnosis.rules.modelarts_causes import cause_hits, dependency_stall, refine
from cockpit.diagnosis.startup_log import keyword_lines, last_line, strip_time
from cockpit.i18n import _
from cockpit.model import (
    Evidence,
    Finding,
    Stage,
    StartupDiff,
    Subject,
    TrainingJob,
    training_log_path,
)

LOG_SILENT_S = 10 * 60  # no new startup-log line this long while Initializing: say so

_PULL_STAGE = re.compile(r"pull(?:ing)?[ _-]?image|image[ _-]?pull|拉取镜像|镜像拉取", re.I)
# a pod that got a node, or a pull that really started (English k8s events, Chinese console)
_PLACED = re.compile(
    r"\bScheduled\b|Successfully assigned|\bPulling image|\bPulled\b|Successfully pulled|"
    r"Started container|Created container|已调度|调度成功|正在拉取镜像|拉取镜像成功",
    re.I,
)
# what the queue and the scheduler's refusals look like: other rules own those jobs
_QUEUE_OR_REFUSED = re.compile(
    r"queuing|awaiting resource|[Ww]aiting for (?:the )?resources?|排队|等待资源|"
    r"FailedScheduling|Unschedulable|Insufficient|资源不足",
    re.I,
)


def _subject(job: TrainingJob, ctx: RuleContext) -> Subject:
    return Subject("training_job", ctx.snapshot.source, job.job_id, name=job.name)


def _log_path(job: TrainingJob) -> str:
    return training_log_path(job.job_id, job.log_task or "worker-0")


def pull_stage(job: TrainingJob) -> str:
    """The open stage's words naming the image pull ("start pulling image"), else ""."""
    if not job.stages or job.stages[-1].end_time is not None:
        return ""
    last = job.stages[-1]
    for text in (*last.sub_stages, last.message):
        if text and _PULL_STAGE.search(text):
            return text
    return ""


def pull_unplaced(job: TrainingJob) -> str:
    """The pull stage's words when the job sits in it with no sign of a placed pod and no
    queue marker (then it is a placement failure, not a slow pull); else ""."""
    stage = pull_stage(job)
    if not stage or job.secondary_phase == "Queuing":
        return ""
    texts = [e.message for e in job.events]
    if any(_PLACED.search(t) or _QUEUE_OR_REFUSED.search(t) for t in texts):
        return ""
    if job.log_preview.strip():
        return ""  # the container printed: it was placed
    return stage


def placement_finding(
    job: TrainingJob, ctx: RuleContext, age_s: float, stage: str, room: tuple[int, str] | None
) -> Finding:
    """The verdict of :func:`pull_unplaced`: a scheduling failure with its evidence. ``room``:
    (nodes of the job's pool that fit its flavor now, the per-node numbers), when known."""
    evidence = [Evidence("stages", f"{stage_words(job.stages[-1])}: {stage}", tier=0)]
    none = _(
        "{n} event(s), none shows the pod scheduled to a node or an image pull started"
    ).format(n=len(job.events))
    if job.events:
        none += "; " + _("last: {message}").format(message=clip(job.events[-1].message, 120))
    evidence.append(Evidence("events", none, tier=0))
    pool = job.pool_name or job.pool_id
    where = (
        _("dedicated pool {pool}").format(pool=pool)
        if pool and not job.pool_public
        else _("the public pool")
    )
    mins = int(age_s // 60)
    why = _("its flavor, node selector or a taint matches no node that is free and healthy")
    if room is not None:
        fit, text = room
        evidence.append(Evidence("pool nodes", pool_fit(pool, fit, text), tier=1))
        if fit:
            why = _(
                "{fit} node(s) have room for its flavor, so the scheduler did not place it "
                "although it could (a node selector or taint, or a lost scheduling request)"
            ).format(fit=fit)
    return Finding(
        root_cause="scheduling_constraint_unsatisfied",
        severity="critical" if not job.pool_public else "warning",
        subject=_subject(job, ctx),
        title=_("Initializing {mins} min: no pod placed (scheduling failure) at {stage}").format(
            mins=mins, stage=repr(stage)
        ),
        explanation=_(
            "The console shows the stage {stage} for {mins} min, yet no event says the pod "
            "was scheduled to a node or that an image pull began, and nothing says the job is "
            "queued. The job was never placed on a node of {where}: {why}. A slow pull "
            "would show 'Pulling image' events."
        ).format(stage=repr(stage), mins=mins, where=where, why=why),
        remedy=_(
            "Check the pool's nodes (Abnormal, cordoned, tainted) and free capacity for flavor "
            "{flavor}; stop the job and resubmit on a flavor or pool with "
            "free nodes. If the pool is healthy and has room, open a ticket with the job id: "
            "the scheduler lost it."
        ).format(flavor=job.flavor_id or _("(unknown)")),
        evidence=tuple(evidence),
        confidence=0.75,
        first_seen=job.create_time,
    )


def silence(job: TrainingJob, now: datetime) -> tuple[int, str, float] | None:
    """(line number, last line, seconds since it was written) of the startup log: the line's
    own timestamp when it has one, else when the poller last saw the log grow."""
    got = last_line(job.log_preview) if job.log_preview else None
    if got is None:
        return None
    line_no, text, written = got
    when = written_at(written, job)
    if when is None:
        return None
    return line_no + job.log_first_line - 1, text, max(0.0, (now - when).total_seconds())


def written_at(stamp: datetime | None, job: TrainingJob) -> datetime | None:
    """When the log's last line was written: its own ``stamp``, unless that is later than
    the read that saw it (a local time taken as UTC, a skewed clock: it then says nothing),
    else when the poller first saw the log as it is (``log_changed_at``)."""
    seen = job.log_checked_at or job.log_changed_at
    if stamp is not None and (seen is None or stamp <= seen):
        return stamp
    return job.log_changed_at


def job_log_silent(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Initializing with no new startup-log line for :data:`LOG_SILENT_S`: a timer of its own
    (the baseline diff, when there is one, says where the good run went next)."""
    if job.console_phase != "Initializing":
        return
    got = silence(job, ctx.now)
    if got is None or got[2] < LOG_SILENT_S:
        return
    line_no, text, age = got
    mins = int(age // 60)
    # a cause already named for this job (an event, a status, the log's own error, a stalled
    # dependency install) is its incident; the timer is then context, not a second incident
    named = dependency_stall(job) is not None or any(
        refine(h).label != "queued_insufficient_resources" for h in cause_hits(job, ctx)
    )
    evidence = [
        Evidence("startup log", text, line=line_no, path=_log_path(job), tier=2, quoted=True),
        *baseline_evidence(job, ctx),
    ]
    yield Finding(
        root_cause="startup_log_silent",
        severity="info" if named else "warning",
        subject=_subject(job, ctx),
        title=_("No new startup-log line for {mins} min (last: {line})").format(
            mins=mins, line=clip(strip_time(text), 60)
        ),
        explanation=_(
            "The startup log's last line (line {line}) was written {mins} min ago and the "
            "job is still Initializing: whatever that step does (a download, a mount, a "
            "dependency install, a rendezvous) has stopped making progress."
        ).format(line=line_no, mins=mins),
        remedy=_(
            "Open the startup log at that line; if the step it names is a network fetch, check "
            "the endpoint from the pool (a boot command `curl -sI <url>`); stop and resubmit "
            "once fixed rather than waiting for the Initializing timeout."
        ),
        evidence=tuple(evidence),
        confidence=0.6,
        first_seen=job.create_time,
    )


def diff_for(job: TrainingJob, ctx: RuleContext) -> StartupDiff | None:
    return next((d for d in ctx.artifacts.startup_diffs if d.job_id == job.job_id), None)


def baseline_evidence(job: TrainingJob, ctx: RuleContext) -> list[Evidence]:
    """The good-run diff as evidence lines: where this start stopped and what came next."""
    d = diff_for(job, ctx)
    if d is None:
        return []
    where = (
        _("stopped after {line}").format(line=repr(clip(d.last_passed, 100)))
        if d.last_passed
        else _("stopped before its first line")
    )
    if d.passed == d.total:
        where = _("reached every line")
    out = [
        Evidence(
            "baseline",
            _("vs good run {job_id}: {where} (step {passed}/{total})").format(
                job_id=d.baseline_job_id, where=where, passed=d.passed, total=d.total
            ),
            tier=2,
        )
    ]
    if d.next_expected and d.passed < d.total:
        took = ""
        if d.then_next_s is not None:
            took = " (" + _("took {seconds:.0f}s then").format(seconds=d.then_next_s) + ")"
        out.append(
            Evidence(
                "baseline",
                _("good run's next line: {line}").format(line=clip(d.next_expected[0], 160)) + took,
                tier=2,
            )
        )
    return out


def stage_words(s: Stage, still: bool = False) -> str:
    """A stage as the engine says it: ``stage preparing open since 2026-11-29T20:18:20+00:00``
    (``still open`` with ``still``, ``ended`` once it has an end time)."""
    at = s.start_time.isoformat() if s.start_time else None
    if s.end_time is not None:
        text = _("stage {name} ended since {time}") if at else _("stage {name} ended")
    elif still:
        text = _("stage {name} still open since {time}") if at else _("stage {name} still open")
    else:
        text = _("stage {name} open since {time}") if at else _("stage {name} open")
    return text.format(name=s.name, time=at)


def pool_fit(pool: str, fit: int, text: str) -> str:
    """``pool p: 2 node(s) fit; <what the flavor needs; the largest free node>``."""
    return _("pool {pool}: {fit} node(s) fit; {text}").format(pool=pool, fit=fit, text=text)


def storage_evidence(job: TrainingJob, limit: int = 3, skip: set[str] | None = None) -> list:
    """The startup log's storage lines (Mount/Volume/OBS/AccessDenied/...) with their line
    numbers, those already shown (``skip``: texts) left out."""
    if not job.log_preview:
        return []
    skip = skip or set()
    path = _log_path(job)
    return [
        Evidence("startup log", text, line=n, path=path, tier=2, quoted=True)
        for n, text in keyword_lines(job.log_preview, limit=limit + len(skip))
        if text not in skip
    ][:limit]
