"""The incident list as JSON (scripts, tests) and as ticket-ready Markdown.

JSON contract::

    {"generated_at": ISO, "incidents": [{"key", "root_cause", "severity",
      "subject": {kind, source, id}, "title", "first_seen": ISO | null, "acknowledged": bool,
      "ack": {"who", "at": ISO, "note"} | null, "gone": bool, "resolved_at": ISO | null,
      "affected": [{kind, source, id}], "affected_count": int (>= 1, the TUI's count),
      "findings": [{"root_cause", "severity", "subject", "title", "explanation", "remedy",
                    "evidence": [{"file", "line", "text"}]}]}]}

Incidents are sorted most severe first, then oldest first. User-controlled text (job
names, reasons, log lines) is cleaned of terminal control sequences; in Markdown it is
escaped so it cannot open links, headings or tables, and evidence goes in code fences
longer than any backtick run inside. Credentials are redacted (:func:`cockpit.safety.redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.i18n import N_, _, ngettext
from cockpit.model import SEVERITY_RANK, Evidence, Finding, Incident, Subject
from cockpit.safety import redact, scrub
from cockpit.text import clean
from cockpit.widgets.fmt import age

if TYPE_CHECKING:
    from cockpit.store.types import Ack, StoredIncident

# Free text: only what opens emphasis, links, HTML, tables or code (and the backslash itself).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")
_MD_LEADING_HASH = re.compile(r"^(\s*)#")
# Already-quoted commands (`squeue --start -j 4`) and long flags (--mem=80G, --cpus-per-task).
_MD_CODE = re.compile(r"`([^`\n]+)`|(?<![\w/-])(--[A-Za-z][\w-]*(?:=[^\s,;()`]*[^\s,;().`])?)")


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt is not None else None


def _subject(s: Subject) -> dict:
    return {"kind": s.kind, "source": s.source, "id": s.id}


def _text(text: str, max_len: int = 4096) -> str:
    """User text for a report, scrubbed before any Markdown escaping splits a ``KEY_NAME`` or
    a key apart."""
    return scrub(text, max_len)


def _evidence(e: Evidence) -> dict:
    return {"file": _text(e.where), "line": e.line, "text": _text(e.text)}


def _finding(f: Finding) -> dict:
    return {
        "root_cause": f.root_cause,
        "severity": f.severity,
        "subject": _subject(f.subject),
        "title": _text(f.title),
        "explanation": _text(f.explanation, 8192),
        "remedy": _text(f.remedy, 8192),
        "evidence": [_evidence(e) for e in f.evidence],
    }


def affected_count(inc: Incident) -> int:
    """Subjects an incident touches, as the TUI's incident table counts them: its ``affected``
    subjects, or 1 (the incident's own subject) when none are listed."""
    return max(1, len(inc.affected))


def sort_incidents(incidents: Iterable[Incident]) -> list[Incident]:
    """Most severe first, then oldest first (unknown first_seen last), then key."""
    return sorted(
        incidents,
        key=lambda i: (
            SEVERITY_RANK.get(i.severity, 9),
            i.first_seen is None,
            i.first_seen.timestamp() if i.first_seen else 0.0,
            i.key,
        ),
    )


def _ack_json(a: Ack | None) -> dict | None:
    if a is None:
        return None
    return {"who": _text(a.who, 200), "at": a.at.isoformat(), "note": _text(a.note, 1000)}


def incidents_json(
    incidents: Iterable[Incident],
    now: datetime,
    acked: Iterable[str] = frozenset(),
    acks: Mapping[str, Ack] | None = None,
    stored: Mapping[str, StoredIncident] | None = None,
) -> dict:
    """The JSON document above for ``incidents`` as of ``now``. ``acks``: who acknowledged
    what, when, with what note; ``stored``: the store's view (gone, resolved)."""
    acks = acks or {}
    acked = set(acked) | set(acks)
    stored = stored or {}
    return {
        "generated_at": now.isoformat(),
        "incidents": [
            {
                "key": i.key,
                "root_cause": i.root_cause,
                "severity": i.severity,
                "subject": _subject(i.subject),
                "title": _text(i.title),
                "first_seen": _iso(i.first_seen),
                "acknowledged": i.key in acked,
                "ack": _ack_json(acks.get(i.key)),
                "gone": bool(stored[i.key].gone) if i.key in stored else False,
                "resolved_at": _iso(stored[i.key].resolved_at) if i.key in stored else None,
                "affected": [_subject(s) for s in i.affected],
                "affected_count": affected_count(i),
                "findings": [_finding(f) for f in i.findings],
            }
            for i in sort_incidents(incidents)
        ],
    }


def md_code(text: str) -> str:
    """``text`` as an inline code span whose fence is longer than any backtick run inside."""
    text = clean(text)
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_escape(text: str) -> str:
    """One line of user text, safe inside Markdown prose: commands already in backticks and
    ``--flags`` become code spans, elsewhere only ``\\ ` * _ [ ] < > |`` and a leading ``#`` are
    escaped (so ``demo-hpc`` and ``--cpus-per-task`` stay readable)."""
    text = clean(text)
    out: list[str] = []
    pos = 0
    for m in _MD_CODE.finditer(text):
        out.append(_MD_SPECIAL.sub(r"\\\1", text[pos : m.start()]))
        out.append(md_code(m.group(1) if m.group(1) is not None else m.group(2)))
        pos = m.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", text[pos:]))
    return _MD_LEADING_HASH.sub(r"\1\\#", "".join(out))


def _fence(lines: list[str]) -> list[str]:
    longest = max((len(m) for ln in lines for m in re.findall(r"`+", ln)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *lines, fence]


def _age(first: datetime | None, now: datetime) -> str:
    """The time and how long ago, in the one age format the TUI and every command use."""
    if first is None:
        return _("unknown")
    ago = _("{age} ago").format(age=age((now - first).total_seconds()))
    return f"{first.isoformat(timespec='seconds')} ({ago})"


# the severity in a heading, in the language spoken
_SEVERITY = {"critical": N_("CRITICAL"), "warning": N_("WARNING"), "info": N_("INFO")}


def incidents_markdown(
    incidents: Iterable[Incident],
    now: datetime,
    acked: Iterable[str] = frozenset(),
    acks: Mapping[str, Ack] | None = None,
    stored: Mapping[str, StoredIncident] | None = None,
) -> str:
    """A ticket-ready report: one section per incident with subject, label, first seen,
    who acknowledged it (when, note), affected jobs, explanation, remedy and the evidence
    chain as code blocks."""
    acks = acks or {}
    acked = set(acked) | set(acks)
    stored = stored or {}
    ordered = sort_incidents(incidents)
    counts = {
        sev: sum(1 for i in ordered if i.severity == sev) for sev in ("critical", "warning", "info")
    }
    out = [
        _("# Cockpit incident report"),
        "",
        _(
            "Generated {time}: {n} incident(s), {critical} critical, {warning} warning, "
            "{info} info."
        ).format(
            time=now.isoformat(timespec="seconds"),
            n=len(ordered),
            critical=counts["critical"],
            warning=counts["warning"],
            info=counts["info"],
        ),
    ]
    for n, inc in enumerate(ordered, 1):
        f = inc.primary
        ack = _(" (acknowledged)") if inc.key in acked else ""
        sev = _(_SEVERITY.get(inc.severity, inc.severity.upper()))
        out += ["", f"## {n}. [{sev}] {md_escape(_text(inc.title))}{ack}", ""]
        out.append(_("- **Subject:** {subject}").format(subject=md_code(inc.subject.label())))
        out.append(_("- **Root cause:** `{cause}`").format(cause=inc.root_cause))
        out.append(_("- **First seen:** {when}").format(when=_age(inc.first_seen, now)))
        a = acks.get(inc.key)
        if a is not None:
            note = f": {md_escape(_text(a.note, 1000))}" if a.note else ""
            who = md_escape(_text(a.who, 200))
            out.append(
                _("- **Acknowledged by** {who}, {when}{note}").format(
                    who=who, when=_age(a.at, now), note=note
                )
            )
        si = stored.get(inc.key)
        if si is not None and si.resolved_at is not None:
            what = _("Gone from the live data") if si.gone else _("Resolved")
            out.append(f"- **{what}:** {_age(si.resolved_at, now)}")
        if inc.affected:
            shown = ", ".join(md_code(s.label()) for s in inc.affected[:50])
            extra = len(inc.affected) - 50
            more = (
                ngettext(" and {n} more", " and {n} more", extra).format(n=extra)
                if extra > 0
                else ""
            )
            out.append(
                _("- **Affected ({n}):** {subjects}{more}").format(
                    n=len(inc.affected), subjects=shown, more=more
                )
            )
        if f.explanation:
            out += ["", md_escape(_text(f.explanation, 8192))]
        if f.remedy:
            out += [
                "",
                _("**What to do:** {remedy}").format(remedy=md_escape(_text(f.remedy, 8192))),
            ]
        evidence = [e for fnd in inc.findings for e in fnd.evidence]
        if evidence:
            out += ["", _("**Evidence:**"), ""]
            lines = [
                f"{_text(e.shown_where())}{':' + str(e.line) if e.line else ''}: {_text(e.text)}"
                for e in evidence
            ]
            out += _fence(lines)
    return redact("\n".join(out) + "\n")  # log lines quoted as evidence may carry credentials
