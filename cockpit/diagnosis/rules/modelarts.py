"""ModelArts rules: why a training job is stuck "Initializing" or dead, and pool health.

Every check of the ModelArts "training job stuck in Initializing" troubleshooting guide:
where the job is (scheduling, image pull, mount, boot command) from stages and events,
queueing vs stuck, mount path mistakes, storage errors (access, read-only, timeouts),
image pulls, boot-command failures, pool nodes and fragmentation, a silent startup log.
The causes named by events, task statuses and logs, and their wording, are in
:mod:`cockpit.diagnosis.rules.modelarts_causes`.

Rules are pure: they read the TrainingJob/Pool, the snapshot's pools and the artifacts'
logs for the job (``LogText.subject_id`` equal to the job id, or empty in a bundle).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

from cockpit.diagnosis.context import RuleContext, clip
from cockpit.diagnosis.logscan import first_error
from cockpit.diagnosis.rules.modelarts_causes import (
    DEPENDENCY_EXPLANATION,
    DEPENDENCY_REMEDY,
    PROBE,
    CauseHit,
    cause_hits,
    cause_phrase,
    cause_remedy,
    dependency_phrase,
    dependency_stall,
    job_logs,
    obs_bucket,
    refine,
    task_exit,
)
from cockpit.diagnosis.rules.modelarts_startup import (
    baseline_evidence,
    placement_finding,
    pool_fit,
    pull_unplaced,
    stage_words,
    storage_evidence,
)
from cockpit.i18n import N_, _
from cockpit.model import (
    Evidence,
    Finding,
    Pool,
    Severity,
    Subject,
    TrainingJob,
    training_log_path,
)

INIT_THRESHOLD_S = 10 * 60  # Initializing longer than this on a public pool is flagged
DEDICATED_NORMAL_S = 90  # dedicated pools normally leave Initializing within 1.5 min
DEDICATED_THRESHOLD_S = 3 * 60  # so twice that is already abnormal there
QUEUE_SUGGEST_S = 30 * 60  # past this, suggest another flavor or region
LOG_STALL_S = 10 * 60  # no new startup-log output for this long while the pool is healthy

# English and Chinese console events (X-Language zh-cn gives the same events in Chinese)
_QUEUE_EVENT = re.compile(
    r"queuing and awaiting resource allocation|[Ww]aiting for (?:the )?resources?|排队中|等待资源",
    re.I,
)
_STARTED = re.compile(
    r"\bStarted: Started container|training started|Training job is running|"
    r"训练作业运行中|开始运行|训练开始",
    re.I,
)
_MOUNT_WORDS = re.compile(r"mount|volume|挂载|存储卷", re.I)
_IMAGE_WORDS = re.compile(r"pull|ImagePull|image|镜像", re.I)

# --------------------------------------------------------------------------- helpers


def _mins(seconds: float) -> int:
    return max(0, int(seconds // 60))


def _age_s(since: datetime | None, now: datetime) -> float | None:
    return None if since is None else max(0.0, (now - since).total_seconds())


def is_initializing(job: TrainingJob) -> bool:
    return job.console_phase == "Initializing"


def init_threshold_s(job: TrainingJob) -> int:
    """Seconds of Initializing before we call it stuck: shorter on a dedicated pool."""
    return INIT_THRESHOLD_S if job.pool_public else DEDICATED_THRESHOLD_S


def _subject(job: TrainingJob, ctx: RuleContext) -> Subject:
    return Subject("training_job", ctx.snapshot.source, job.job_id, name=job.name)


def _pool_of(job: TrainingJob, ctx: RuleContext) -> Pool | None:
    if not job.pool_id:
        return None
    return next((p for p in ctx.snapshot.pools if p.pool_id == job.pool_id), None)


def _prefix(job: TrainingJob, now: datetime) -> str:
    """Verdict prefix: "Initializing 25 min" or the console phase ("Failed")."""
    if is_initializing(job):
        age = _age_s(job.create_time, now)
        return (
            _("Initializing {age} min").format(age=_mins(age))
            if age is not None
            else _("Initializing")
        )
    return phase_words(job.console_phase)


# The console's phases in the operator's language (the API's words stay in tables and JSON).
PHASE_WORDS = {
    "Initializing": N_("Initializing"),
    "Pending": N_("Pending"),
    "Running": N_("Running"),
    "Completed": N_("Completed"),
    "Failed": N_("Failed"),
    "Abnormal": N_("Abnormal"),
    "Creating": N_("Creating"),
    "Stopped": N_("Stopped"),
    "Terminated": N_("Terminated"),
}
# Where an Initializing job is (stuck_where), in words.
WHERE_WORDS = {
    "scheduling": N_("scheduling"),
    "image pull": N_("image pull"),
    "mount": N_("mount"),
    "boot command": N_("boot command"),
    "preparing": N_("preparing"),
}


def phase_words(phase: str) -> str:
    words = PHASE_WORDS.get(phase)
    return _(words) if words else phase


def where_words(where: str) -> str:
    words = WHERE_WORDS.get(where)
    return _(words) if words else where


def stuck_where(job: TrainingJob) -> str:
    """Where an Initializing job is: scheduling | image pull | mount | boot command | preparing."""
    last = job.stages[-1] if job.stages else None
    texts = " ".join(e.message for e in job.events)
    if last is not None and last.name == "scheduling" and last.end_time is None:
        return "scheduling"
    if last is None and (job.secondary_phase == "Queuing" or _QUEUE_EVENT.search(texts)):
        return "scheduling"
    # the sub-stages and the stage's own words ("start pulling image")
    subs = " ".join((*last.sub_stages, last.message)).lower() if last else ""
    warn = " ".join(e.message for e in job.events if e.level.lower() in {"warning", "error"})
    if _MOUNT_WORDS.search(warn) or "mount" in subs or "volume" in subs:
        if not _IMAGE_WORDS.search(warn) or re.search(r"FailedMount|挂载失败", warn):
            return "mount"
    if _IMAGE_WORDS.search(warn) or "image" in subs:
        return "image pull"
    if _STARTED.search(texts) or "boot" in subs:
        return "boot command"
    return last.name if last else "preparing"


# --------------------------------------------------------------------------- training-job rules


_SPECIFIC_STORAGE = (
    "storage_access_denied",
    "storage_read_only",
    "storage_path_invalid",
    "storage_connection_error",
)


def job_errors(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """One finding per cause named by an event, a task status, the startup log or an exit code."""
    if job.phase in {"Running", "Completed"} and not is_initializing(job):
        return
    by_label: dict[str, list[CauseHit]] = {}
    for raw in cause_hits(job, ctx):
        hit = refine(raw)
        if hit.label in {"queued_insufficient_resources"}:
            continue  # the queue rule owns it
        by_label.setdefault(hit.label, []).append(hit)
    for ts in job.task_statuses:
        label = {137: "oom_killed", 127: "container_entrypoint_failed"}.get(ts.exit_code or 0)
        if label:
            said = _("{task}: exit code {code}").format(task=ts.task, code=ts.exit_code)
            ev = Evidence("job status", said + (f" ({ts.message})" if ts.message else ""), tier=1)
            by_label.setdefault(label, []).append(
                CauseHit(label, "critical", ev, ts.message or str(ts.exit_code))
            )
    # A specific storage cause (access, read-only, bad path) explains the generic mount failures:
    # keep them as its evidence instead of a second finding.
    specific = next((lb for lb in _SPECIFIC_STORAGE if lb in by_label), None)
    if specific and "storage_mount_failed" in by_label:
        by_label[specific].extend(by_label.pop("storage_mount_failed"))
    prefix = _prefix(job, ctx.now)
    pool = _pool_of(job, ctx)
    related = (Subject("pool", ctx.snapshot.source, pool.pool_id),) if pool else ()
    for rank, (label, hits) in enumerate(by_label.items()):
        first = hits[0]
        explanation, remedy = cause_remedy(label, job, first)
        if label == "image_pull_failed" and job.image and job.image not in explanation:
            # the job's own image, when the pull's message named another (or none)
            explanation += " " + _("Job image: {image}.").format(image=job.image)
        # the title names what all the lines of this cause say together
        merged = CauseHit(label, first.severity, first.evidence, " ".join(h.text for h in hits))
        seen: set[str] = set()
        evidence = []
        for h in hits:
            if h.evidence.text not in seen:
                seen.add(h.evidence.text)
                evidence.append(h.evidence)
        if label.startswith("storage_") or label == "input_path_not_found":
            # the startup log's storage lines, numbered: the mount step before the error
            evidence += storage_evidence(job, limit=max(0, 5 - len(evidence)), skip=seen)
        yield Finding(
            root_cause=label,
            severity=first.severity,
            subject=_subject(job, ctx),
            title=_("{prefix}: {label}").format(
                prefix=prefix, label=cause_phrase(label, job, merged)
            ),
            explanation=explanation.strip(),
            remedy=remedy,
            evidence=tuple(evidence[:5]),
            confidence=max(0.5, 0.9 - 0.05 * rank),
            first_seen=job.create_time,
            related=related,
        )


def job_failed_unexplained(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """A Failed/Abnormal job no named cause explains: say so with what is known (the exit
    codes, the first red error of its logs) instead of saying nothing. Registered after
    :func:`job_errors` in one FirstOf: it speaks only when that rule found nothing."""
    if job.console_phase not in {"Failed", "Abnormal"}:
        return
    if path_problems(job):  # job_paths names the cause; "no known cause" would contradict it
        return
    exits = [f"{ts.task} exit {ts.exit_code}" for ts in job.task_statuses if ts.exit_code]
    evidence = [
        Evidence("job status", task_exit(ts.task, ts.exit_code, ts.message).strip(": "), tier=1)
        for ts in job.task_statuses
        if ts.exit_code or ts.message
    ][:3]
    first = None
    for where, path, data, base in job_logs(job, ctx):
        h = first_error(data, kind="startup")
        if h is not None:
            first = h.text.strip()
            evidence.append(
                Evidence(
                    where,
                    first,
                    line=base + h.line - 1,
                    path=path,
                    offset=h.offset,
                    tier=2,
                    quoted=True,
                )
            )
            break
    evidence += storage_evidence(job, limit=2, skip={e.text for e in evidence})
    fact = exits[0] if exits else _("phase {phase}").format(phase=job.phase)
    title = f"{phase_words(job.console_phase)}: {fact}"
    if first:
        title += "; " + _("first error: {line}").format(line=clip(first, 80))
    yield Finding(
        root_cause="application_error",
        severity="critical",
        subject=_subject(job, ctx),
        title=title,
        explanation=(
            _(
                "The job failed and no known cause matched its events, status or logs; the "
                "first red error is: {line}."
            ).format(line=first[:300])
            if first
            else _(
                "The job failed and no known cause matched its events, status or logs; no log "
                "line was flagged."
            )
        ),
        remedy=_(
            "Read the training log around that line (the ModelArts log page, or {job_id}); fix the "
            "code or data it names and resubmit. With no log at all, check the job's events and "
            "the pool's health."
        ).format(job_id=training_log_path(job.job_id, job.log_task or "worker-0")),
        evidence=tuple(evidence),
        confidence=0.5,
        first_seen=job.create_time,
    )


def _queued(job: TrainingJob, ctx: RuleContext | None = None) -> tuple[bool, Evidence | None]:
    """Is the job waiting in the queue? With the best evidence: an events line (a bundle's
    events file first, with its line number), the open scheduling stage, or the phase pair."""
    for lt in ctx.artifacts.logs if ctx else ():
        if lt.kind == "events" and lt.subject_id in ("", job.job_id):
            for i, line in enumerate(lt.data.decode("utf-8", "replace").splitlines()):
                if _QUEUE_EVENT.search(line):
                    return True, Evidence(
                        lt.name,
                        line.strip(),
                        line=(lt.base_line or 1) + i,
                        path=lt.path,
                        tier=0,
                        quoted=True,
                    )
    for ev in job.events:
        if _QUEUE_EVENT.search(ev.message):
            t = ev.time.isoformat() if ev.time else "-"
            line = f"{t} {ev.level} {ev.source} {ev.message}"  # as the events log prints it
            return True, Evidence("events", line, tier=0, quoted=True)
    if job.stages and job.stages[-1].name == "scheduling" and job.stages[-1].end_time is None:
        return True, Evidence(
            "stages",
            stage_words(job.stages[-1], still=True),
            tier=0,
        )
    if job.phase == "Pending" and job.secondary_phase == "Queuing":
        return True, Evidence("job status", "phase Pending / secondary_phase Queuing", tier=0)
    return False, None


def _per_node_need(job: TrainingJob) -> tuple[int | None, int | None, int | None]:
    return job.flavor_gpus or job.flavor_npus or None, job.flavor_cpus, job.flavor_memory_mib


def _fits(job: TrainingJob, pool: Pool) -> tuple[int, bool, str]:
    """(nodes that fit the flavor, total free >= total request, largest per-node free text)."""
    acc, cpus, mem = _per_node_need(job)
    nodes = [n for n in pool.nodes if n.phase == "Available"]
    use_npu = bool(job.flavor_npus) and not job.flavor_gpus

    def free_acc(n):  # noqa: ANN001, ANN202 - tiny local helper
        return (n.free_npus if use_npu else n.free_gpus) or 0

    fit = 0
    for n in nodes:
        if acc and free_acc(n) < acc:
            continue
        if cpus and (n.free_cpus or 0) < cpus:
            continue
        if mem and (n.free_memory_mib or 0) < mem:
            continue
        fit += 1
    k = max(1, job.node_count)
    total_ok = True
    if acc:
        total_ok &= sum(free_acc(n) for n in nodes) >= acc * k
    if cpus:
        total_ok &= sum(n.free_cpus or 0 for n in nodes) >= cpus * k
    if mem:
        total_ok &= sum(n.free_memory_mib or 0 for n in nodes) >= mem * k
    unit = "NPU" if use_npu else "GPU"
    big_acc = max((free_acc(n) for n in nodes), default=0)
    big_cpu = max((n.free_cpus or 0 for n in nodes), default=0)
    big_mem = max((n.free_memory_mib or 0 for n in nodes), default=0) // 1024
    need = _(
        "flavor {flavor} needs per node: {acc} {unit}, {cpus} CPU, {mem} GiB x {k} node(s)"
    ).format(
        flavor=job.flavor_id, acc=acc or 0, unit=unit, cpus=cpus or "?", mem=(mem or 0) // 1024, k=k
    )
    have = _("largest free on one node: {acc} {unit}, {cpus} CPU, {mem} GiB").format(
        acc=big_acc, unit=unit, cpus=f"{big_cpu:g}", mem=big_mem
    )
    return fit, total_ok, f"{need}; {have}"


def job_queued(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Waiting for capacity is not broken: a warning with the time queued (info while short)."""
    if not is_initializing(job):
        return
    queued, ev = _queued(job, ctx)
    if not queued or ev is None:
        return
    stage = job.stages[-1] if job.stages and job.stages[-1].name == "scheduling" else None
    since = (stage.start_time if stage and stage.start_time else None) or job.create_time
    age = _age_s(since, ctx.now) or 0
    pool = _pool_of(job, ctx)
    evidence = [ev]
    kind = "public" if job.pool_public else "dedicated"
    explanation = (
        _(
            "The job is waiting for free public-pool capacity for its flavor {flavor}; nothing is "
            "broken."
        )
        if job.pool_public
        else _(
            "The job is waiting for free dedicated-pool capacity for its flavor {flavor}; nothing "
            "is broken."
        )
    ).format(flavor=job.flavor_id or _("(unknown)"))
    room = 0  # nodes of the pool with room for the flavor now: then it is not capacity
    if pool is not None and pool.nodes:
        fit, total_ok, text = _fits(job, pool)
        evidence.append(Evidence("pool nodes", pool_fit(pool.name, fit, text), tier=1))
        if fit < max(1, job.node_count) and total_ok:
            return  # pool_fragmented below says it better
        room = fit if fit >= max(1, job.node_count) else 0
    if pool is not None and job.flavor_id in pool.max_available:
        cpu, mem_gb = pool.max_available[job.flavor_id]
        evidence.append(
            Evidence(
                "training-pool-flavors",
                _("max available for {flavor}: {cpu} CPU, {mem} GB").format(
                    flavor=job.flavor_id, cpu=cpu, mem=mem_gb
                ),
                tier=1,
            )
        )
    if not job.pool_public:
        explanation += " " + _(
            "The training queue is FIFO: a larger job ahead blocks smaller ones even when cards "
            "are free."
        )
    remedy = _("Wait; the job starts when capacity frees up.")
    if age >= QUEUE_SUGGEST_S:
        remedy = _(
            "Queued over 30 min: choose a flavor with fewer cards, another region, or a dedicated "
            "pool (or free capacity in this one)."
        )
    sev: Severity = "warning" if age >= INIT_THRESHOLD_S else "info"
    title = {
        ("public", False): _("Queued {age} min for resources (public pool)"),
        ("public", True): _("Queued {age} min for resources (public pool {pool})"),
        ("dedicated", False): _("Queued {age} min for resources (dedicated pool)"),
        ("dedicated", True): _("Queued {age} min for resources (dedicated pool {pool})"),
    }[kind, pool is not None].format(age=_mins(age), pool=pool.name if pool else "")
    if room and pool is not None:
        # its own evidence says nodes fit: what it waits for is its turn, not capacity
        title = _("Queued {age} min although {room} node(s) of {pool} fit: not capacity").format(
            age=_mins(age), room=room, pool=pool.name
        )
        explanation = _(
            "{room} node(s) of pool {pool} have room for flavor {flavor} now, so "
            "the job is not waiting for capacity: it waits for its turn in the pool's FIFO "
            "training queue (an earlier job ahead of it) or for the next scheduling cycle."
        ).format(room=room, pool=pool.name, flavor=job.flavor_id)
        remedy = _(
            "Wait a few minutes; if it stays queued, find the earlier job queued in this pool "
            "(the queue is FIFO) and check the pool's scheduling events."
        )
    yield Finding(
        root_cause="queued_insufficient_resources",
        severity=sev,
        subject=_subject(job, ctx),
        title=title,
        explanation=explanation,
        remedy=remedy,
        evidence=tuple(evidence),
        confidence=0.85,
        first_seen=since,
        related=(Subject("pool", ctx.snapshot.source, pool.pool_id),) if pool else (),
    )


