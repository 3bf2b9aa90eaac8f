"""``cockpit diagnose``: why is this job stuck or dead? Findings with evidence, Rich or JSON.

Forms:
  cockpit diagnose PATH [--json]                offline: a folder of ticket files, one file, or
                                                an archive (.tar, .tar.gz, .tgz, .zip)
  cockpit diagnose - [--json]                   offline: a terminal session pasted on stdin
  cockpit diagnose --bundle PATH [--json]       the same as PATH
  cockpit diagnose JOBID --cluster NAME [--json] live: squeue/scontrol/sacct + logs of the job
  cockpit diagnose --demo [--json]              every finding on the demo site, grouped

Exit status: 0 when no critical finding (the site overview: no critical incident), 1 when there
is one; 2 on a user error; 3 when the job's source did not answer.
The JSON shape is the bundle contract (``cockpit.ingest.bundle``):
``{"findings": [...], "first_error": {...} | null, "notes": [...]}``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import sys
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from cockpit.commands.output import hang, stdout_console
from cockpit.errors import EXIT_FOUND, EXIT_NO_SOURCE, EXIT_OK, NoSourceAnswered, UserError
from cockpit.i18n import N_, _
from cockpit.model import Artifacts, Finding, Incident, SlurmJob, Snapshot, Subject
from cockpit.safety import redact
from cockpit.text import MAX_LINE, clean, natural_key, pad_cells

if TYPE_CHECKING:
    from cockpit.source import Source


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "diagnose",
        help=_("why is this job stuck or dead (findings with evidence)"),
        description=__doc__.splitlines()[0],
    )
    add_common(p)
    p.add_argument(
        "jobid",
        nargs="?",
        metavar="JOBID|PATH|-",
        help=_(
            "Slurm job id (with --cluster); or a folder, file or archive of ticket files, "
            "or - for a paste on stdin (offline)"
        ),
    )
    p.add_argument(
        "--bundle", metavar="PATH", help=_("diagnose a folder, file or archive of ticket files")
    )
    p.add_argument("--cluster", metavar="NAME", help=_("the cluster of JOBID (from the config)"))
    p.add_argument(
        "--json", action="store_true", help=_("machine-readable JSON (the bundle contract)")
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help=_("give up after S seconds (default 60)"),
    )
    p.add_argument(
        "--training-job",
        metavar="NAME|ID",
        help=_("ModelArts training job name or id (with --modelarts)"),
    )
    p.add_argument(
        "--modelarts",
        metavar="NAME",
        help=_("the ModelArts project of --training-job (from the config)"),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.training_job is not None and not args.training_job.strip():
        # `--training-job "$JOB"` with JOB unset: not a request for the whole site
        raise UserError(_("--training-job needs a training job's name or id"))
    offline = args.bundle or _offline_target(args)
    if not offline and not args.training_job:
        from cockpit.commands.output import say_if_demo

        say_if_demo(args)
    if offline:
        from cockpit.ingest.bundle import diagnose_bundle

        report = diagnose_bundle(offline)
        return _emit(args, list(report.findings), report.to_json())
    if args.training_job:
        findings, data = asyncio.run(_live_training_job(args))
        return _emit(args, findings, data)
    if args.jobid:
        findings, payload = asyncio.run(_live_job(args))
        return _emit(args, findings, payload)
    if args.demo or not args.cluster:
        return _site(args)
    raise UserError(_("give a JOBID with --cluster NAME, a PATH or - (stdin), or --demo"))


def _offline_target(args: argparse.Namespace) -> str | None:
    """The positional argument when it names offline input: ``-`` or an existing path
    (never with --cluster: there it is a job id). A path-like argument that does not exist
    is a user error, not a job id."""
    arg = args.jobid
    if not arg or args.cluster:
        return None
    if arg == "-" or os.path.exists(arg):
        return arg
    if not SLURM_JOB_ID.fullmatch(arg):
        raise UserError(
            _("{arg}: no such file or directory (a job id needs --cluster NAME)").format(arg=arg)
        )
    return None


# a Slurm job id as operators type it: 123, array task 123_4, array 123_[1-10%2], het 77+1
SLURM_JOB_ID = re.compile(r"\d{1,10}(?:_(?:\d{1,10}|\[[\d,%\-]{1,64}\]))?(?:\+\d{1,4})?", re.ASCII)


# --------------------------------------------------------------------------- live job


def _concerns(f: Finding, job_id: str) -> bool:
    """A site-wide finding belongs in one job's diagnosis only when it names that job (a
    starved job among the related) or explains everything (the controller does not answer);
    a queue surge elsewhere is not this job's story."""
    if f.root_cause == "controller_unreachable":
        return True
    return any(r.kind == "job" and r.id == job_id for r in f.related) or any(
        re.search(rf"\b{re.escape(job_id)}\b", e.text) for e in f.evidence
    )


