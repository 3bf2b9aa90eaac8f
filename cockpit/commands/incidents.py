"""``cockpit incidents``: poll the sources once, diagnose, correlate, print the incident list.

``--json`` prints :func:`cockpit.report.incidents_json`, ``--markdown`` a ticket-ready
report, default a Rich table. Evidence from logs is included: artifacts (sacct rows, log
ranges, events) are fetched for failed jobs, unhealthy nodes and troubled training jobs
with bounded concurrency before the engine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime

from cockpit.model import Artifacts, Finding, Snapshot, Subject

FAILED_STATES = {"FAILED", "OUT_OF_MEMORY", "TIMEOUT", "NODE_FAIL", "CANCELLED", "BOOT_FAIL", "DEADLINE"}
QUIET_PHASES = {"Running", "Completed", "Terminated"}
MAX_ARTIFACTS = 200  # subjects whose evidence is fetched per source
CONCURRENCY = 8


def register(sub: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = sub.add_parser("incidents", help="open incidents (findings grouped by cause), most severe first")
    add_common(p)
    p.add_argument("--cluster", action="append", metavar="NAME", help="only this cluster (repeatable)")
    p.add_argument("--modelarts", action="append", metavar="NAME", help="only this ModelArts project (repeatable)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable JSON")
    fmt.add_argument("--markdown", action="store_true", help="Markdown for a ticket")
    p.set_defaults(func=run)


def evidence_subjects(snap: Snapshot) -> list[Subject]:
    """Subjects worth fetching evidence for: failed jobs, unhealthy nodes, troubled training jobs."""
    out = [Subject("job", snap.source, j.job_id) for j in snap.jobs if j.state in FAILED_STATES]
    out += [Subject("node", snap.source, n.name) for n in snap.nodes if n.is_unhealthy]
    out += [Subject("training_job", snap.source, t.job_id) for t in snap.training_jobs
            if t.phase not in QUIET_PHASES]
    return out[:MAX_ARTIFACTS]


def merge_artifacts(parts: list[Artifacts]) -> Artifacts:
    commands: dict[str, str] = {}
    for a in parts:
        commands.update(a.commands)
    return Artifacts(acct=tuple(r for a in parts for r in a.acct),
                     logs=tuple(log for a in parts for log in a.logs), commands=commands)


async def collect(sources: list, now_fn=None) -> tuple[list[Finding], list[str]]:
    """Poll each source once, fetch evidence, diagnose. Returns (findings, source errors)."""
    from cockpit.diagnosis.engine import diagnose

    sem = asyncio.Semaphore(CONCURRENCY)
    errors: list[str] = []
    findings: list[Finding] = []

    async def one(src) -> None:
        snap = await src.poll()
        if snap.error is not None:
            errors.append(f"{src.name}: {snap.error.kind}: {snap.error.message}")
            return

        async def fetch(subject: Subject) -> Artifacts:
            async with sem:
                try:
                    return await src.artifacts(subject, snap)
                except Exception as exc:  # noqa: BLE001 - one subject's evidence must not stop the list
                    errors.append(f"{src.name}: evidence for {subject}: {exc}")
                    return Artifacts()

        arts = await asyncio.gather(*(fetch(s) for s in evidence_subjects(snap)))
        findings.extend(diagnose(snap, merge_artifacts(list(arts)), now=snap.taken_at))

    try:
        await asyncio.gather(*(one(s) for s in sources))
    finally:
        for s in sources:
            await s.close()
    return findings, errors


def _select(args: argparse.Namespace) -> list:
    try:
        from cockpit.sources.factory import select_sources
    except ImportError:
        from cockpit.sources.demo import demo_sources

        return demo_sources(getattr(args, "demo_seed", 7))
    sources = select_sources(args)
    if getattr(args, "demo", False) and (args.cluster or args.modelarts):
        wanted = set(args.cluster or ()) | set(args.modelarts or ())
        sources = [s for s in sources if s.name in wanted]
    return sources


def run(args: argparse.Namespace) -> int:
    from cockpit.diagnosis.engine import correlate
    from cockpit.report import incidents_json, incidents_markdown, sort_incidents

    sources = _select(args)
    findings, errors = asyncio.run(collect(sources))
    incidents = correlate(findings)
    now = datetime.now(UTC)
    for e in errors:
        print(f"cockpit: {e}", file=sys.stderr)
    if args.json:
        json.dump(incidents_json(incidents, now), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(incidents_markdown(incidents, now))
    else:
        _table(sort_incidents(incidents), now)
    return 0


def _table(incidents: list, now: datetime) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from cockpit.text import clean

    colour = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
    table = Table(title=f"{len(incidents)} incident(s)", expand=True)
    for col in ("severity", "root cause", "subject", "title", "affected", "first seen"):
        table.add_column(col)
    for i in incidents:
        age = "" if i.first_seen is None else f"{int((now - i.first_seen).total_seconds() // 60)} min ago"
        table.add_row(Text(i.severity, style=colour.get(i.severity, "")), Text(i.root_cause),
                      Text(clean(str(i.subject))), Text(clean(i.title)), Text(str(len(i.affected))), Text(age))
    Console().print(table)
