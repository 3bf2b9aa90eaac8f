"""Evidence for a Slurm job or node: sacct rows, ``scontrol show job``, the logs' lines.

What :class:`~cockpit.slurm.source.SlurmSource` fetches for a drill-down (``artifacts``) and
for the background round (``evidence``). The functions take the source for what belongs to
it: ``_run`` (the one door to the cluster, counted per command), the per-poll cache and job
details, the zone and the log paths of its config. A failure is reported in the Artifacts'
``commands`` under ``error: <what>``, never raised: the other evidence still comes.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from cockpit.errors import ParseError
from cockpit.model import AcctRecord, Artifacts, LogText, SlurmJob, Snapshot, Subject
from cockpit.safety import JOB_ID_RE, NODE_RE, validate_job_id, validate_node_name
from cockpit.slurm import hostlist
from cockpit.slurm.commands import sacct_argv, scontrol_job_argv
from cockpit.slurm.errors import err_text
from cockpit.slurm.forgotten import acct_detail, forgotten, merge_stored, stored_evidence
from cockpit.slurm.parse import parse_sacct, parse_scontrol_job, split_sacct, unfold_exits
from cockpit.slurm.paths import check_job_path, job_owner

if TYPE_CHECKING:
    from cockpit.slurm.source import SlurmSource

STDOUT_TAIL = 1 << 20  # bytes of stdout/stderr handed to the engine
CTLD_TAIL = 8 << 20  # bytes of slurmctld.log searched for a job's lines
SLURMD_TAIL = 4 << 20  # bytes of slurmd.log searched for a job's lines
NODE_TAIL = 1 << 20  # bytes of slurmd.log shown for a node


def _job_log_re(job_id: str) -> re.Pattern[bytes]:
    # Same forms the controller and slurmd print: JobId=13, job 13, JOB 13, [13.batch]
    j = re.escape(job_id.encode())
    # "[13.0]" step prefixes end in a dot, the named forms must not run into a longer id.
    return re.compile(
        rb"(?:(?:JobId=|StepId=|[Jj]ob |JOB )" + j + rb"(?![0-9])|\[" + j + rb"[.\]])"
    )


def grep_excerpt(
    name: str,
    kind: str,
    path: str,
    subject_id: str,
    data: bytes,
    offset: int,
    pattern: re.Pattern[bytes],
) -> LogText:
    """The lines of ``data`` (read at file byte ``offset``) that match ``pattern``, as a LogText.

    The lines are not contiguous, so each keeps its own file byte offset (``line_offsets``)
    and, when ``data`` starts the file (``offset`` 0), its file line number: evidence found
    in the excerpt then opens the full log at the right line. ``pattern`` must not match
    across a newline.
    """
    starts: list[int] = []
    numbers: list[int] = []
    chunks: list[bytes] = []
    line_no, counted_to, last = 1, 0, -1
    for m in pattern.finditer(data):
        ls = data.rfind(b"\n", 0, m.start()) + 1
        if ls == last:
            continue
        le = data.find(b"\n", m.end())
        le = len(data) if le < 0 else le + 1
        line_no += data.count(b"\n", counted_to, ls)
        counted_to, last = ls, ls
        starts.append(offset + ls)
        numbers.append(line_no)
        chunks.append(data[ls:le] if data[le - 1 : le] == b"\n" else data[ls:le] + b"\n")
    return LogText(
        name=name,
        kind=kind,
        data=b"".join(chunks),
        path=path,
        subject_id=subject_id,
        base_offset=offset,
        base_line=None,
        line_offsets=tuple(starts),
        line_numbers=tuple(numbers) if offset == 0 else (),
    )


def _node_log_re(node: str) -> re.Pattern[bytes]:
    n = re.escape(node.encode())
    return re.compile(rb"(?<![A-Za-z0-9])" + n + rb"(?![0-9A-Za-z])")


# --------------------------------------------------------------------------- log reads


async def _tail(src: SlurmSource, path: str, limit: int) -> tuple[bytes, int]:
    """Last ``limit`` bytes of ``path``, cut to whole lines; returns (data, file offset)."""
    st = await src.transport.stat(path)
    offset = max(0, st.size - limit)
    data = await src.transport.read_range(path, offset, st.size - offset)
    if offset > 0:
        nl = data.find(b"\n")
        if nl >= 0:
            data, offset = data[nl + 1 :], offset + nl + 1
    return data, offset


async def _tail_log(
    src: SlurmSource, name: str, kind: str, path: str, limit: int, subject_id: str
) -> LogText:
    if kind in ("stdout", "stderr"):  # a path the job chose: only what its user could read
        await check_job_path(src, path, await src.job_owner(subject_id))
    data, offset = await _tail(src, path, limit)
    return LogText(
        name=name,
        kind=kind,
        data=data,
        path=path,
        subject_id=subject_id,
        base_offset=offset,
        base_line=1 if offset == 0 else None,
    )


Tail = tuple[bytes, int] | BaseException  # a log tail read once for a round, or why not


async def _grep_log(
    src: SlurmSource,
    name: str,
    kind: str,
    path: str,
    limit: int,
    pattern: re.Pattern[bytes],
    subject_id: str,
    tail: Tail | None = None,
) -> LogText:
    """The lines of ``path``'s tail matching ``pattern``; ``tail``: the tail already read
    (the slurmctld.log of an evidence round, shared by all its subjects)."""
    if tail is None:
        tail = await _tail(src, path, limit)
    if isinstance(tail, BaseException):
        raise tail
    data, offset = tail
    # 80-100 ms per 8 MiB: never on the event loop (it draws the UI)
    return await asyncio.to_thread(
        grep_excerpt, name, kind, path, subject_id, data, offset, pattern
    )


async def ctld_tail(src: SlurmSource) -> Tail:
    """slurmctld.log's tail for one evidence round, or the error reading it."""
    await src.resolve_log_paths()
    try:
        return await _tail(src, src.slurmctld_log, CTLD_TAIL)
    except Exception as exc:  # noqa: BLE001 - every subject of the round reports it
        return exc


