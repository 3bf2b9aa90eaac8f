"""What a training job's events, task statuses and logs say went wrong, and how to say it.

:func:`cause_hits` classifies every line with the shared catalogue
(:mod:`cockpit.diagnosis.patterns`), so bundles, the TUI and the CLI agree;
:func:`cause_phrase` and :func:`cause_remedy` turn a cause into a verdict title, an
explanation and a remedy with this job's bucket, image and paths filled in. The rules
that use them are in :mod:`cockpit.diagnosis.rules.modelarts`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cockpit.diagnosis import k8s_reasons
from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.label_words import label_words
from cockpit.diagnosis.logscan import ScanHit, iter_errors
from cockpit.diagnosis.patterns import classify
from cockpit.diagnosis.rules import ascend, containers, gpu_host
from cockpit.diagnosis.rules.platform_logs import JOB_LOG_KINDS, Explained
from cockpit.i18n import N_, _
from cockpit.model import Evidence, Severity, TrainingJob, training_log_path

LARGE_DATA_GB = 100  # object storage beyond this: use a parallel file system
PROBE = "echo test && ls /obs/<bucket>/"  # a boot command that shows whether the bucket mounts
_OBS_TIMEOUT = re.compile(
    r"(?:Connect(?:ion)? timeout|Read timeout|timed out).*\bobs[.-]|Unable to connect to endpoint",
    re.I,
)
_SIZE_GB = re.compile(r"\(?(\d+(?:\.\d+)?)\s*(GB|GiB|TB|TiB)\b")

# Labels whose hits are symptoms, not causes, for a training job.
_IGNORED = {"application_error"}
# Slurm-flavoured labels the catalogue gives that read differently inside a ModelArts container.
_RELABEL = {"command_not_found": "container_entrypoint_failed"}


@dataclass(frozen=True, slots=True)
class CauseHit:
    label: str
    severity: Severity
    evidence: Evidence
    text: str


def job_logs(job: TrainingJob, ctx: RuleContext) -> list[tuple[str, str, bytes, int]]:
    """(where, path, bytes, first line number) of every log of this job: the startup log
    preview and the bundle's events/app logs for it (those rendered from the job skipped)."""
    logs: list[tuple[str, str, bytes, int]] = []
    if job.log_preview:
        logs.append(
            (
                "startup log",
                training_log_path(job.job_id, job.log_task or "worker-0"),
                job.log_preview.encode("utf-8", "replace"),
                1,
            )
        )
    for lt in ctx.artifacts.logs:
        if lt.subject_id in ("", job.job_id) and lt.kind in JOB_LOG_KINDS:
            if lt.subject_id == job.job_id and (
                (job.log_preview and lt.kind == "startup") or (job.events and lt.kind == "events")
            ):
                continue  # rendered from this job: already scanned
            logs.append((lt.name, lt.path, lt.data, lt.base_line or 1))
    return logs


def cause_hits(job: TrainingJob, ctx: RuleContext) -> Iterator[CauseHit]:
    """Strong catalogue hits for this job: events, task statuses, startup log, bundle logs."""
    for ev in job.events:
        p = classify(ev.message.encode("utf-8", "replace"), "events")
        if p is not None and p.strong and p.label not in _IGNORED:
            t = ev.time.isoformat() if ev.time else "-"
            yield CauseHit(
                _RELABEL.get(p.label, p.label),
                p.severity,
                Evidence(  # the event as the events log prints it
                    "events", f"{t} {ev.level} {ev.source} {ev.message}", tier=p.tier, quoted=True
                ),
                ev.message,
            )
    logs = job_logs(job, ctx)
    for where, path, data, base in logs:
        named = False
        symptom: ScanHit | None = None  # a CANN internal code, an AI Core exception, ...
        for n, h in enumerate(iter_errors(data, kind="startup")):
            if n > 200:
                break
            if not h.strong and _OBS_TIMEOUT.search(h.text):
                h = dataclasses.replace(
                    h, label="storage_connection_error", severity="critical", strong=True
                )
            if not h.strong or h.label in _IGNORED:
                if symptom is None and h.pattern in ascend.NAMES:
                    symptom = h
                continue
            named = True
            yield CauseHit(
                _RELABEL.get(h.label, h.label),
                h.severity,  # type: ignore[arg-type]
                _log_line(where, h, base, path),
                h.text,
            )
        if not named and symptom is not None:  # the best the log says, when nothing names more
            h = symptom
            yield CauseHit(
                h.label,
                "critical",
                _log_line(where, h, base, path),
                h.text,
            )
    for ts in job.task_statuses:
        if ts.message:
            p = classify(ts.message.encode("utf-8", "replace"), "app")
            if p is not None and p.strong and p.label not in _IGNORED:
                yield CauseHit(
                    _RELABEL.get(p.label, p.label),
                    p.severity,
                    Evidence("job status", task_exit(ts.task, ts.exit_code, ts.message), tier=1),
                    ts.message,
                )


