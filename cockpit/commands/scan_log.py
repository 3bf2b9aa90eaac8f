"""``cockpit scan-log FILE``: the first red error of any log file (``--all``: every error line).

Exit status: 0 when no error line was found, 1 when one was, 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys

from cockpit.errors import UserError
from cockpit.text import clean


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "scan-log", help="first red error of a log file", description=__doc__.splitlines()[0]
    )
    add_common(p)
    p.add_argument("file", help="log file (any size: memory-mapped)")
    p.add_argument("--all", action="store_true", help="list every error line, in file order")
    p.add_argument(
        "--kind",
        default=None,
        help="log kind: app | slurmctld | slurmd | events (default: from the name)",
    )
    p.add_argument("--json", action="store_true", help="JSON output")
    p.set_defaults(func=run)


def _hit_dict(h) -> dict:
    return {
        "line": h.line,
        "offset": h.offset,
        "text": h.text,
        "pattern": h.pattern,
        "label": h.label,
        "severity": h.severity,
        "strong": h.strong,
    }


def run(args: argparse.Namespace) -> int:
    from cockpit.ingest.logfile import iter_path, scan_path

    try:
        if args.all:
            hits = list(iter_path(args.file, args.kind))
        else:
            h = scan_path(args.file, args.kind)
            hits = [h] if h else []
    except OSError as exc:
        raise UserError(f"{args.file}: {exc.strerror or exc}") from exc
    if args.json:
        out = [_hit_dict(h) for h in hits] if args.all else (_hit_dict(hits[0]) if hits else None)
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        if not hits:
            print(f"{args.file}: no error line found")
        for h in hits:
            mark = "" if h.strong else " (symptom)"
            sys.stdout.write(f"{args.file}:{h.line}: [{h.label}{mark}] {clean(h.text, 400)}\n")
    return 1 if hits else 0