async def _gather_logs(tasks: list[tuple[str, Any]], commands: dict[str, str]) -> list[LogText]:
    results = await asyncio.gather(*(t for _, t in tasks), return_exceptions=True)
    logs: list[LogText] = []
    for (label, _), res in zip(tasks, results, strict=True):
        if isinstance(res, LogText):
            logs.append(res)
        else:
            commands[f"error: {label}"] = err_text(res)
    return logs


# --------------------------------------------------------------------------- per subject


def subject_fetcher(
    src: SlurmSource, subject: Subject, snapshot: Snapshot, **job_kw: Any
) -> Callable[[], Any] | None:
    """The evidence fetch of one job (:func:`job_artifacts` with ``job_kw``) or node, after its
    id is validated (ValueError); None for other kinds."""
    if subject.kind == "job":
        validate_job_id(subject.id)
        return partial(job_artifacts, src, subject.id, snapshot, **job_kw)
    if subject.kind == "node":
        validate_node_name(subject.id)
        return partial(node_artifacts, src, subject.id, ctld=job_kw.get("ctld"))
    return None


async def batch_evidence(
    src: SlurmSource,
    subjects: Iterable[Subject],
    snapshot: Snapshot,
    *,
    concurrency: int,
    timeout: float,
) -> dict[Subject, Artifacts | BaseException]:
    """:meth:`SlurmSource.evidence`: ONE ``sacct -j ID1,ID2,...`` for all the jobs, split per
    job (:func:`split_sacct`), then each subject's own fetch, ``concurrency`` at a time."""
    subjects = list(dict.fromkeys(subjects))
    ids = [
        s.id
        for s in subjects
        if s.kind == "job" and JOB_ID_RE.match(s.id) and (s.kind, s.id) not in src._cache
    ]
    acct: dict[str, str | BaseException] = {}
    if ids:
        try:
            acct.update(split_sacct(await src._run(sacct_argv(ids)), ids))
        except Exception as exc:  # noqa: BLE001 - each job reports it, its logs still come
            acct.update(dict.fromkeys(ids, exc))
    # slurmctld.log once for the round (8 MiB over SSH), not once per subject; only when a
    # subject will actually search it (one fetched earlier this poll is reused as it is)
    fresh = [s for s in subjects if s.kind in ("job", "node") and (s.kind, s.id) not in src._cache]
    ctld = await ctld_tail(src) if fresh else None
    sem = asyncio.Semaphore(concurrency)
    out: dict[Subject, Artifacts | BaseException] = {}

    async def one(s: Subject) -> None:
        async with sem:
            try:
                # acct_out None (fetched, then forgotten, since the batch was cut): its own sacct
                fetch = subject_fetcher(
                    src, s, snapshot, acct_out=acct.get(s.id), with_history=False, ctld=ctld
                )
                if fetch is None:
                    out[s] = Artifacts()
                    return
                out[s] = await asyncio.wait_for(src._shared((s.kind, s.id), fetch), timeout)
            except Exception as exc:  # noqa: BLE001 - one subject must not stop the others
                out[s] = exc

    await asyncio.gather(*(one(s) for s in subjects))
    return out