def refine(hit: CauseHit) -> CauseHit:
    """A FailedMount event names the deeper cause in its text: access, read-only, timeout."""
    if hit.label != "storage_mount_failed":
        return hit
    t = hit.text
    if re.search(r"AccessDenied|\b403\b|Forbidden|[Pp]ermission denied", t):
        return CauseHit("storage_access_denied", "critical", hit.evidence, t)
    if "Read-only file system" in t:
        return CauseHit("storage_read_only", "critical", hit.evidence, t)
    if "waiting for the condition" in t:
        return hit  # kubelet's generic follow-on of a failed mount, not an OBS network problem
    if re.search(
        r"Connection timeout|Read timeout|timed out|Unable to connect to endpoint", t, re.I
    ):
        return CauseHit("storage_connection_error", "critical", hit.evidence, t)
    return hit


def obs_bucket(job: TrainingJob) -> str:
    for m in job.mounts:
        # v2 specs give OBS paths as obs://bucket/key or /bucket/key
        mm = re.match(r"obs://([^/\s]+)", m.remote) or (
            m.kind == "obs" and re.match(r"/([^/\s]+)", m.remote)
        )
        if mm:
            return mm.group(1)
    return "<bucket>"


_IMAGE_IN_TEXT = re.compile(r'image "([^"]+)"')


def platform_explain(label: str, text: str) -> Explained | None:
    """The Ascend/Kubernetes/GPU-host reading of ``text`` when it names ``label``."""
    for explain in (ascend.explain, containers.explain, gpu_host.explain):
        e = explain(text)
        if e is not None and e.label == label:
            return e
    return None


# Labels whose title and remedy are written here with the job's bucket, image and command.
_JOB_AWARE = {
    "storage_access_denied",
    "storage_mount_failed",
    "storage_read_only",
    "storage_connection_error",
    "image_pull_failed",
    "container_entrypoint_failed",
    "oom_killed",
    "dependency_install_failed",
    "gpu_out_of_memory",
    "input_path_not_found",
    "init_timeout",
}


