"""ModelArts rules: why a training job is stuck "Initializing" or dead, and pool health.

Every check of the ModelArts "training job stuck in Initializing" troubleshooting guide:
where the job is (scheduling, image pull, mount, boot command) from stages and events,
queueing vs stuck, mount path mistakes, storage errors (access, read-only, timeouts),
image pulls, boot-command failures, pool nodes and fragmentation, a silent startup log.
Log lines and event texts are classified with the shared catalogue
(:mod:`cockpit.diagnosis.patterns`) so bundles, the TUI and the CLI agree.

Rules are pure: they read the TrainingJob/Pool, the snapshot's pools and the artifacts'
logs for the job (``LogText.subject_id`` equal to the job id, or empty in a bundle).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from cockpit.diagnosis.engine import RuleContext, rule
from cockpit.diagnosis.logscan import iter_errors
from cockpit.diagnosis.patterns import classify
from cockpit.model import Evidence, Finding, Pool, Severity, Subject, TrainingJob

INIT_THRESHOLD_S = 10 * 60  # Initializing longer than this on a public pool is flagged
DEDICATED_NORMAL_S = 90  # dedicated pools normally leave Initializing within 1.5 min
DEDICATED_THRESHOLD_S = 3 * 60  # so twice that is already abnormal there
QUEUE_SUGGEST_S = 30 * 60  # past this, suggest another flavor or region
LOG_STALL_S = 10 * 60  # no new startup-log output for this long while the pool is healthy
LARGE_DATA_GB = 100  # object storage beyond this: use a parallel file system

PROBE = "echo test && ls /obs/<bucket>/"
_QUEUE_EVENT = re.compile(r"queuing and awaiting resource allocation|[Ww]aiting for (?:the )?resources?", re.I)
_STARTED = re.compile(r"\bStarted: Started container|training started|Training job is running", re.I)
_OBS_TIMEOUT = re.compile(r"(?:Connect(?:ion)? timeout|Read timeout|timed out).*\bobs[.-]|Unable to connect to endpoint", re.I)
_SIZE_GB = re.compile(r"\(?(\d+(?:\.\d+)?)\s*(GB|GiB|TB|TiB)\b")

# Labels whose hits are symptoms, not causes, for a training job.
_IGNORED = {"application_error"}
# Slurm-flavoured labels the catalogue gives that read differently inside a ModelArts container.
_RELABEL = {"command_not_found": "container_entrypoint_failed"}


@dataclass(frozen=True, slots=True)
class _Hit:
    label: str
    severity: Severity
    evidence: Evidence
    text: str


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
        return f"Initializing {_mins(age)} min" if age is not None else "Initializing"
    return job.console_phase


def stuck_where(job: TrainingJob) -> str:
    """Where an Initializing job is: scheduling | image pull | mount | boot command | preparing."""
    last = job.stages[-1] if job.stages else None
    texts = " ".join(e.message for e in job.events)
    if last is not None and last.name == "scheduling" and last.end_time is None:
        return "scheduling"
    if last is None and (job.secondary_phase == "Queuing" or _QUEUE_EVENT.search(texts)):
        return "scheduling"
    subs = " ".join(last.sub_stages).lower() if last else ""
    warn = " ".join(e.message for e in job.events if e.level.lower() in {"warning", "error"})
    if re.search(r"mount|volume", warn, re.I) or "mount" in subs or "volume" in subs:
        if not re.search(r"pull|image", warn, re.I) or re.search(r"FailedMount", warn):
            return "mount"
    if re.search(r"pull|ImagePull|image", warn, re.I) or "image" in subs:
        return "image pull"
    if _STARTED.search(texts) or "boot" in subs:
        return "boot command"
    return last.name if last else "preparing"


def _hits(job: TrainingJob, ctx: RuleContext) -> Iterator[_Hit]:
    """Strong catalogue hits for this job: events, task statuses, startup log, bundle logs."""
    for ev in job.events:
        p = classify(ev.message.encode("utf-8", "replace"), "events")
        if p is not None and p.strong and p.label not in _IGNORED:
            t = ev.time.isoformat() if ev.time else "-"
            yield _Hit(_RELABEL.get(p.label, p.label), p.severity,
                       Evidence("events", f"{t} {ev.level} {ev.source} {ev.message}", tier=p.tier), ev.message)
    logs: list[tuple[str, str, bytes, int]] = []
    if job.log_preview:
        from cockpit.modelarts.source import log_path

        logs.append(("startup log", log_path(job.job_id, job.log_task or "worker-0"),
                     job.log_preview.encode("utf-8", "replace"), 1))
    for lt in ctx.artifacts.logs:
        if lt.subject_id in ("", job.job_id) and lt.kind in {"startup", "app", "stdout", "stderr", "events"}:
            if lt.subject_id == job.job_id and ((job.log_preview and lt.kind == "startup") or
                                                (job.events and lt.kind == "events")):
                continue  # rendered from this job: already scanned
            logs.append((lt.name, lt.path, lt.data, lt.base_line or 1))
    for where, path, data, base in logs:
        for n, h in enumerate(iter_errors(data, kind="startup")):
            if n > 200:
                break
            if not h.strong and _OBS_TIMEOUT.search(h.text):
                h = dataclasses.replace(h, label="storage_connection_error", severity="critical", strong=True)
            if not h.strong or h.label in _IGNORED:
                continue
            yield _Hit(_RELABEL.get(h.label, h.label), h.severity,  # type: ignore[arg-type]
                       Evidence(where, h.text, line=base + h.line - 1, path=path, offset=h.offset, tier=2), h.text)
    for ts in job.task_statuses:
        if ts.message:
            p = classify(ts.message.encode("utf-8", "replace"), "app")
            if p is not None and p.strong and p.label not in _IGNORED:
                yield _Hit(_RELABEL.get(p.label, p.label), p.severity,
                           Evidence("job status", f"{ts.task}: exit {ts.exit_code}: {ts.message}", tier=1), ts.message)


def _refine(hit: _Hit) -> _Hit:
    """A FailedMount event names the deeper cause in its text: access, read-only, timeout."""
    if hit.label != "storage_mount_failed":
        return hit
    t = hit.text
    if re.search(r"AccessDenied|\b403\b|Forbidden|[Pp]ermission denied", t):
        return _Hit("storage_access_denied", "critical", hit.evidence, t)
    if "Read-only file system" in t:
        return _Hit("storage_read_only", "critical", hit.evidence, t)
    if "waiting for the condition" in t:
        return hit  # kubelet's generic follow-on of a failed mount, not an OBS network problem
    if re.search(r"Connection timeout|Read timeout|timed out|Unable to connect to endpoint", t, re.I):
        return _Hit("storage_connection_error", "critical", hit.evidence, t)
    return hit


def _bucket(job: TrainingJob) -> str:
    for m in job.mounts:
        # v2 specs give OBS paths as obs://bucket/key or /bucket/key
        mm = re.match(r"obs://([^/\s]+)", m.remote) or (m.kind == "obs" and re.match(r"/([^/\s]+)", m.remote))
        if mm:
            return mm.group(1)
    return "<bucket>"


_IMAGE_IN_TEXT = re.compile(r'image "([^"]+)"')


def _phrase(label: str, job: TrainingJob, hit: _Hit) -> str:
    t = hit.text
    if label == "storage_access_denied":
        return "OBS mount AccessDenied" if re.search(r"mount|obsfs", t, re.I) else "OBS access denied"
    if label == "storage_mount_failed":
        kind = "EVS" if re.search(r"wrong fs type|evs", t, re.I) else "volume"
        return f"{kind} mount failed (FailedMount)" if "FailedMount" in t else f"{kind} mount failed"
    if label == "image_pull_failed":
        m = re.search(r"ImagePullBackOff|ErrImagePull", t) or re.search(r"denied|not found|manifest unknown", t)
        return f"image pull failed ({m.group(0)})" if m else "image pull failed"
    if label == "container_entrypoint_failed":
        return "boot command failed (exit 127)" if any(s.exit_code == 127 for s in job.task_statuses) or "127" in t \
            else "container failed at start"
    if label == "oom_killed":
        return "killed for memory (exit 137)"
    if label == "dependency_install_failed":
        return dependency_phrase(t)
    if label == "gpu_out_of_memory":
        return "NPU out of memory" if re.search(r"NPU|EL0004|Ascend|\[ERROR\] (?:RUNTIME|DRV|GE|HCCL)", t) \
            else "GPU out of memory"
    if label == "input_path_not_found":
        return "input path not found on OBS (NoSuchKey)" if re.search(r"404|NoSuchKey", t) else "input path not found"
    return {
        "storage_read_only": "write to a read-only file system",
        "storage_connection_error": "OBS connection timeout",
        "init_timeout": "preparation timed out",
        "nccl_communication_error": "NCCL communication error",
        "cuda_driver_mismatch": "CUDA driver too old for the image",
        "gpu_not_available": "no usable GPU",
        "gpu_hardware_error": "GPU hardware error",
        "disk_full": "no space left on device",
        "missing_shared_library": "shared library missing",
        "scheduling_constraint_unsatisfied": "no node satisfies the scheduling constraints",
        "queued_insufficient_resources": "insufficient resources",
        "queued_quota_limit": "quota limit",
        "mpi_network_error": "connection between workers failed",
    }.get(label, label.replace("_", " "))


def _remedy(label: str, job: TrainingJob, hit: _Hit) -> tuple[str, str]:
    """(explanation, remedy) for a label, with this job's bucket, image and paths filled in."""
    bucket = _bucket(job)
    probe = PROBE.replace("<bucket>", bucket)
    if label == "storage_access_denied":
        return ("OBS refused the ModelArts agency: it lacks OBS read rights on the bucket, or a bucket policy "
                "allows only certain accounts.",
                f"Grant the ModelArts agency obs:object:GetObject and obs:bucket:ListBucket on bucket {bucket} "
                "(Global Configuration > agency, or IAM), check the bucket policy; to verify, rerun with the boot "
                f"command `{probe}`.")
    if label == "storage_mount_failed":
        return ("A data volume did not mount, so the container cannot start.",
                "Check the mount paths: OBS under /obs/ (or /obs-ckpt/) in the container, bucket names are "
                "case-sensitive, no trailing space; EVS disks belong under /cache/ and need the right filesystem "
                f"type. Probe with the boot command `{probe}`.")
    if label == "storage_read_only":
        return ("The job writes into a mount that is read-only (an input, or a read-only volume).",
                "Write results to an output path (outputs[].local_dir) or to /cache, not into an input mount.")
    if label == "storage_connection_error":
        big = _SIZE_GB.search(hit.text) or _SIZE_GB.search(job.log_preview)
        gb = float(big.group(1)) * (1024 if big.group(2).startswith("T") else 1) if big else 0
        size = f" The data is {big.group(1)} {big.group(2)}, over {LARGE_DATA_GB} GB." if big and gb > LARGE_DATA_GB else ""
        return ("OBS timed out (network to the OBS endpoint), unlike EVS errors such as 'No such file or "
                f"directory' or 'wrong fs type'.{size}",
                "Retry; for data over 100 GB use a parallel file system (SFS Turbo / PFS) instead of object "
                "storage, or copy the data to /cache first.")
    if label == "image_pull_failed":
        m = _IMAGE_IN_TEXT.search(hit.text)
        image = m.group(1) if m else job.image
        return (f"The node cannot pull the image {image or '(not shown)'} .",
                "Check the image path: SWR organisation (project) name and tag spelling, and that the image is "
                "shared with this account; `docker pull` it from a machine logged in to SWR to confirm.")
    if label == "container_entrypoint_failed":
        return (f"The container exited at start: the boot command ({job.boot_command or 'not shown'}) or its "
                "interpreter (bash) is missing in the image.",
                "Run the job once on an official ModelArts base image with the boot command `echo test && sleep 60`; "
                "if that works, add bash to the custom image or start the command with /bin/sh.")
    if label == "oom_killed":
        return ("Exit code 137 means SIGKILL: the container ran out of memory.",
                "Reduce the batch size or the data held in memory, or choose a flavor with more memory.")
    if label == "dependency_install_failed":
        return DEPENDENCY_EXPLANATION, DEPENDENCY_REMEDY
    if label == "gpu_out_of_memory":
        return ("The accelerator's own memory (GPU/NPU HBM) ran out; a flavor with more host memory does not help.",
                "Use a smaller batch size with gradient accumulation, activation checkpointing or mixed precision, "
                "or a flavor with more (or larger) GPUs/NPUs; check npu-smi info / nvidia-smi for other processes "
                "holding device memory.")
    if label == "input_path_not_found":
        return ("The code or MoXing asked OBS for an object that does not exist (404 NoSuchKey).",
                "Check the OBS path spelling (bucket and object names are case-sensitive) and that the data was "
                "uploaded where the job points.")
    if label == "init_timeout":
        return ("Preparation timed out: cross-region algorithm synchronisation or shared-storage creation "
                "took too long.", "Keep algorithm, data and job in one region, then resubmit.")
    if label == "nccl_communication_error":
        return ("Collective communication between the workers failed.",
                "Check the network between the nodes (NCCL_SOCKET_IFNAME, MTU, RoCE/IB health) and resubmit.")
    if label == "cuda_driver_mismatch":
        return ("The image's CUDA runtime is newer than the pool's GPU driver.",
                "Use an image whose CUDA version the driver supports (an official ModelArts image for this flavor).")
    return ("", "")