async def job_artifacts(
    src: SlurmSource,
    job_id: str,
    snapshot: Snapshot,
    acct_out: str | BaseException | None = None,
    with_history: bool = True,
    ctld: Tail | None = None,
) -> Artifacts:
    """One job's evidence. ``acct_out``: its rows of a batched sacct (:func:`batch_evidence`),
    or the batch's failure; None runs ``sacct -j ID`` here. ``with_history``: fetch the sacct
    history of an OUT_OF_MEMORY/TIMEOUT job (drill-down), not for background evidence.
    ``ctld``: the round's slurmctld.log tail (None: read it here)."""
    await src.resolve_log_paths()
    commands: dict[str, str] = {}
    job_cmd = scontrol_job_argv(job_id)
    if acct_out is None:
        sacct_res, job_res = await asyncio.gather(
            src._run(sacct_argv([job_id])), src._run(job_cmd), return_exceptions=True
        )
    else:
        sacct_res = acct_out
        job_res = (await asyncio.gather(src._run(job_cmd), return_exceptions=True))[0]
    acct: list[AcctRecord] = []
    label_s, label_j = f"sacct -j {job_id}", f"scontrol show job {job_id}"
    if isinstance(sacct_res, str):
        commands[label_s] = sacct_res
        try:
            acct = parse_sacct(sacct_res, src.tz, src.version)[0]
        except ParseError as exc:
            commands[f"error: {label_s}"] = str(exc)
    else:
        commands[f"error: {label_s}"] = err_text(sacct_res)
    if isinstance(job_res, str):
        commands[label_j] = job_res
        src.note_owner(job_id, job_owner(job_res))
        try:
            jobs = parse_scontrol_job(job_res, src.tz)[0]
            if jobs:
                src._detail[job_id] = jobs[0]
                # an old sacct's exit 137 reads 9:0: the controller's exact code settles it
                acct = unfold_exits(acct, jobs[0].exit_code)
        except ParseError as exc:
            commands[f"error: {label_j}"] = str(exc)
    elif not (forgotten(job_res) and await acct_detail(src, job_id, commands)):
        # past MinJobAge the controller forgot the job: acct_detail found its owner and
        # files in sacct instead, an answer (a note), not a failure to retry
        commands[f"error: {label_j}"] = err_text(job_res)
    job = src._detail.get(job_id) or src._find_job(snapshot, job_id)
    nodes: list[str] = list(job.nodes) if job else []
    if not nodes:
        for r in acct:
            if r.node_list:
                try:
                    nodes = list(hostlist.expand(r.node_list))
                except ParseError:
                    pass
                break
    nodes = [n for n in dict.fromkeys(nodes) if NODE_RE.match(n)][:8]
    out_path, err_path = src._job_paths(job, job_id)
    src.note_job_paths(job_id, out_path, err_path)
    tasks: list[tuple[str, Any]] = []
    # a job never placed on a node (pending, rejected at submit) has no output file yet: asking
    # for it printed "No such file" on every command for a job that never ran
    ran = bool(nodes) or bool(job and job.elapsed_s) or any(r.elapsed_s for r in acct)
    # nor a job whose launch failed (JobLaunchFailure: slurmstepd could not open its output,
    # chdir or become its user): 0 s on a node, no output; slurmd's log says why. Asking
    # printed "No such file (retrying)" on every snapshot
    if not ran or (job is not None and job.reason == "JobLaunchFailure"):
        out_path = err_path = ""
    if out_path.startswith("/"):
        name = out_path.rsplit("/", 1)[-1]
        tasks.append(("stdout", _tail_log(src, name, "stdout", out_path, STDOUT_TAIL, job_id)))
    if err_path.startswith("/") and err_path != out_path:
        name = err_path.rsplit("/", 1)[-1]
        tasks.append(("stderr", _tail_log(src, name, "stderr", err_path, STDOUT_TAIL, job_id)))
    jre = _job_log_re(job_id)
    ctld_lines = _grep_log(
        src, "slurmctld.log", "slurmctld", src.slurmctld_log, CTLD_TAIL, jre, job_id, ctld
    )
    tasks.append(("slurmctld.log", ctld_lines))
    for n in nodes:
        path = src._slurmd_path(n)
        name = path.rsplit("/", 1)[-1]
        tasks.append(
            (f"slurmd.log {n}", _grep_log(src, name, "slurmd", path, SLURMD_TAIL, jre, job_id))
        )
    logs = await _gather_logs(tasks, commands)
    history = await _history_for(src, job, acct, commands) if with_history else ()
    arts = Artifacts(acct=tuple(acct), logs=tuple(logs), commands=commands, history=history)
    if forgotten(job_res):  # what the store captured while the controller still knew the job
        arts = merge_stored(arts, await stored_evidence(src, job_id))
    return arts