async def _live_job(args: argparse.Namespace) -> tuple[list[Finding], dict]:
    from cockpit.diagnosis.engine import diagnose

    source = _slurm_source(args)
    try:
        snap = await asyncio.wait_for(source.poll(), args.timeout)
        if snap.error is not None:
            raise NoSourceAnswered(
                _("{name}: {message}").format(name=source.name, message=snap.error.message)
            )
        # a 26.05 SLUID names the same job as its job id: the rest of the cockpit keys by id
        args.jobid = next(
            (j.job_id for j in snap.jobs if j.sluid and j.sluid == args.jobid), args.jobid
        )
        subject = Subject("job", source.name, args.jobid)
        try:
            arts = await asyncio.wait_for(source.artifacts(subject, snap), args.timeout)
        except ValueError as exc:
            raise UserError(
                _("bad job id {jobid!r}: {exc}").format(jobid=args.jobid, exc=exc)
            ) from exc
        tasks = array_tasks(snap, arts, args.jobid)
        if tasks:  # an array's own id: its tasks, each as the drill-down would
            return await _array(args, source, snap, arts, tasks)
    finally:
        await source.close()
    snap = with_job(snap, args.jobid, arts)
    if not any(j.job_id == args.jobid for j in snap.jobs):
        raise UserError(
            _("job {jobid} not found on {name} (not in squeue, scontrol or sacct)").format(
                jobid=args.jobid, name=source.name
            )
        )
    # the whole site, not the job alone: its verdict may depend on the other jobs (starvation)
    # and must be the one the dashboard and the drill-down give
    findings = diagnose(snap, arts, now=snap.taken_at)
    # the job's findings plus those of its nodes (allocated, or named in its pending reason)
    job = next(j for j in snap.jobs if j.job_id == args.jobid)
    named = set(job.nodes) | {
        n.name for n in snap.nodes if re.search(rf"\b{re.escape(n.name)}\b", job.reason or "")
    }
    mine = [
        f
        for f in findings
        if (f.subject.kind == "job" and f.subject.id == args.jobid)
        or (f.subject.kind == "node" and f.subject.id in named)
        or (f.subject.kind == "cluster" and _concerns(f, args.jobid))
    ]
    return mine, payload(mine)


ARRAY_EVIDENCE = 20  # an array's tasks whose evidence (sacct, scontrol, output) is fetched


def array_tasks(snap: Snapshot, arts: Artifacts, job_id: str) -> list[str]:
    """The task ids of the array ``job_id`` names (``41`` -> ``41_3``, ``41_6``…) when no job
    has that id itself: from the queue, scontrol's records and sacct's rows; else []."""
    if not job_id.isdigit() or any(j.job_id == job_id for j in snap.jobs):
        return []
    from cockpit.slurm import parse as slurm

    prefix = job_id + "_"
    ids = {j.job_id for j in snap.jobs if j.job_id.startswith(prefix)}
    ids |= {r.job_id for r in arts.acct if not r.step and r.job_id.startswith(prefix)}
    for label, text in arts.commands.items():
        if label.startswith("scontrol show job") and text:
            try:
                # its own tasks only: a record of tasks still pending is squeue's 130_[1-3],
                # which scontrol spells 130_1-3 (the same tasks named twice)
                ids |= {
                    j.job_id
                    for j in slurm.parse_scontrol_job(text)[0]
                    if j.job_id[len(prefix) :].isdigit()
                }
            except Exception:  # noqa: BLE001 - a partial record: the other sources count
                pass
    return sorted((i for i in ids if i.startswith(prefix)), key=natural_key)