def job_fragmented(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Dedicated pool: free capacity adds up to the request, but no single node has the flavor."""
    if not is_initializing(job) or job.pool_public:
        return
    pool = _pool_of(job, ctx)
    if pool is None or not pool.nodes or not any(_per_node_need(job)):
        return
    fit, total_ok, text = _fits(job, pool)
    if fit >= max(1, job.node_count) or not total_ok:
        return
    age = _age_s(job.create_time, ctx.now) or 0
    yield Finding(
        root_cause="pool_fragmented",
        severity="warning",
        subject=_subject(job, ctx),
        title=_("{job}: pool {name} fragmented, no node fits {flavor_id}").format(
            job=_prefix(job, ctx.now), name=pool.name, flavor_id=job.flavor_id
        ),
        explanation=_(
            "Pool {name} has enough free resources in total, but spread over nodes: {text}."
        ).format(name=pool.name, text=text),
        remedy=_(
            "Choose a smaller flavor (fewer cards per node, more nodes), wait for a node to drain, "
            "or move running jobs to free one whole node."
        ),
        evidence=(Evidence("pool nodes", pool_fit(pool.name, fit, text), tier=1),),
        confidence=0.8 if age >= init_threshold_s(job) else 0.6,
        first_seen=job.create_time,
        related=(Subject("pool", ctx.snapshot.source, pool.pool_id),),
    )


def job_initializing_too_long(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Initializing past the threshold with no named cause: say where it is, and whether the
    startup log has gone quiet while the pool is healthy (time to intervene)."""
    if not is_initializing(job):
        return
    age = _age_s(job.create_time, ctx.now)
    if age is None or age < init_threshold_s(job) or _queued(job, ctx)[0]:
        return
    if any(refine(h).label not in {"queued_insufficient_resources"} for h in cause_hits(job, ctx)):
        return  # job_errors names the cause
    if path_problems(job):
        return  # job_paths names the cause
    stage = pull_unplaced(job)
    if stage:
        pool = _pool_of(job, ctx)
        room = None
        if pool is not None and pool.nodes and any(_per_node_need(job)):
            fit, _free, text = _fits(job, pool)
            room = (fit, text)
        yield placement_finding(job, ctx, age, stage, room)
        return
    where = stuck_where(job)
    pool = _pool_of(job, ctx)
    stall = dependency_stall(job)
    if stall is not None:
        line, text = stall
        yield Finding(
            root_cause="dependency_install_failed",
            severity="critical",
            subject=_subject(job, ctx),
            # the cause first: at 80 columns the VERDICT cell keeps what failed, not where
            title=_("Initializing {age} min: {text} (stuck at {where})").format(
                age=_mins(age), where=where_words(where), text=dependency_phrase(text)
            ),
            explanation=_(DEPENDENCY_EXPLANATION)
            + " "
            + _("The startup log ends on it (line {line}).").format(line=line),
            remedy=_(DEPENDENCY_REMEDY),
            evidence=(
                Evidence(
                    "startup log",
                    text,
                    line=line,
                    path=training_log_path(job.job_id, job.log_task or "worker-0"),
                    tier=2,
                    quoted=True,
                ),
                *baseline_evidence(job, ctx),
            ),
            confidence=0.85,
            first_seen=job.create_time,
            related=(Subject("pool", ctx.snapshot.source, pool.pool_id),) if pool else (),
        )
        return
    healthy = pool is None or (
        pool.phase in {"", "Running"} and not any(n.phase == "Abnormal" for n in pool.nodes)
    )
    evidence = []
    if job.stages:
        s = job.stages[-1]
        evidence.append(
            Evidence(
                "stages",
                stage_words(s)
                + (
                    ", " + _("sub-stages: {names}").format(names=", ".join(s.sub_stages))
                    if s.sub_stages
                    else ""
                ),
                tier=0,
            )
        )
    # where it stopped vs a good run: the first thing an alert's three lines should show
    evidence += baseline_evidence(job, ctx)
    for ev in job.events[-1:]:
        evidence.append(Evidence("events", _("last event: {message}").format(message=ev.message)))
    normal = (
        _("dedicated pools normally leave Initializing within 1.5 min")
        if not job.pool_public
        else _("public pools normally take seconds to a few minutes")
    )
    title = _("Initializing {age} min: stuck at {where}").format(
        age=_mins(age), where=where_words(where)
    )
    remedy = _(
        "Open the startup log and the events; if nothing moves, stop the job and rerun with the "
        "boot command `{probe}` (mount) or `echo test && sleep 60` (image)."
    ).format(probe=PROBE.replace("<bucket>", obs_bucket(job)))
    quiet = _age_s(job.log_changed_at, ctx.now)
    if quiet is not None and quiet >= LOG_STALL_S and healthy:
        title += ", " + _("no startup-log output for {quiet} min").format(quiet=_mins(quiet))
        since = job.log_changed_at.isoformat()  # type: ignore[union-attr]
        said = _("no new output since {time}").format(time=since)
        evidence.append(Evidence("startup log", said, tier=2))
        remedy = _("Intervene: the pool is healthy but the job is silent.") + " " + remedy
    evidence += storage_evidence(job, limit=3)
    yield Finding(
        root_cause="init_timeout",
        severity="critical" if age >= 3 * init_threshold_s(job) else "warning",
        subject=_subject(job, ctx),
        title=title,
        explanation=_(
            "The job has been Initializing for {age} min ({normal}); it is at: {where}."
        ).format(age=_mins(age), normal=normal, where=where_words(where)),
        remedy=remedy,
        evidence=tuple(evidence),
        confidence=0.6,
        first_seen=job.create_time,
        related=(Subject("pool", ctx.snapshot.source, pool.pool_id),) if pool else (),
    )


_FILE_LIKE = re.compile(r"\.[A-Za-z0-9]{1,5}/$")


def path_problems(job: TrainingJob) -> list[str]:
    """Malformed data/mount paths in the job spec, one message each (pure, for tests/UI)."""
    out: list[str] = []
    for m in job.mounts:
        label = f"{m.direction} {m.name or m.kind}".strip()
        for what, p in ((_("OBS path"), m.remote), (_("container path"), m.local)):
            if p and p != p.rstrip():
                out.append(
                    _("{label}: {what} {path} ends with a space").format(
                        label=label, what=what, path=repr(p)
                    )
                )
            if p and _FILE_LIKE.search(p.rstrip()):
                out.append(
                    _("{label}: {what} {path} names a file but ends with '/'").format(
                        label=label, what=what, path=repr(p)
                    )
                )
            if p.startswith("obs://") and "//" in p[6:]:
                out.append(
                    _("{label}: {what} {path} has an empty path segment '//'").format(
                        label=label, what=what, path=repr(p)
                    )
                )
        bm = re.match(r"obs://([^/]+)", m.remote) or re.match(r"/obs(?:-ckpt)?/([^/]+)", m.local)
        if bm and bm.group(1) != bm.group(1).lower():
            out.append(
                _(
                    "{label}: bucket {bucket} has capitals; OBS bucket names are lower case "
                    "and case-sensitive"
                ).format(label=label, bucket=repr(bm.group(1)))
            )
        if (
            m.direction == "volume"
            and m.kind == "obs"
            and m.local
            and not re.match(r"/obs(?:-ckpt)?/", m.local)
        ):
            out.append(
                _(
                    "{label}: OBS volume mounted at {path}; OBS paths in the container must "
                    "start with /obs/ (or /obs-ckpt/)"
                ).format(label=label, path=repr(m.local))
            )
        if m.kind == "evs" and m.local and not m.local.startswith("/cache"):
            out.append(
                _(
                    "{label}: EVS volume at {path}; EVS disks are normally mounted under /cache/"
                ).format(label=label, path=repr(m.local))
            )
    # a path given both as an input and as a hyperparameter is one mistake, said once
    return list(dict.fromkeys(out))


def job_paths(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Mount and data paths malformed in the job spec (trailing space/slash, bucket case,
    OBS volume not under /obs/, EVS not under /cache/)."""
    if job.phase in {"Running", "Completed"} and not is_initializing(job):
        return
    problems = path_problems(job)
    if not problems:
        return
    first = problems[0].split(": ", 1)[1]
    yield Finding(
        root_cause="storage_path_invalid",
        severity="warning",
        subject=_subject(job, ctx),
        title=_("{job}: data path malformed ({first})").format(
            job=_prefix(job, ctx.now), first=clip(first, 80)
        ),
        explanation=_("A data or mount path in the job spec will not resolve as written."),
        remedy=_(
            "Fix the paths in the job (no trailing space, lower-case bucket, OBS under /obs/, EVS "
            "under /cache/); verify with the boot command `{value}`."
        ).format(value=PROBE.replace("<bucket>", obs_bucket(job).lower())),
        evidence=tuple(Evidence("job spec", p, tier=0) for p in problems[:5]),
        confidence=0.7,
        first_seen=job.create_time,
    )


# --------------------------------------------------------------------------- pool rules


def pool_abnormal_nodes(pool: Pool, ctx: RuleContext) -> Iterator[Finding]:
    """Dedicated pool nodes that are Abnormal (or a pool reporting abnormal resources)."""
    bad = [n for n in pool.nodes if n.phase == "Abnormal"]
    count = len(bad) or (pool.abnormal or 0)
    if not count and pool.phase not in {"Abnormal", "Error"}:
        return
    total = len(pool.nodes) or None
    names = ", ".join(n.name for n in bad[:5])
    waiting = [
        j for j in ctx.snapshot.training_jobs if j.pool_id == pool.pool_id and is_initializing(j)
    ]
    evidence = [
        Evidence("pool nodes", f"{n.name} {n.phase} {n.private_ip}".strip(), tier=1)
        for n in bad[:5]
    ]
    if pool.phase in {"Abnormal", "Error"}:
        evidence.insert(
            0,
            Evidence(
                "pools",
                _("pool {pool} phase {phase}").format(pool=pool.name, phase=pool.phase)
                + f" {pool.message}".rstrip(),
                tier=1,
            ),
        )
    yield Finding(
        root_cause="pool_node_abnormal",
        severity="critical" if (total and count >= total) or waiting else "warning",
        subject=Subject("pool", ctx.snapshot.source, pool.pool_id),
        title=(
            _("Pool {pool}: {count} of {total} node(s) Abnormal")
            if total
            else _("Pool {pool}: {count} node(s) Abnormal")
        ).format(pool=pool.name, count=count, total=total)
        + (f" ({names})" if names else ""),
        explanation=_(
            "Abnormal nodes take no training jobs, so the pool has less capacity than it shows."
        )
        + (
            " " + _("{n} job(s) are Initializing on this pool.").format(n=len(waiting))
            if waiting
            else ""
        ),
        remedy=_(
            "Check the nodes in the ModelArts console (Resource pools > Nodes); reset or replace "
            "them, or contact support if hardware is faulty."
        ),
        evidence=tuple(evidence),
        confidence=0.9,
        related=tuple(
            Subject("training_job", ctx.snapshot.source, j.job_id, name=j.name) for j in waiting
        ),
    )
