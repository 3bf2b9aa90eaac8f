"""Evidence of a job slurmctld no longer lists (past MinJobAge): what sacct and the store keep.

``scontrol show job ID`` answers ``Invalid job id specified`` MinJobAge seconds after the
end (300 s by default), and with it go the job's owner (UserId/GroupId) and its StdOut/StdErr
paths. slurmdbd still has the owner (User, UID, GID), WorkDir, the SubmitLine, the batch
script where the site stores it, and StdOut/StdErr from Slurm 24.05 on: :func:`acct_detail`
finds the output files from those (:mod:`cockpit.slurm.acct_paths`), so the same job-path
check (:mod:`cockpit.slurm.paths`) and log reads as before apply. :func:`merge_stored` adds
what the store captured when the failure was first seen and live sources no longer have.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from cockpit.model import Artifacts, Subject
from cockpit.slurm import hostlist
from cockpit.slurm.acct_paths import JobNames, output_candidates
from cockpit.slurm.backfill import split_rows
from cockpit.slurm.commands import (
    DETAIL_FIELDS,
    DETAIL_OPTIONAL,
    SACCT_HELPFORMAT_ARGV,
    sacct_detail_argv,
    sacct_script_argv,
)
from cockpit.slurm.errors import CommandFailed, err_text
from cockpit.slurm.paths import JobOwner, remember

if TYPE_CHECKING:
    from cockpit.slurm.source import SlurmSource

PATHS_MAX = 4096  # forgotten jobs whose output paths a source remembers
CANDIDATES_MAX = 6  # paths stat'ed to find which one a job wrote
# the fields every sacct since 20.11 prints (used when --helpformat cannot be read)
BASE_FIELDS = frozenset({*DETAIL_FIELDS, "WorkDir", "SubmitLine"})
NOT_STORED = (
    "not stored by this site (slurmdbd keeps batch scripts with AccountingStoreFlags=job_script)"
)


def forgotten(exc: object) -> bool:
    """``scontrol show job`` said the controller does not know the job (any more)."""
    return isinstance(exc, CommandFailed) and "Invalid job id" in exc.message


async def sacct_fields(src: SlurmSource) -> frozenset[str]:
    """The fields this site's sacct prints (``sacct --helpformat``), asked once per source."""
    if src._sacct_fields is None:
        try:
            out = await src._run(SACCT_HELPFORMAT_ARGV)
            fields = frozenset(out.split())
        except Exception:  # noqa: BLE001 - an old or odd sacct: the fields all versions have
            return BASE_FIELDS
        src._sacct_fields = fields if "JobID" in fields else BASE_FIELDS
    return src._sacct_fields


def parse_script(text: str) -> str:
    """The script in ``sacct -B -j ID`` output (``Batch Script for ID``, a rule of dashes,
    the script); "" when the site did not store it (sacct prints ``NONE``)."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:3]):
        if line.startswith("----"):
            body = "\n".join(lines[i + 1 :]).strip("\n")
            return "" if body.strip() in ("", "NONE") else body + "\n"
    return ""


async def _pick(src: SlurmSource, candidates: tuple[str, ...]) -> str:
    """The first candidate that exists (one candidate: it, unchecked: the read says)."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else ""
    for path in candidates[:CANDIDATES_MAX]:
        if not path.startswith("/") or "\x00" in path:
            continue
        try:
            await src.transport.stat(path)
        except Exception:  # noqa: BLE001 - not there (or not reachable): the next one
            continue
        return path
    return candidates[0]