async def _array(
    args: argparse.Namespace, source, snap: Snapshot, arts: Artifacts, tasks: list[str]
) -> tuple[list[Finding], dict]:
    """``diagnose 41`` of an array: each task's findings, the evidence of the first
    ``ARRAY_EVIDENCE`` tasks that did not complete fetched as for one job."""
    from cockpit.diagnosis.engine import diagnose
    from cockpit.diagnosis.slurm_states import FAILED_STATES

    snap = with_jobs(snap, tasks, arts)
    state = {j.job_id: j.state for j in snap.jobs}
    odd = [t for t in tasks if state.get(t) in FAILED_STATES][:ARRAY_EVIDENCE]
    got = await asyncio.wait_for(
        asyncio.gather(
            *(source.artifacts(Subject("job", source.name, t), snap) for t in odd),
            return_exceptions=True,
        ),
        args.timeout,
    )
    more = [a for a in got if isinstance(a, Artifacts)]
    arts = Artifacts(
        acct=(*arts.acct, *(r for a in more for r in a.acct)),
        logs=(*arts.logs, *(lt for a in more for lt in a.logs)),
        commands={k: v for a in (arts, *more) for k, v in a.commands.items()},
        history=(*arts.history, *(r for a in more for r in a.history)),
    )
    snap = with_jobs(snap, odd, arts)
    findings = diagnose(snap, arts, now=snap.taken_at)
    named = set(tasks)
    mine = [f for f in findings if f.subject.kind == "job" and f.subject.id in named]
    return mine, payload(mine)


async def _live_training_job(args: argparse.Namespace) -> tuple[list[Finding], dict]:
    """One ModelArts training job: details, stages, events, startup log and pools, then the
    engine."""
    from cockpit.connect import select_sources
    from cockpit.diagnosis.engine import diagnose

    sources = [s for s in select_sources(args) if s.kind == "modelarts"]
    if args.modelarts:
        sources = [s for s in sources if s.name == args.modelarts]
    if not sources:
        raise UserError(
            _("no ModelArts project configured (add [modelarts.NAME] to the config or use --demo)")
        )
    source = sources[0]
    wanted = args.training_job
    try:
        job_id = await asyncio.wait_for(_resolve_training_job(source, wanted), args.timeout)
        snap, arts = await asyncio.wait_for(source.snapshot_for_job(job_id), args.timeout)
        # the project's job list, read once: the pool rules count the other jobs, and the
        # baseline diff learns from the good runs in it
        listing = None
        if snap.error is None:
            listing = await asyncio.wait_for(source.poll(), args.timeout)
        # where a stuck start stopped vs a good run of the same pool/image (an extra: bounded;
        # it reads the one-job snapshot, so before the other jobs join it)
        from cockpit.watch.baseline import diff_for_cli

        arts = await diff_for_cli(args, source, snap, arts, listing)
        if listing is not None:
            snap = _with_the_other_jobs(snap, listing)
    except TimeoutError as exc:
        raise NoSourceAnswered(
            _("{name}: no answer within {timeout:g} s").format(
                name=source.name, timeout=args.timeout
            )
        ) from exc
    finally:
        await source.close()
    if snap.error is not None:
        if snap.error.kind == "not_found":
            raise UserError(
                _(
                    "training job {wanted!r} not found on {name} "
                    "(give a training job's name or its id)"
                ).format(wanted=wanted, name=source.name)
            )
        raise NoSourceAnswered(
            _("{name}: {message}").format(name=source.name, message=snap.error.message)
        )
    findings = diagnose(snap, arts, now=snap.taken_at)
    asked = [j for j in snap.training_jobs if j.job_id == job_id]
    pools = {p for j in asked for p in (j.pool_id, j.pool_name) if p}
    mine = [
        f
        for f in findings
        if (f.subject.kind == "training_job" and f.subject.id == job_id)
        or (f.subject.kind == "pool" and f.subject.id in pools)
    ]
    # the job asked about first, its pool's state after as context (a critical pool finding
    # led the answer to "why is this training job stuck" before); stable: severity order kept
    mine.sort(key=lambda f: f.subject.kind != "training_job")
    data = payload(mine)
    notes = [w for w in snap.warnings if w.startswith(_OTHERS_NOT_READ)]
    if notes:
        data["notes"] = notes
    # asked by name, answered by name (as the TUI and `cockpit incidents` show it)
    data["names"] = {j.job_id: j.name for j in snap.training_jobs if j.name}
    return mine, data