# pip/conda still retrying (or DNS failing) in the last lines of the startup log: the job waits on a
# package index it cannot reach. Retry warnings earlier in a log that moved on are not a cause.
_DEP_STALL = re.compile(
    r"Retrying \(Retry\(.*(?:ConnectTimeoutError|NewConnectionError|ReadTimeoutError|ProxyError|"
    r"Temporary failure in name resolution|Name or service not known|Connection refused)|"
    r"Could not fetch URL https?://|CondaHTTPError|HTTP 000 CONNECTION FAILED|"
    r"Could not find a version that satisfies the requirement|No matching distribution found for|"
    r"PackagesNotFoundError|ResolvePackageNotFound")
_DEP_HOST = re.compile(r"Connection to ([\w.-]+) timed out|host='([\w.-]+)'|https?://([\w.-]+)")
_DEP_WHAT = re.compile(r"ConnectTimeoutError|ReadTimeoutError|NewConnectionError|ProxyError|"
                       r"Temporary failure in name resolution|Name or service not known|Connection refused|"
                       r"CondaHTTPError|No matching distribution found for \S+|"
                       r"Could not find a version that satisfies the requirement \S+")
DEP_TAIL_LINES = 5  # the last non-empty startup-log lines that must carry the cause
DEPENDENCY_EXPLANATION = ("Python/conda dependencies could not be installed at startup: the package index is "
                          "unreachable from the training nodes, or the package/version does not exist there.")