async def acct_detail(src: SlurmSource, job_id: str, commands: dict[str, str]) -> bool:
    """The owner and output paths of a job slurmctld forgot, from sacct, remembered by ``src``
    (``note_owner``, ``_acct_paths``); what was asked goes into ``commands``. False when
    sacct has no record of the job either."""
    have = await sacct_fields(src)
    fields = [*DETAIL_FIELDS, *(f for f in DETAIL_OPTIONAL if f in have)]
    label = f"sacct -X -j {job_id} (job record)"
    script_label = f"sacct -B -j {job_id}"
    detail_res, script_res = await asyncio.gather(
        src._run(sacct_detail_argv(job_id, fields)),
        src._run(sacct_script_argv(job_id)),
        return_exceptions=True,
    )
    if not isinstance(detail_res, str):
        commands[f"error: {label}"] = err_text(detail_res)
        return False
    rows, _ = split_rows(detail_res, len(fields))
    row = next((dict(zip(fields, r, strict=True)) for r in rows if r[0].strip() == job_id), None)
    if row is None:
        commands[label] = detail_res or f"sacct has no record of job {job_id}\n"
        return False
    commands[label] = "".join(f"{k}: {v}\n" for k, v in row.items())
    script = ""
    if isinstance(script_res, str):
        script = parse_script(script_res)
        if script:
            commands[script_label] = script
        else:
            commands[f"note: {script_label}"] = f"batch script {NOT_STORED}"
    else:
        commands[f"error: {script_label}"] = err_text(script_res)
    uid, gid = row.get("UID", "").strip(), row.get("GID", "").strip()
    user = row.get("User", "").strip()
    if uid.isdigit():
        src.note_owner(job_id, JobOwner(user, int(uid), int(gid) if gid.isdigit() else None))
    node = row.get("NodeList", "").strip()
    if node in ("None assigned", "(null)"):
        node = ""
    if node:
        try:
            node = (hostlist.expand(node) or ("",))[0]
        except Exception:  # noqa: BLE001 - an odd list: %N stays empty
            node = ""
    names = JobNames(
        job_id=job_id,
        raw_id=row.get("JobIDRaw", "").strip(),
        user=user,
        name=row.get("JobName", ""),
        node=node,
        work_dir=row.get("WorkDir", "").strip(),
    )
    outs, errs = output_candidates(
        names,
        submit_line=row.get("SubmitLine", "").strip(),
        script=script,
        stdout_field=_field(row, "StdOut"),
        stderr_field=_field(row, "StdErr"),
    )
    out = await _pick(src, outs)
    err = await _pick(src, errs) if errs != outs else out
    remember(src._acct_paths, job_id, (out, err), PATHS_MAX)
    commands[f"note: scontrol show job {job_id}"] = (
        f"slurmctld no longer lists job {job_id} (past MinJobAge): its owner and output files "
        "come from sacct ("
        + ", ".join(f for f in ("WorkDir", "SubmitLine") if f in row)
        + (", batch script" if script else "")
        + (", StdOut" if _field(row, "StdOut") else "")
        + ")"
    )
    return True


def _field(row: dict[str, str], name: str) -> str:
    v = row.get(name, "").strip()
    return "" if v in ("", "(null)", "None", "Unknown") else v


async def stored_evidence(src: SlurmSource, job_id: str) -> Artifacts | None:
    """What the store kept of the job when it was first seen; None without a store, or when it
    has nothing or cannot answer (a store down never costs the live evidence)."""
    store: Any = src.evidence_store
    if store is None:
        return None
    try:
        got = await asyncio.to_thread(store.evidence, src.name, Subject("job", src.name, job_id))
    except Exception:  # noqa: BLE001 - the store's trouble is its own status line
        return None
    return got if isinstance(got, Artifacts) else None


def merge_stored(live: Artifacts, stored: Artifacts | None) -> Artifacts:
    """``live`` plus what only the store still has: its sacct rows when sacct returned none,
    logs ``live`` lacks (by kind and path: the output file since deleted, the slurmctld lines
    since rotated), and its command outputs under their labels (``scontrol show job`` as it
    answered then). Live evidence wins where both have it."""
    if stored is None:
        return live
    have = {(x.kind, x.path or x.name) for x in live.logs}
    have_kinds = {x.kind for x in live.logs}
    logs = list(live.logs)
    for x in stored.logs:
        if (x.kind, x.path or x.name) in have:
            continue
        if x.kind in ("stdout", "stderr") and x.kind in have_kinds:
            continue  # the live read of the same stream (perhaps by another path) wins
        logs.append(x)
    commands = dict(live.commands)
    for k, v in stored.commands.items():
        if k.startswith(("error: ", "note: ")) or k in commands:
            continue
        commands[k] = v
        commands.pop(f"error: {k}", None)
        if k.startswith("sacct"):  # its failure now, beside the rows kept then
            commands.pop(f"error: {k} (job record)", None)
    acct = live.acct or stored.acct
    if len(logs) > len(live.logs) or len(commands) > len(live.commands) or acct != live.acct:
        commands["note: stored evidence"] = (
            "evidence captured when the failure was first seen is shown where live "
            "sources no longer have it"
        )
    return dataclasses.replace(
        live,
        acct=acct,
        logs=tuple(logs),
        commands=commands,
        history=live.history or stored.history,
    )