def cause_phrase(label: str, job: TrainingJob, hit: CauseHit) -> str:
    t = hit.text
    if label not in _JOB_AWARE and (e := platform_explain(label, t)) is not None:
        return e.phrase
    if label == "storage_access_denied":
        return (
            _("OBS mount AccessDenied")
            if re.search(r"mount|obsfs", t, re.I)
            else _("OBS access denied")
        )
    if label == "storage_mount_failed":
        evs = bool(re.search(r"wrong fs type|evs", t, re.I))
        return {
            (True, True): _("EVS mount failed (FailedMount)"),
            (True, False): _("EVS mount failed"),
            (False, True): _("volume mount failed (FailedMount)"),
            (False, False): _("volume mount failed"),
        }[evs, "FailedMount" in t]
    if label == "image_pull_failed":
        m = re.search(r"ImagePullBackOff|ErrImagePull", t) or re.search(
            r"denied|not found|manifest unknown", t
        )
        return (
            _("image pull failed ({why})").format(why=m.group(0)) if m else _("image pull failed")
        )
    if label == "container_entrypoint_failed":
        return (
            _("exit 127: boot command not found")
            if any(s.exit_code == 127 for s in job.task_statuses) or "127" in t
            else _("container failed at start")
        )
    if label == "oom_killed":
        return _("killed for memory (exit 137)")
    if label == "dependency_install_failed":
        return dependency_phrase(t)
    if label == "gpu_out_of_memory":
        return (
            _("NPU out of memory")
            if re.search(r"NPU|EL0004|Ascend|\[ERROR\] (?:RUNTIME|DRV|GE|HCCL)", t)
            else _("GPU out of memory")
        )
    if label == "input_path_not_found":
        return (
            _("input path not found on OBS (NoSuchKey)")
            if re.search(r"404|NoSuchKey", t)
            else _("input path not found")
        )
    phrase = _PHRASES.get(label)
    return _(phrase) if phrase else label_words(label)


_PHRASES = {
    "storage_read_only": N_("write to a read-only file system"),
    "storage_connection_error": N_("OBS connection timeout"),
    "init_timeout": N_("preparation timed out"),
    "nccl_communication_error": N_("NCCL communication error"),
    "cuda_driver_mismatch": N_("CUDA driver too old for the image"),
    "gpu_not_available": N_("no usable GPU"),
    "accelerator_busy": N_("the accelerator is held by another process or container"),
    "gpu_hardware_error": N_("GPU hardware error"),
    "disk_full": N_("no space left on device"),
    "missing_shared_library": N_("shared library missing"),
    "library_version_mismatch": N_("library version mismatch (glibc / toolkit release)"),
    "python_module_missing": N_("Python package missing"),
    "conda_shell_not_initialised": N_("conda's shell hook not set up in this shell"),
    "open_files_limit": N_("too many open files (the open-files limit)"),
    "storage_file_lock_failed": N_("the file system refused a file lock (HDF5)"),
    "scheduling_constraint_unsatisfied": N_("no node satisfies the scheduling constraints"),
    "queued_insufficient_resources": N_("insufficient resources"),
    "queued_quota_limit": N_("quota limit"),
    "mpi_network_error": N_("connection between workers failed"),
}


def cause_remedy(label: str, job: TrainingJob, hit: CauseHit) -> tuple[str, str]:
    """(explanation, remedy) for a label, with this job's bucket, image and paths filled in."""
    e = platform_explain(label, hit.text)
    if e is not None and (label not in _JOB_AWARE or _names_code(e)):
        return e.explanation, e.remedy
    explanation, remedy = _job_remedy(label, job, hit)
    r = k8s_reasons.describe(hit.text) if label == "image_pull_failed" else None
    # the registry said why: lead with that
    if r is not None and r.name not in ("image_pull", "image_pull_backoff"):
        why = _(r.what).split(": ", 1)[-1]
        explanation += " " + _("{why}.").format(why=f"{why[0].upper()}{why[1:]}")
        # its remedy alone: the label's own said the same things again after it (the tag's
        # spelling twice, in one paragraph)
        remedy = _(r.remedy)
    return explanation, remedy


def _names_code(e: Explained) -> bool:
    """A CANN code's own remedy says more than the label's (HCCL_BUFFSIZE for EI0007)."""
    return bool(re.match(r"E[0-9A-Z][0-9]{4} ", e.phrase))


