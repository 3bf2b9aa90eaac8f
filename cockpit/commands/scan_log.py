"""``cockpit scan-log FILE``: the first red error of any log file (``--all``: every error line).

Exit status as grep's: 0 when an error line was found, 1 when none was, 2 when the file cannot
be read. A rotated log compressed with gzip, bzip2 or xz is read through.
"""

from __future__ import annotations

import argparse
import json
import sys

from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.safety import redact
from cockpit.text import clean

JSON_CAP = 1 << 20  # characters of one line kept in JSON (clean()'s default would cut it)


def shown(text: str, cap: int = JSON_CAP) -> str:
    """A log line on its way out: control sequences and invisible characters dropped, then
    credentials redacted (before the cut: a key cut in half no longer looks like one)."""
    text = redact(clean(text, JSON_CAP))
    return text if len(text) <= cap else text[: cap - 1] + "…"


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "scan-log",
        help=_("first red error of a log file"),
        description=__doc__.splitlines()[0],
        epilog=_("exit status as grep's: 0 an error line found, 1 none, 2 the file cannot be read"),
    )
    add_common(p)
    p.add_argument("file", help=_("log file (any size: memory-mapped), or - for standard input"))
    p.add_argument("--all", action="store_true", help=_("list every error line, in file order"))
    p.add_argument(
        "--kind",
        default=None,
        help=_("log kind: app | slurmctld | slurmd | events (default: from the name)"),
    )
    p.add_argument("--json", action="store_true", help=_("JSON output"))
    p.set_defaults(func=run)


def _hit_dict(h) -> dict:
    return {
        "line": h.line,
        "offset": h.offset,
        "text": shown(h.text),
        "pattern": h.pattern,
        "label": h.label,
        "severity": h.severity,
        "strong": h.strong,
    }


def _hits(path: str, args: argparse.Namespace, name: str = "") -> tuple[list, str]:
    """The error lines found (the first, or all with ``--all``), and when there are none, why
    the file may not be a log at all (binary data), else ""."""
    from cockpit.ingest.logfile import scan_file

    # one read, the note included: a named pipe's binary data said a bare 'no error line
    # found' (the note re-read regular files only)
    return scan_file(path, args.kind, every=args.all, name=name)


def run(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            # `... | cockpit scan-log -`, as the folder error suggests: standard input is
            # spooled to a private temporary file (mode 0600), so the scanner reads it as any log
            import shutil
            import tempfile

            with tempfile.NamedTemporaryFile(prefix="cockpit-stdin-", suffix=".log") as tmp:
                shutil.copyfileobj(sys.stdin.buffer, tmp)
                tmp.flush()
                hits, odd = _hits(tmp.name, args, _("(standard input)"))
            args.file = _("(standard input)")
        else:
            hits, odd = _hits(args.file, args)
    except OSError as exc:
        raise UserError(
            _("{file}: {value}").format(file=args.file, value=exc.strerror or exc)
        ) from exc
    if args.json:
        out = [_hit_dict(h) for h in hits] if args.all else (_hit_dict(hits[0]) if hits else None)
        print(json.dumps(out, indent=2, ensure_ascii=False))
        if odd:  # the JSON's shape stays; binary data or a cut stream is said beside it
            print(f"cockpit: {shown(args.file, 400)}: {odd}", file=sys.stderr)
    else:
        if not hits:
            found = _("no error line found")
            print(
                f"{shown(args.file, 400)}: {odd}: {found}"
                if odd
                else f"{shown(args.file, 400)}: {found}"
            )
        for h in hits:
            mark = "" if h.strong else " " + _("(symptom)")
            name = shown(args.file, 400)
            sys.stdout.write(f"{name}:{h.line}: [{h.label}{mark}] {shown(h.text, 400)}\n")
        if hits and odd:  # a cut stream: the lines above are those before the damage
            sys.stdout.flush()
            print(f"cockpit: {shown(args.file, 400)}: {odd}", file=sys.stderr)
    return 0 if hits else 1  # as grep: `cockpit scan-log f && echo has errors`