DEPENDENCY_REMEDY = ("Pin a mirror reachable from the pool's network (pip config set global.index-url <mirror> "
                     "/ PIP_INDEX_URL, conda channels in .condarc), check the package name and version, or bake "
                     "the dependencies into the image (pip install -r requirements.txt in the Dockerfile, push "
                     "to SWR) so nothing is downloaded at boot.")


def dependency_phrase(text: str) -> str:
    """'pip cannot reach repo.huaweicloud.com (ConnectTimeoutError)' from a pip/conda line."""
    tool = "conda" if re.search(r"conda|Conda", text) else "pip"
    what = _DEP_WHAT.search(text)
    if what and what.group(0).startswith(("No matching", "Could not find")):
        return f"{tool}: {what.group(0)}"
    m = _DEP_HOST.search(text)
    host = next((g for g in m.groups() if g), "") if m else ""
    why = f" ({what.group(0)})" if what else ""
    return f"{tool} cannot reach {host or 'the package index'}{why}"


def dependency_stall(job: TrainingJob) -> tuple[int, str] | None:
    """(1-based line, text) of a pip/conda failure among the last :data:`DEP_TAIL_LINES` non-empty
    lines of the startup log, the latest such line; None when the log moved past it."""
    lines = job.log_preview.splitlines()
    tail = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip()][-DEP_TAIL_LINES:]
    for n, ln in reversed(tail):
        if _DEP_STALL.search(ln):
            return n, ln.strip()
    return None


