"""The audit journal: who ran which action on which cluster, when, and what came of it.

One JSON object per line in ``platformdirs.user_state_dir("cockpit")/audit.jsonl`` (the
demo site writes ``audit-demo.jsonl``), appended with a single ``write`` of a line opened in
append mode, so two cockpits on one host never interleave halves of entries. Every text is
redacted: a drain reason may quote a log line holding a password. A journal that cannot be
written is reported to the caller (the dialog says so); the action has already run.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import platformdirs

from cockpit.safety import redact

# who acts is who acks: one answer for the audit journal and the store
from cockpit.store.types import operator
from cockpit.text import json_line, lines

OUTPUT_MAX = 2000  # characters of an action's output kept in the journal


def default_audit_path(demo: bool = False) -> Path:
    name = "audit-demo.jsonl" if demo else "audit.jsonl"
    return Path(platformdirs.user_state_dir("cockpit")) / name


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: str  # ISO 8601 with the zone
    who: str
    source: str
    subject: str  # "node cn013", "job 48102"
    action: str  # the verb: drain, cancel, stop...
    command: str  # exactly what ran (quoted argv), or the API call
    ok: bool | None  # None: "issued", written before the command goes out; its result follows
    exit_status: int | None
    output: str


def entry(
    *,
    at: datetime,
    source: str,
    subject_kind: str,
    subject_id: str,
    action: str,
    command: str,
    ok: bool | None,
    exit_status: int | None,
    output: str,
    who: str | None = None,
) -> AuditEntry:
    return AuditEntry(
        at=at.isoformat(timespec="seconds"),
        who=who or operator(),
        source=source,
        subject=f"{subject_kind} {subject_id}",
        action=action,
        command=redact(command),
        ok=ok,
        exit_status=exit_status,
        # redacted whole, then cut: a cut first could split a secret so redact misses it
        output=redact(output)[-OUTPUT_MAX:],
    )


def record(item: AuditEntry, path: Path | None = None) -> str:
    """Append ``item``; returns "" or the reason it could not be written."""
    path = path or default_audit_path()
    line = json_line(asdict(item)) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        return f"audit journal {path}: {exc.strerror or exc}"
    return ""


def read(path: Path | None = None, limit: int = 200) -> list[AuditEntry]:
    """The newest ``limit`` entries (a damaged line is skipped, not fatal)."""
    path = path or default_audit_path()
    try:
        got = [ln for ln in lines(path.read_text(encoding="utf-8", errors="replace")) if ln]
    except OSError:
        return []
    out = []
    for ln in got[-limit:]:
        try:
            out.append(AuditEntry(**json.loads(ln)))
        except (ValueError, TypeError):
            continue
    return out