def _job_remedy(label: str, job: TrainingJob, hit: CauseHit) -> tuple[str, str]:
    bucket = obs_bucket(job)
    probe = PROBE.replace("<bucket>", bucket)
    if label == "storage_access_denied":
        return (
            _(
                "OBS refused the ModelArts agency: it lacks OBS read rights on the bucket, or a "
                "bucket policy allows only certain accounts."
            ),
            _(
                "Grant the ModelArts agency obs:object:GetObject and obs:bucket:ListBucket on "
                "bucket {bucket} (Global Configuration > agency, or IAM), check the bucket policy; "
                "to verify, rerun with the boot command `{probe}`."
            ).format(bucket=bucket, probe=probe),
        )
    if label == "storage_mount_failed":
        return (
            _("A data volume did not mount, so the container cannot start."),
            _(
                "Check the mount paths: OBS under /obs/ (or /obs-ckpt/) in the container, bucket "
                "names are case-sensitive, no trailing space; EVS disks belong under /cache/ and "
                "need the right filesystem type. Probe with the boot command `{probe}`."
            ).format(probe=probe),
        )
    if label == "storage_read_only":
        return (
            _("The job writes into a mount that is read-only (an input, or a read-only volume)."),
            _(
                "Write results to an output path (outputs[].local_dir) or to /cache, not into an "
                "input mount."
            ),
        )
    if label == "storage_connection_error":
        big = _SIZE_GB.search(hit.text) or _SIZE_GB.search(job.log_preview)
        gb = float(big.group(1)) * (1024 if big.group(2).startswith("T") else 1) if big else 0
        size = (
            " "
            + _("The data is {size} {unit}, over {limit} GB.").format(
                size=big.group(1), unit=big.group(2), limit=LARGE_DATA_GB
            )
            if big and gb > LARGE_DATA_GB
            else ""
        )
        return (
            _(
                "OBS timed out (network to the OBS endpoint), unlike EVS errors such as 'No such "
                "file or directory' or 'wrong fs type'."
            )
            + size,
            _(
                "Retry; for data over 100 GB use a parallel file system (SFS Turbo / PFS) instead "
                "of object storage, or copy the data to /cache first."
            ),
        )
    if label == "image_pull_failed":
        m = _IMAGE_IN_TEXT.search(hit.text)
        image = m.group(1) if m else job.image
        return (
            _("The node cannot pull the image {image} .").format(image=image or _("(not shown)")),
            _(
                "Check the image path: SWR organisation (project) name and tag spelling, and that "
                "the image is shared with this account; `docker pull` it from a machine logged in "
                "to SWR to confirm."
            ),
        )
    if label == "container_entrypoint_failed":
        return (
            _(
                "The container exited at start: the boot command ({command}) or its interpreter "
                "(bash) is missing in the image."
            ).format(command=job.boot_command or _("not shown")),
            _(
                "Run the job once on an official ModelArts base image with the boot command `echo "
                "test && sleep 60`; if that works, add bash to the custom image or start the "
                "command with /bin/sh."
            ),
        )
    if label == "dependency_install_failed":
        return _(DEPENDENCY_EXPLANATION), _(DEPENDENCY_REMEDY)
    pair = _JOB_TEXTS.get(label)
    return (_(pair[0]), _(pair[1])) if pair else ("", "")


# label -> (explanation, remedy) that need nothing of the job
_JOB_TEXTS = {
    "oom_killed": (
        N_("Exit code 137 means SIGKILL: the container ran out of memory."),
        N_(
            "Reduce the batch size or the data held in memory, or choose a flavor with more memory."
        ),
    ),
    "gpu_out_of_memory": (
        N_(
            "The accelerator's own memory (GPU/NPU HBM) ran out; a flavor with more host memory "
            "does not help."
        ),
        N_(
            "Use a smaller batch size with gradient accumulation, activation checkpointing or "
            "mixed precision, or a flavor with more (or larger) GPUs/NPUs; check npu-smi info / "
            "nvidia-smi for other processes holding device memory."
        ),
    ),
    "input_path_not_found": (
        N_("The code or MoXing asked OBS for an object that does not exist (404 NoSuchKey)."),
        N_(
            "Check the OBS path spelling (bucket and object names are case-sensitive) and that "
            "the data was uploaded where the job points."
        ),
    ),
    "init_timeout": (
        N_(
            "Preparation timed out: cross-region algorithm synchronisation or shared-storage "
            "creation took too long."
        ),
        N_("Keep algorithm, data and job in one region, then resubmit."),
    ),
    "nccl_communication_error": (
        N_("Collective communication between the workers failed."),
        N_(
            "Check the network between the nodes (NCCL_SOCKET_IFNAME, MTU, RoCE/IB health) and "
            "resubmit."
        ),
    ),
    "cuda_driver_mismatch": (
        N_("The image's CUDA runtime is newer than the pool's GPU driver."),
        N_(
            "Use an image whose CUDA version the driver supports (an official ModelArts image "
            "for this flavor)."
        ),
    ),
}