_OTHERS_NOT_READ = "other training jobs not read"


def _with_the_other_jobs(snap: Snapshot, full: Snapshot) -> Snapshot:
    """``snap`` (the asked job, read in full, and the pools) with the project's other training
    jobs from ``full``, the list the TUI polls. The pool rules count the jobs waiting on a pool:
    with the asked job alone, an Abnormal pool was CRITICAL under a waiting job and WARNING
    under a running one, and "1 job Initializing" where the TUI counted 2. A failed list keeps
    ``snap`` as it was, with a warning the answer prints as a note."""
    if full.error is not None:
        note = f"{_OTHERS_NOT_READ} ({full.error.message}): a pool's counts are this job's only"
        return dataclasses.replace(snap, warnings=(*snap.warnings, note))
    asked = {j.job_id for j in snap.training_jobs}
    others = tuple(j for j in full.training_jobs if j.job_id not in asked)
    return dataclasses.replace(snap, training_jobs=(*snap.training_jobs, *others))


async def _resolve_training_job(source: Source, wanted: str) -> str:
    """The id of the training job named or identified by ``wanted``; an id not in the listing
    (older than the list window) is passed through for the API to judge, as is ``wanted`` on a
    source that cannot search by name. Several jobs with that name -> UserError listing their
    ids."""
    from cockpit.modelarts.api import ModelArtsApiError
    from cockpit.source import Unsupported

    try:
        matches = await source.find_job(wanted)
    except Unsupported:
        return wanted
    except ModelArtsApiError:
        return wanted  # listing failed: the detail call reports the real error
    if len(matches) > 1:
        raise UserError(
            f"{len(matches)} training jobs on {source.name} are named {wanted!r}: give one id: "
            + ", ".join(jid for jid, _ in matches)
        )
    return matches[0][0] if matches else wanted


def _slurm_source(args: argparse.Namespace):
    from cockpit.connect import select_sources

    sources = [s for s in select_sources(args) if s.kind == "slurm"]
    if args.cluster:
        sources = [s for s in sources if s.name == args.cluster]
    if not sources:
        raise UserError(
            _("no Slurm cluster configured (add [clusters.NAME] to the config or use --demo)")
        )
    if not args.cluster and len(sources) > 1:
        # a job id names a job on one cluster: say which one was asked, not silently the first
        print(
            _(
                "cockpit: looking on {name}, the first of {n} clusters (--cluster NAME for another)"
            ).format(name=sources[0].name, n=len(sources)),
            file=sys.stderr,
        )
    sources[0].use_store(LazyStore(args))
    return sources[0]