# --------------------------------------------------------------------------- training-job rules


_SPECIFIC_STORAGE = ("storage_access_denied", "storage_read_only", "storage_path_invalid", "storage_connection_error")


@rule("training_job")
def job_errors(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """One finding per cause named by an event, a task status, the startup log or an exit code."""
    if job.phase in {"Running", "Completed"} and not is_initializing(job):
        return
    by_label: dict[str, list[_Hit]] = {}
    for raw in _hits(job, ctx):
        hit = _refine(raw)
        if hit.label in {"queued_insufficient_resources"}:
            continue  # the queue rule owns it
        by_label.setdefault(hit.label, []).append(hit)
    for ts in job.task_statuses:
        label = {137: "oom_killed", 127: "container_entrypoint_failed"}.get(ts.exit_code or 0)
        if label:
            ev = Evidence("job status", f"{ts.task}: exit code {ts.exit_code}" + (f" ({ts.message})" if ts.message else ""),
                          tier=1)
            by_label.setdefault(label, []).append(_Hit(label, "critical", ev, ts.message or str(ts.exit_code)))
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
        explanation, remedy = _remedy(label, job, first)
        if label == "image_pull_failed" and job.image:
            explanation += f" Job image: {job.image}."
        seen: set[str] = set()
        evidence = []
        for h in hits:
            if h.evidence.text not in seen:
                seen.add(h.evidence.text)
                evidence.append(h.evidence)
        yield Finding(
            root_cause=label,
            severity=first.severity,
            subject=_subject(job, ctx),
            title=f"{prefix}: {_phrase(label, job, _Hit(label, first.severity, first.evidence, ' '.join(h.text for h in hits)))}",
            explanation=explanation.strip(),
            remedy=remedy,
            evidence=tuple(evidence[:5]),
            confidence=max(0.5, 0.9 - 0.05 * rank),
            first_seen=job.create_time,
            related=related,
        )


def _queued(job: TrainingJob, ctx: RuleContext | None = None) -> tuple[bool, Evidence | None]:
    """Is the job waiting in the queue? With the best evidence: an events line (a bundle's
    events file first, with its line number), the open scheduling stage, or the phase pair."""
    for lt in ctx.artifacts.logs if ctx else ():
        if lt.kind == "events" and lt.subject_id in ("", job.job_id):
            for i, line in enumerate(lt.data.decode("utf-8", "replace").splitlines()):
                if _QUEUE_EVENT.search(line):
                    return True, Evidence(lt.name, line.strip(), line=(lt.base_line or 1) + i, path=lt.path, tier=0)
    for ev in job.events:
        if _QUEUE_EVENT.search(ev.message):
            t = ev.time.isoformat() if ev.time else "-"
            return True, Evidence("events", f"{t} {ev.level} {ev.source} {ev.message}", tier=0)
    if job.stages and job.stages[-1].name == "scheduling" and job.stages[-1].end_time is None:
        return True, Evidence("stages", "stage scheduling still open" + (
            f" since {job.stages[-1].start_time.isoformat()}" if job.stages[-1].start_time else ""), tier=0)
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
    need = f"flavor {job.flavor_id} needs per node: {acc or 0} {unit}, {cpus or '?'} CPU, " \
           f"{(mem or 0) // 1024} GiB x {k} node(s)"
    have = f"largest free on one node: {big_acc} {unit}, {big_cpu:g} CPU, {big_mem} GiB"
    return fit, total_ok, f"{need}; {have}"


@rule("training_job")
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
    explanation = (f"The job is waiting for free {kind}-pool capacity for its flavor "
                   f"{job.flavor_id or '(unknown)'}; nothing is broken.")
    if pool is not None and pool.nodes:
        fit, total_ok, text = _fits(job, pool)
        evidence.append(Evidence("pool nodes", f"pool {pool.name}: {fit} node(s) fit; {text}", tier=1))
        if fit < max(1, job.node_count) and total_ok:
            return  # pool_fragmented below says it better
    if pool is not None and job.flavor_id in pool.max_available:
        cpu, mem_gb = pool.max_available[job.flavor_id]
        evidence.append(Evidence("training-pool-flavors", f"max available for {job.flavor_id}: {cpu} CPU, {mem_gb} GB",
                                 tier=1))
    if not job.pool_public:
        explanation += " The training queue is FIFO: a larger job ahead blocks smaller ones even when cards are free."
    remedy = "Wait; the job starts when capacity frees up."
    if age >= QUEUE_SUGGEST_S:
        remedy = ("Queued over 30 min: choose a flavor with fewer cards, another region, or a dedicated pool "
                  "(or free capacity in this one).")
    sev: Severity = "warning" if age >= INIT_THRESHOLD_S else "info"
    yield Finding(
        root_cause="queued_insufficient_resources",
        severity=sev,
        subject=_subject(job, ctx),
        title=f"Queued {_mins(age)} min for resources ({kind} pool{' ' + pool.name if pool else ''})",
        explanation=explanation,
        remedy=remedy,
        evidence=tuple(evidence),
        confidence=0.85,
        first_seen=since,
        related=(Subject("pool", ctx.snapshot.source, pool.pool_id),) if pool else (),
    )


@rule("training_job")
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
        title=f"{_prefix(job, ctx.now)}: pool {pool.name} fragmented, no node fits {job.flavor_id}",
        explanation=f"Pool {pool.name} has enough free resources in total, but spread over nodes: {text}.",
        remedy="Choose a smaller flavor (fewer cards per node, more nodes), wait for a node to drain, or move "
               "running jobs to free one whole node.",
        evidence=(Evidence("pool nodes", f"pool {pool.name}: {fit} node(s) fit; {text}", tier=1),),
        confidence=0.8 if age >= init_threshold_s(job) else 0.6,
        first_seen=job.create_time,
        related=(Subject("pool", ctx.snapshot.source, pool.pool_id),),
    )