# pip/conda still retrying (or DNS failing) in the last lines of the startup log: the job waits on a
# package index it cannot reach. Retry warnings earlier in a log that moved on are not a cause.
_DEP_STALL = re.compile(
    r"Retrying \(Retry\(.*(?:ConnectTimeoutError|NewConnectionError|ReadTimeoutError|ProxyError|"
    r"Temporary failure in name resolution|Name or service not known|Connection refused)|"
    r"Could not fetch URL https?://|CondaHTTPError|HTTP 000 CONNECTION FAILED|"
    r"Could not find a version that satisfies the requirement|No matching distribution found for|"
    r"PackagesNotFoundError|ResolvePackageNotFound"
)
_DEP_HOST = re.compile(r"Connection to ([\w.-]+) timed out|host='([\w.-]+)'|https?://([\w.-]+)")
_DEP_WHAT = re.compile(
    r"ConnectTimeoutError|ReadTimeoutError|NewConnectionError|ProxyError|"
    r"Temporary failure in name resolution|Name or service not known|Connection refused|"
    r"CondaHTTPError|No matching distribution found for \S+|"
    r"Could not find a version that satisfies the requirement \S+"
)
DEP_TAIL_LINES = 5  # the last non-empty startup-log lines that must carry the cause
DEPENDENCY_EXPLANATION = N_(
    "Python/conda dependencies could not be installed at startup: the package index is unreachable "
    "from the training nodes, or the package/version does not exist there."
)
DEPENDENCY_REMEDY = N_(
    "Pin a mirror reachable from the pool's network (pip config set global.index-url <mirror> / "
    "PIP_INDEX_URL, conda channels in .condarc), check the package name and version, or bake the "
    "dependencies into the image (pip install -r requirements.txt in the Dockerfile, push to SWR) "
    "so nothing is downloaded at boot."
)


def dependency_phrase(text: str) -> str:
    """'pip cannot reach repo.huaweicloud.com (ConnectTimeoutError)' from a pip/conda line."""
    tool = "conda" if re.search(r"conda|Conda", text) else "pip"
    what = _DEP_WHAT.search(text)
    if what and what.group(0).startswith(("No matching", "Could not find")):
        return f"{tool}: {what.group(0)}"
    m = _DEP_HOST.search(text)
    host = next((g for g in m.groups() if g), "") if m else ""
    why = f" ({what.group(0)})" if what else ""
    return _("{tool} cannot reach {host}{why}").format(
        tool=tool, host=host or _("the package index"), why=why
    )


def dependency_stall(job: TrainingJob) -> tuple[int, str] | None:
    """(1-based line, text) of a pip/conda failure among the last :data:`DEP_TAIL_LINES` non-empty
    lines of the startup log, the latest such line; None when the log moved past it."""
    lines = job.log_preview.splitlines()
    tail = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip()][-DEP_TAIL_LINES:]
    for n, ln in reversed(tail):
        if _DEP_STALL.search(ln):
            return n, ln.strip()
    return None


def _log_line(where: str, h: ScanHit, base: int, path: str) -> Evidence:
    """The log line of a scan hit, quoted as the log holds it."""
    return Evidence(
        where, h.text, line=base + h.line - 1, path=path, offset=h.offset, tier=2, quoted=True
    )


def task_exit(task: str, code: int | None, message: str) -> str:
    """A task's status as the engine says it: ``worker-0: exit 1: <its message>``."""
    return _("{task}: exit {code}: {message}").format(task=task, code=code, message=message)