class LazyStore:
    """The store's ``evidence()``, opened on first use: only a job slurmctld has forgotten
    needs it, and opening it (SQLAlchemy, a migration check) costs a diagnose that does not.
    Any trouble opening it means no stored evidence, said by the live evidence's notes."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self._store: object | None = None
        self.error = ""

    def _open(self) -> object | None:
        if self._store is None and not self.error:
            try:
                from cockpit.config import load_config
                from cockpit.store import open_store

                config = load_config(getattr(self.args, "config", None))
                demo = bool(getattr(self.args, "demo", False)) or not config.has_sources
                self._store = open_store(config=config, demo=demo)
            except Exception as exc:  # noqa: BLE001 - no store: the live evidence stands alone
                self.error = f"store unavailable: {exc}"
        return self._store

    def evidence(self, source: str, subject: Subject) -> Artifacts | None:
        store = self._open()
        if store is None:
            return None
        got = store.evidence(source, subject)  # type: ignore[attr-defined]
        return got if isinstance(got, Artifacts) else None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()  # type: ignore[attr-defined]
            self._store = None


def with_job(snap: Snapshot, job_id: str, arts: Artifacts) -> Snapshot:
    """Make sure the job is in the snapshot: finished jobs leave squeue, scontrol/sacct remember."""
    return with_jobs(snap, [job_id], arts)


def with_jobs(snap: Snapshot, job_ids: list[str], arts: Artifacts) -> Snapshot:
    """Make sure the jobs are in the snapshot, each as scontrol's record says it (else as
    squeue's row, else as sacct's rows), with one parse of scontrol's text and one pass over
    sacct's rows: job by job, a 1,000-task array re-parsed scontrol's 1,000 records per task
    (65 s)."""
    from cockpit.ingest.slurm_text import job_from_acct
    from cockpit.slurm import parse as slurm

    wanted = set(job_ids)
    found: dict[str, SlurmJob] = {}
    for label, text in arts.commands.items():
        if label.startswith("scontrol show job") and text:
            try:
                parsed = slurm.parse_scontrol_job(text)[0]
            except Exception:  # noqa: BLE001 - a partial record: fall back to squeue/sacct
                parsed = []
            for j in parsed:
                if j.job_id in wanted:
                    found.setdefault(j.job_id, j)
    have = {j.job_id for j in snap.jobs}
    rows: dict[str, list] = {}
    for r in arts.acct:
        if r.job_id in wanted and r.job_id not in found and r.job_id not in have:
            rows.setdefault(r.job_id, []).append(r)
    from_acct = [j for j in map(job_from_acct, rows.values()) if j is not None]
    if not found and not from_acct:
        return snap
    kept = tuple(j for j in snap.jobs if j.job_id not in found)
    return dataclasses.replace(snap, jobs=(*kept, *found.values(), *from_acct))


def payload(findings: list[Finding]) -> dict:
    """The bundle JSON contract for live findings; first_error from the top finding's evidence."""
    from cockpit.diagnosis.engine import finding_json, first_red_error

    first = None
    if findings and findings[0].root_cause != "no_failure":
        pick = first_red_error(findings[0])
        if pick is not None:
            first = {"file": pick.where, "line": pick.line, "text": pick.text}
    return {
        "findings": [finding_json(f) for f in findings],
        "first_error": first,
    }


# --------------------------------------------------------------------------- whole site (demo)


def _site(args: argparse.Namespace) -> int:
    taken: list[datetime] = []
    findings, incidents = asyncio.run(_site_findings(args, taken))
    if args.json:
        out = payload(findings)
        out["incidents"] = [
            {
                "key": i.key,
                "root_cause": i.root_cause,
                "severity": i.severity,
                "subject": str(i.subject),
                "title": i.title,
                "affected": [str(a) for a in i.affected],
            }
            for i in incidents
        ]
        print(json.dumps(safe_json(out), indent=2, ensure_ascii=False))
    else:
        _print_incidents(incidents, findings, max(taken, default=None) or datetime.now(UTC))
    # the overview exits as `cockpit incidents` does: 1 while a critical incident is open
    return EXIT_FOUND if any(i.severity == "critical" for i in incidents) else EXIT_OK


async def _site_findings(
    args: argparse.Namespace, taken: list[datetime] | None = None
) -> tuple[list[Finding], list[Incident]]:
    """Every source's findings and incidents after one poll through the core (the TUI's)."""
    from cockpit.connect import select_sources
    from cockpit.diagnosis.engine import sort_key
    from cockpit.runtime.hub import one_shot

    hub = await one_shot(select_sources(args), evidence_budget=MAX_DEEPEN, timeout=args.timeout)
    findings: list[Finding] = []
    for st in hub.states.values():
        if st.snapshot is not None and st.error is None:
            if taken is not None:
                taken.append(
                    st.snapshot.taken_at
                )  # the site's clock (the demo's is not the wall's)
            findings.extend(st.findings)
    findings.sort(key=sort_key)
    return findings, list(hub.incidents)


MAX_DEEPEN = 200  # subjects whose evidence is fetched (sacct, scontrol, log ranges) per source