async def _history_for(
    src: SlurmSource, job: SlurmJob | None, acct: list[AcctRecord], commands: dict[str, str]
) -> tuple[AcctRecord, ...]:
    """Past runs (same user + job name) of a job that ended OUT_OF_MEMORY / TIMEOUT: one sacct.

    Only for those two states: their remedy is a --mem / --time, which history sizes.
    A failure lands in ``commands`` as ``error: sacct history``.
    """
    from cockpit.diagnosis.rightsize import sizing_subject

    sized = sizing_subject(job, acct)
    if sized is None:
        return ()
    try:
        return tuple(await src.history(*sized))
    except (ValueError, ParseError) as exc:  # a name sacct cannot take; nothing to size from
        commands["error: sacct history"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - transport trouble must not lose the other evidence
        commands["error: sacct history"] = err_text(exc)
    return ()


async def node_artifacts(src: SlurmSource, node: str, ctld: Tail | None = None) -> Artifacts:
    """A node's evidence: its slurmd.log tail and the slurmctld.log lines naming it
    (``ctld``: the round's slurmctld.log tail; None: read it here)."""
    await src.resolve_log_paths()
    commands: dict[str, str] = {}
    path = src._slurmd_path(node)
    name = path.rsplit("/", 1)[-1]
    path_c = src.slurmctld_log
    tasks = [
        (f"slurmd.log {node}", _tail_log(src, name, "slurmd", path, NODE_TAIL, node)),
        (
            "slurmctld.log",
            _grep_log(
                src, "slurmctld.log", "slurmctld", path_c, CTLD_TAIL, _node_log_re(node), node, ctld
            ),
        ),
    ]
    logs = await _gather_logs(tasks, commands)
    return Artifacts(logs=tuple(logs), commands=commands)
