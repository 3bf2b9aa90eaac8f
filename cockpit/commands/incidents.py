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

from cockpit.model import Finding

MAX_ARTIFACTS = 200  # subjects whose evidence is fetched per source


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


async def collect(sources: list, now_fn=None) -> tuple[list[Finding], list[str]]:
    """Poll each source once, fetch evidence (cockpit.enrich), diagnose. Returns (findings, source errors)."""
    from cockpit.enrich import EvidenceCache, diagnose_with_evidence

    errors: list[str] = []
    findings: list[Finding] = []

    async def one(src) -> None:
        snap = await src.poll()
        if snap.error is not None:
            errors.append(f"{src.name}: {snap.error.kind}: {snap.error.message}")
            return
        cache = EvidenceCache(budget=MAX_ARTIFACTS, concurrency=8)
        evidence = await cache.refresh(src, snap)
        errors.extend(cache.errors)
        findings.extend(diagnose_with_evidence(snap, evidence, snap.taken_at))

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
    return select_sources(args)  # --cluster/--modelarts select among the demo's sources too


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