_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
_SEVERITY = {"critical": N_("CRITICAL"), "warning": N_("WARNING"), "info": N_("INFO")}


def _severity(severity: str) -> str:
    """``CRITICAL`` in eight cells (the findings' titles line up after it)."""
    return pad_cells(_(_SEVERITY.get(severity, severity.upper())), 8)


def _tag(word: str) -> str:
    """``  why:    ``: a finding's line label, its text starting in the same column."""
    return "  " + pad_cells(word + ":", 8)


JSON_CAP = 1 << 20  # characters of one JSON string kept (clean()'s 4096 would cut evidence)


def shown(text: str, cap: int = JSON_CAP) -> str:
    """Text on its way out (terminal or JSON): one line without control sequences or
    invisible characters, credentials redacted (after cleaning, so a secret split by a control
    character is still seen whole; before any cut, so a key cut in half is not missed)."""
    text = _cleaned(text)
    return text if len(text) <= cap else text[: cap - 1] + "…"


@lru_cache(maxsize=8192)
def _cleaned(text: str) -> str:
    """:func:`shown` before the cut; a title or remedy of 100000 findings is done once."""
    return redact(clean(text, JSON_CAP))


def safe_json(value, _seen: dict[str, str] | None = None):
    """Every string of a JSON-like value through :func:`shown` (keys are the contract's);
    a string met again (a remedy, a title) is cleaned and redacted once."""
    seen = {} if _seen is None else _seen
    if isinstance(value, str):
        got = seen.get(value)
        if got is None:
            got = seen[value] = shown(value)
        return got
    if isinstance(value, dict):
        return {k: safe_json(v, seen) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_json(v, seen) for v in value]
    return value


def _emit(args: argparse.Namespace, findings: list[Finding], data: dict) -> int:
    if args.json:
        shown_data = {k: v for k, v in data.items() if k != "names"}  # the text's labels only
        print(json.dumps(safe_json(shown_data), indent=2, ensure_ascii=False))
    else:
        _print_findings(
            findings, data.get("first_error"), data.get("notes", ()), data.get("names") or {}
        )
    if any(f.root_cause in _UNANSWERED for f in findings):
        return EXIT_NO_SOURCE  # the job's cluster or project did not answer: nothing was read
    return EXIT_FOUND if any(f.severity == "critical" for f in findings) else EXIT_OK


FULL = 5  # findings printed with their explanation, remedy and evidence; the rest one line each

# a diagnosis of a job whose source never answered
_UNANSWERED = frozenset({"controller_unreachable", "source_unreachable"})


def _print_findings(
    findings: list[Finding],
    first_error: dict | None,
    notes: list[str] | tuple = (),
    names: dict[str, str] | None = None,
) -> None:
    from rich.text import Text

    con = stdout_console()
    if not findings:
        if first_error:
            con.print(_("No known cause recognised."))
            _print_first_error(con, first_error, "")
        else:
            con.print(_("No finding: nothing looks wrong."))
        _print_notes(con, notes)
        return
    from cockpit.commands.alike import group_alike, group_label

    # the first few in full; past them, findings alike in all but their subject on one line
    shown_findings = [(f, (f.subject,)) for f in findings[:FULL]] + group_alike(findings[FULL:])
    for i, (f, subjects) in enumerate(shown_findings):
        sev = Text(_severity(f.severity) + " ", style=_STYLE.get(f.severity, ""))
        head = Text()
        # the kind in the language spoken, the id as is (no source, a training job by its id)
        label = Subject(f.subject.kind, "", f.subject.id).label()
        name = (names or {}).get(f.subject.id) if f.subject.kind == "training_job" else None
        if name:
            label = _("training job {name} ({id})").format(name=name, id=f.subject.id)
        if len(subjects) > 1:
            label = group_label(subjects)
        head.append(f"{shown(label, 200)}: ", style="bold")
        head.append(shown(f.title, MAX_LINE))
        head.append(f"  [{f.root_cause}]", style="dim")
        hang(con, sev, head)
        if i < FULL:
            if f.explanation:
                hang(con, Text(_tag(_("why"))), Text(shown(f.explanation, 1000)))
            if f.remedy:
                hang(con, Text(_tag(_("do"))), Text(shown(f.remedy, 1000), style="green"))
            for e in f.evidence[:6]:
                loc = shown(e.shown_where(), 200) + (f":{e.line}" if e.line else "")
                hang(
                    con,
                    Text(f"  {pad_cells(loc, 28)} ", style="dim"),
                    Text(evidence_excerpt(e.text, f.root_cause)),
                )
    if first_error:
        top = findings[0]
        _print_first_error(con, first_error, top.root_cause, top.severity == "critical")
    _print_notes(con, notes)


