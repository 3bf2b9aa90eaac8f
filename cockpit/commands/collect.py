"""``cockpit collect JOBID --cluster NAME --out DIR``: write a job's evidence as a ticket bundle.

The directory holds ``squeue.txt``, ``sacct.txt``, ``scontrol-show-job.txt``,
``scontrol-show-node.txt`` (the job's nodes) and the log excerpts under their own names
(``slurm-4.out``, ``slurmctld.log``, ``slurmd-c3.log``), so ``cockpit diagnose --bundle DIR``
reads it back. For a job slurmctld has forgotten (MinJobAge) ``sacct-job-record.txt`` holds
what sacct still knew (WorkDir, SubmitLine) and ``batch-script.txt`` the script, where the
site stores it; ``collect-notes.txt`` says where each piece came from. Anything that looks
like a credential (AK/SK, tokens, passwords, private keys) is replaced by ``<redacted>``.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.model import Artifacts, Snapshot, Subject
from cockpit.safety import redact_bytes
from cockpit.slurm.commands import SACCT_FIELDS, SEP
from cockpit.text import clean


def redact(data: bytes) -> bytes:
    """Replace credentials (AK/SK, tokens, passwords, keys) in ``data`` with ``<redacted>``."""
    return redact_bytes(data)


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "collect",
        help=_("write a job's evidence as a bundle for a ticket"),
        description=__doc__.splitlines()[0],
    )
    add_common(p)
    p.add_argument("jobid", help=_("Slurm job id"))
    p.add_argument("--cluster", metavar="NAME", help=_("the job's cluster (from the config)"))
    p.add_argument(
        "--out",
        metavar="DIR",
        required=True,
        help=_("directory to write (created; files overwritten)"),
    )
    p.add_argument("--timeout", type=float, default=60.0, metavar="S")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cockpit.commands.diagnose import _slurm_source, with_job

    async def gather() -> tuple[Snapshot, Artifacts]:
        source = _slurm_source(args)
        try:
            snap = await asyncio.wait_for(source.poll(), args.timeout)
            if snap.error is not None:
                raise UserError(
                    _("{name}: {message}").format(name=source.name, message=snap.error.message)
                )
            try:
                arts = await asyncio.wait_for(
                    source.artifacts(Subject("job", source.name, args.jobid), snap), args.timeout
                )
            except ValueError as exc:
                raise UserError(
                    _("bad job id {jobid!r}: {exc}").format(jobid=args.jobid, exc=exc)
                ) from exc
        finally:
            await source.close()
        snap = with_job(snap, args.jobid, arts)
        if not any(j.job_id == args.jobid for j in snap.jobs):
            # a bundle of "Invalid job id" errors would read "nothing looks wrong" in a ticket
            raise UserError(
                _("job {jobid} not found on {name} (not in squeue, scontrol or sacct)").format(
                    jobid=args.jobid, name=source.name
                )
            )
        return snap, arts

    snap, arts = asyncio.run(gather())
    written = write_bundle(args.out, args.jobid, snap, arts)
    for name in written:
        print(clean(os.path.join(args.out, name), 1000))  # names a job chose: no escapes
    return 0


def write_bundle(out: str, job_id: str, snap: Snapshot, arts: Artifacts) -> list[str]:
    """Write the bundle files; returns their names. Raises UserError if ``out`` can't be written."""
    # not at module top: cli.build_parser() imports every command, and the rules (~20 ms)
    # would then load before the TUI's first frame
    from cockpit.diagnosis.rules.slurm_common import fmt_duration

    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise UserError(_("{out}: {strerror}").format(out=out, strerror=exc.strerror)) from exc
    files: dict[str, bytes] = {}
    job = next((j for j in snap.jobs if j.job_id == job_id), None)
    if job is not None:
        files["squeue.txt"] = (
            "JOBID|PARTITION|NAME|USER|STATE|TIME|TIME_LIMIT|NODES|CPUS|MIN_MEMORY|NODELIST|REASON\n"
            f"{job.job_id}|{job.partition}|{job.name}|{job.user}|{job.state}|"
            f"{fmt_duration(job.elapsed_by(snap.taken_at) or 0)}|"
            f"{fmt_duration(job.time_limit_s)}|{job.node_count or ''}|{job.cpus or ''}|"
            f"{(str(job.min_memory_mib) + 'M') if job.min_memory_mib else ''}|"
            f"{job.node_list}|{job.reason}\n"
        ).encode()
    for label, text in arts.commands.items():
        if label.startswith("sacct -B "):  # the batch script slurmdbd kept
            files["batch-script.txt"] = text.encode()
        elif label.startswith("sacct -X ") and label.endswith("(job record)"):
            # what sacct still knew of a job slurmctld forgot (WorkDir, SubmitLine)
            files["sacct-job-record.txt"] = text.replace(SEP, "|").encode()
        elif label.startswith("sacct"):
            files["sacct.txt"] = ("|".join(SACCT_FIELDS) + "\n" + text.replace(SEP, "|")).encode()
        elif label.startswith("scontrol show job"):
            files["scontrol-show-job.txt"] = text.encode()
        elif label.startswith("error: "):
            files.setdefault("collect-errors.txt", b"")
            files["collect-errors.txt"] += f"{label[7:]}: {text}\n".encode()
        elif label.startswith("note: "):
            files.setdefault("collect-notes.txt", b"")
            files["collect-notes.txt"] += f"{label[6:]}: {text}\n".encode()
    nodes = [n for n in snap.nodes if job is not None and n.name in job.nodes]
    if nodes:
        files["scontrol-show-node.txt"] = "".join(
            f"NodeName={n.name} CPUTot={n.cpus_total or 0} RealMemory={n.real_memory_mib or 0} "
            f"State={n.state_label} Partitions={','.join(n.partitions)} Reason={n.reason}\n"
            for n in nodes
        ).encode()
    for lt in arts.logs:
        # a job chose its output's name: it never takes the name of a file this bundle writes
        # (".squeue.txt" is not squeue.txt, a stderr called slurmctld.log is not the controller's)
        name = _safe_name(os.path.basename(lt.path or lt.name) or lt.name)
        if name in files or (lt.kind not in {"slurmctld", "slurmd"} and name in _OURS):
            name = _safe_name(f"{lt.kind}-{name}")
        while name in files:
            name = f"_{name}"
        files[name] = lt.data
    written = []
    try:
        # the folder itself, not where a link in its place points: --out /tmp/ticket-N, run
        # as root, must not write into whatever another user made that name point to
        # "DIR/" would follow a link named DIR before O_NOFOLLOW looks at its last part
        dir_fd = os.open(out.rstrip("/") or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UserError(
            _("{out}: not a folder this command may write into ({why})").format(out=out, why=why)
        ) from exc
    try:
        for name, data in files.items():
            safe = _safe_name(name)
            _write_new(dir_fd, safe, redact(data), out)
            written.append(safe)
    finally:
        os.close(dir_fd)
    return written


# the names this command gives its own files, and the daemon logs a bundle is read by
_OURS = frozenset(
    {
        "squeue.txt",
        "sacct.txt",
        "sacct-job-record.txt",
        "batch-script.txt",
        "scontrol-show-job.txt",
        "scontrol-show-node.txt",
        "collect-errors.txt",
        "collect-notes.txt",
        "slurmctld.log",
    }
)


def _safe_name(name: str) -> str:
    """One file name inside the folder: no path, no leading dot, no control characters."""
    base = "".join(c for c in os.path.basename(name) if c.isprintable() and c not in "/\\")
    return base.lstrip(".") or "file.txt"


def _write_new(dir_fd: int, name: str, data: bytes, out: str) -> None:
    """``name`` in the folder as a new file of this user's only (0600: it quotes job output):
    an entry already there (a file of an earlier run, or a link planted to make us overwrite
    another file) is removed, never written through."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise UserError(
            _("{out}/{name}: cannot replace it ({strerror})").format(
                out=out, name=name, strerror=exc.strerror
            )
        ) from exc
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        raise UserError(
            _("{out}/{name}: cannot write it ({strerror})").format(
                out=out, name=name, strerror=exc.strerror
            )
        ) from exc
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