@rule("training_job")
def job_initializing_too_long(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Initializing past the threshold with no named cause: say where it is, and whether the
    startup log has gone quiet while the pool is healthy (time to intervene)."""
    if not is_initializing(job):
        return
    age = _age_s(job.create_time, ctx.now)
    if age is None or age < init_threshold_s(job) or _queued(job, ctx)[0]:
        return
    if any(_refine(h).label not in {"queued_insufficient_resources"} for h in _hits(job, ctx)):
        return  # job_errors names the cause
    if path_problems(job):
        return  # job_paths names the cause
    where = stuck_where(job)
    pool = _pool_of(job, ctx)
    stall = dependency_stall(job)
    if stall is not None:
        from cockpit.modelarts.source import log_path

        line, text = stall
        yield Finding(
            root_cause="dependency_install_failed", severity="critical", subject=_subject(job, ctx),
            title=f"Initializing {_mins(age)} min: stuck at {where}: {dependency_phrase(text)}",
            explanation=DEPENDENCY_EXPLANATION + f" The startup log ends on it (line {line}).",
            remedy=DEPENDENCY_REMEDY,
            evidence=(Evidence("startup log", text, line=line, path=log_path(job.job_id, job.log_task or "worker-0"),
                               tier=2),),
            confidence=0.85, first_seen=job.create_time,
            related=(Subject("pool", ctx.snapshot.source, pool.pool_id),) if pool else (),
        )
        return
    healthy = pool is None or (pool.phase in {"", "Running"} and not any(n.phase == "Abnormal" for n in pool.nodes))
    evidence = []
    if job.stages:
        s = job.stages[-1]
        evidence.append(Evidence("stages", f"stage {s.name} " + ("open" if s.end_time is None else "ended") +
                                 (f" since {s.start_time.isoformat()}" if s.start_time else "") +
                                 (f", sub-stages: {', '.join(s.sub_stages)}" if s.sub_stages else ""), tier=0))
    for ev in job.events[-1:]:
        evidence.append(Evidence("events", f"last event: {ev.message}", tier=0))
    normal = ("dedicated pools normally leave Initializing within 1.5 min" if not job.pool_public
              else "public pools normally take seconds to a few minutes")
    title = f"Initializing {_mins(age)} min: stuck at {where}"
    remedy = ("Open the startup log and the events; if nothing moves, stop the job and rerun with the boot "
              f"command `{PROBE.replace('<bucket>', _bucket(job))}` (mount) or `echo test && sleep 60` (image).")
    quiet = _age_s(job.log_changed_at, ctx.now)
    if quiet is not None and quiet >= LOG_STALL_S and healthy:
        title += f", no startup-log output for {_mins(quiet)} min"
        evidence.append(Evidence("startup log", f"no new output since {job.log_changed_at.isoformat()}", tier=2))  # type: ignore[union-attr]
        remedy = "Intervene: the pool is healthy but the job is silent. " + remedy
    yield Finding(
        root_cause="init_timeout",
        severity="critical" if age >= 3 * init_threshold_s(job) else "warning",
        subject=_subject(job, ctx),
        title=title,
        explanation=f"The job has been Initializing for {_mins(age)} min ({normal}); it is at: {where}.",
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
        for what, p in (("OBS path", m.remote), ("container path", m.local)):
            if p and p != p.rstrip():
                out.append(f"{label}: {what} {p!r} ends with a space")
            if p and _FILE_LIKE.search(p.rstrip()):
                out.append(f"{label}: {what} {p!r} names a file but ends with '/'")
            if p.startswith("obs://") and "//" in p[6:]:
                out.append(f"{label}: {what} {p!r} has an empty path segment '//'")
        bm = re.match(r"obs://([^/]+)", m.remote) or re.match(r"/obs(?:-ckpt)?/([^/]+)", m.local)
        if bm and bm.group(1) != bm.group(1).lower():
            out.append(f"{label}: bucket {bm.group(1)!r} has capitals; OBS bucket names are lower case "
                       "and case-sensitive")
        if m.direction == "volume" and m.kind == "obs" and m.local and not re.match(r"/obs(?:-ckpt)?/", m.local):
            out.append(f"{label}: OBS volume mounted at {m.local!r}; OBS paths in the container must start with "
                       "/obs/ (or /obs-ckpt/)")
        if m.kind == "evs" and m.local and not m.local.startswith("/cache"):
            out.append(f"{label}: EVS volume at {m.local!r}; EVS disks are normally mounted under /cache/")
    return out


@rule("training_job")
def job_paths(job: TrainingJob, ctx: RuleContext) -> Iterator[Finding]:
    """Mount and data paths malformed in the job spec (trailing space/slash, bucket case,
    OBS volume not under /obs/, EVS not under /cache/)."""
    if job.phase in {"Running", "Completed"} and not is_initializing(job):
        return
    problems = path_problems(job)
    if not problems:
        return
    yield Finding(
        root_cause="storage_path_invalid",
        severity="warning",
        subject=_subject(job, ctx),
        title=f"{_prefix(job, ctx.now)}: data path malformed ({problems[0].split(': ', 1)[1][:80]})",
        explanation="A data or mount path in the job spec will not resolve as written.",
        remedy=f"Fix the paths in the job (no trailing space, lower-case bucket, OBS under /obs/, EVS under /cache/); "
               f"verify with the boot command `{PROBE.replace('<bucket>', _bucket(job).lower())}`.",
        evidence=tuple(Evidence("job spec", p, tier=0) for p in problems[:5]),
        confidence=0.7,
        first_seen=job.create_time,
    )


# --------------------------------------------------------------------------- pool rules


@rule("pool")
def pool_abnormal_nodes(pool: Pool, ctx: RuleContext) -> Iterator[Finding]:
    """Dedicated pool nodes that are Abnormal (or a pool reporting abnormal resources)."""
    bad = [n for n in pool.nodes if n.phase == "Abnormal"]
    count = len(bad) or (pool.abnormal or 0)
    if not count and pool.phase not in {"Abnormal", "Error"}:
        return
    total = len(pool.nodes) or None
    names = ", ".join(n.name for n in bad[:5])
    waiting = [j for j in ctx.snapshot.training_jobs if j.pool_id == pool.pool_id and is_initializing(j)]
    evidence = [Evidence("pool nodes", f"{n.name} {n.phase} {n.private_ip}".strip(), tier=1) for n in bad[:5]]
    if pool.phase in {"Abnormal", "Error"}:
        evidence.insert(0, Evidence("pools", f"pool {pool.name} phase {pool.phase} {pool.message}".strip(), tier=1))
    yield Finding(
        root_cause="pool_node_abnormal",
        severity="critical" if (total and count >= total) or waiting else "warning",
        subject=Subject("pool", ctx.snapshot.source, pool.pool_id),
        title=f"Pool {pool.name}: {count}{f' of {total}' if total else ''} node(s) Abnormal"
              + (f" ({names})" if names else ""),
        explanation="Abnormal nodes take no training jobs, so the pool has less capacity than it shows."
                    + (f" {len(waiting)} job(s) are Initializing on this pool." if waiting else ""),
        remedy="Check the nodes in the ModelArts console (Resource pools > Nodes); reset or replace them, or "
               "contact support if hardware is faulty.",
        evidence=tuple(evidence),
        confidence=0.9,
        related=tuple(Subject("training_job", ctx.snapshot.source, j.job_id, name=j.name) for j in waiting),
    )