def _print_first_error(con, first_error: dict, label: str, red: bool = True) -> None:
    """The line that shows the cause. "first red error" only under a critical finding: a
    queued job's top line is an Info event ("queuing and awaiting resource allocation")."""
    from rich.text import Text

    heading = _("first red error") if red else _("where it shows")
    con.print(
        Text(
            f"\n{heading}: {shown(str(first_error['file']), 200)}:{first_error['line']}: ",
            style="bold",
        )
        + Text(evidence_excerpt(first_error["text"], label), style="red" if red else "yellow")
    )


def _print_notes(con, notes: list[str] | tuple) -> None:
    """What the input reader skipped or cut: never silent."""
    from rich.text import Text

    for n in notes:
        con.print(Text(_("note: {text}").format(text=shown(n, 400)), style="dim"))


EVIDENCE_CAP = 400  # characters of one evidence line printed; Rich wraps, never cuts


def evidence_excerpt(text: str, label: str = "", cap: int = EVIDENCE_CAP) -> str:
    """An evidence line for the terminal: whole when it fits ``cap`` characters (cleaned of
    control sequences), else cut to ``cap`` keeping the phrase that matched the catalogue
    (preferring a pattern of ``label``) visible: a window around it when it lies past the cap."""
    from cockpit.diagnosis.patterns import match_span

    # not clean()'s 4096 default: the phrase may lie beyond it; redacted before any cut
    text = shown(text)
    if len(text) <= cap:
        return text
    span = match_span(text, label or None)
    if span is None or span[1] <= cap - 1:
        return text[: cap - 1] + "…"
    start, end = span
    width = cap - 2  # room for the two ellipses
    lo = max(0, min(start - max(0, width - (end - start)) // 3, len(text) - width))
    hi = min(len(text), lo + width)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def _print_incidents(incidents: list[Incident], findings: list[Finding], at: datetime) -> None:
    from rich.text import Text

    con = stdout_console()
    con.print(
        Text(
            _("{incidents} incident(s), {findings} finding(s) at {time}").format(
                incidents=len(incidents), findings=len(findings), time=f"{at:%Y-%m-%d %H:%M:%SZ}"
            ),
            style="bold",
        )
    )
    for inc in incidents:
        sev = Text(_severity(inc.severity) + " ", style=_STYLE.get(inc.severity, ""))
        line = Text(f"{shown(inc.subject.label(), 200)}: ", style="bold")
        line.append(shown(inc.title, MAX_LINE))
        line.append(f"  [{inc.root_cause}]", style="dim")
        hang(con, sev, line)
        if inc.primary.remedy:
            # whole: a remedy cut at 400 characters lost its last, often decisive, sentence
            hang(
                con,
                Text("  " + _("do") + ": "),
                Text(shown(inc.primary.remedy, MAX_LINE), style="green"),
            )
        if inc.affected:
            hang(
                con,
                Text("  " + _("affected") + ": ", style="dim"),
                Text(
                    shown(", ".join(a.label() for a in inc.affected[:12]))
                    # how many more, not "…": a reader (or a grep) sees nothing was cut
                    + (f" (+{len(inc.affected) - 12})" if len(inc.affected) > 12 else ""),
                    style="dim",
                ),
            )
    info = [f for f in findings if f.severity == "info"]
    if info:
        con.print(
            Text(
                "\n" + _("{n} informational finding(s) (jobs that will run):").format(n=len(info)),
                style="bold",
            )
        )
        for f in info[:20]:
            con.print(Text(f"  {shown(f.subject.label(), 200)}: {shown(f.title)}", style="cyan"))
