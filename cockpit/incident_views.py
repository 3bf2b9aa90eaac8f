"""Rows and detail lines of the incident view (``i``) and an incident's members (``m``).

Pure projections from incidents to table rows, as :mod:`cockpit.views` is for the panes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.text import Text

from cockpit.i18n import N_, _
from cockpit.model import SEVERITY_RANK, Incident
from cockpit.text import clean
from cockpit.views import SEP, SEVERITY_MARK, SEVERITY_STYLE, stamp, subject_kind
from cockpit.widgets.fmt import age
from cockpit.widgets.rows import OPTIONAL, Column, Row

INCIDENT_COLUMNS = (
    Column(N_("SEV"), 5, 0),
    Column(N_("SUBJECT"), 22, 0),
    Column(N_("CAUSE"), 20, 2),
    # the title is the deciding fact: at 80 columns it keeps 34+ cells and CAUSE makes way
    # (with few rows and no scrollbar CAUSE stayed and left the title 16: "(gone) 20 jobs:…")
    # (and at 80 columns AFFECTED makes way too: the title keeps "MaxRSS 64.1G of ReqMem 64G")
    Column(N_("TITLE"), 30, 0, flex=True, min_width=34, want=44),
    Column(N_("FIRST SEEN"), 16, 3),
    Column(N_("AFFECTED"), 8, OPTIONAL, justify="right"),
    Column(N_("ACK"), 3, 1),
    # the cluster or project: its own column, so at 80 columns SUBJECT keeps the id whole
    Column(N_("SOURCE"), 14, 4),
)


def _subject_cell(s) -> str:
    """``job 48101``, ``node cn022``, ``training job bert-ft`` (its name, not its UUID): the
    source has its own column."""
    return f"{subject_kind(s.kind)} {s.name or s.id}"


def incident_rows(incidents: Iterable[Incident], acked: frozenset[str] | set[str]) -> list[Row]:
    """Ranked severity, then cause (so a cause's incidents sit together), then age."""
    items = sorted(
        incidents,
        key=lambda i: (
            SEVERITY_RANK.get(i.severity, 3),
            i.key in acked,
            # then age, oldest first (correlate() already grouped symptoms under their cause)
            i.first_seen.timestamp() if i.first_seen else float("inf"),
            i.key,
        ),
    )
    rows = []
    for inc in items:
        is_acked = inc.key in acked
        sev_style = "dim" if is_acked else SEVERITY_STYLE.get(inc.severity, "")
        cells = (
            _(SEVERITY_MARK.get(inc.severity, inc.severity)),
            _subject_cell(inc.subject),
            inc.root_cause,
            inc.title,
            stamp(inc.first_seen),
            str(max(1, len(inc.affected))),
            _("yes") if is_acked else "",
            inc.subject.source,
        )
        styles = (sev_style, "bold", "cyan", "dim" if is_acked else "", "", "", "green", "dim")
        rows.append(Row(inc.key, cells, styles))
    return rows


MEMBER_COLUMNS = (
    Column(N_("SEV"), 5, 0),
    Column(N_("SUBJECT"), 22, 0),
    Column(N_("CAUSE"), 20, 2),
    Column(N_("TITLE"), 30, 0, flex=True, min_width=34),  # as in the incident view
    Column(N_("SINCE"), 16, 3),
)


def member_rows(incident: Incident) -> list[Row]:
    """One row per finding an incident folds (a node's casualties, one user's held jobs, a
    cluster's starved jobs), most severe first, then oldest; keyed by the member's subject
    (``kind\x1fsource\x1fid``) so the members view can open it."""
    items = sorted(
        incident.findings,
        key=lambda f: (
            SEVERITY_RANK.get(f.severity, 3),
            f.first_seen.timestamp() if f.first_seen else float("inf"),
            f.subject.id,
        ),
    )
    rows = []
    for f in items:
        s = f.subject
        cells = (
            _(SEVERITY_MARK.get(f.severity, f.severity)),
            s.label(),
            f.root_cause,
            f.title,
            stamp(f.first_seen),
        )
        styles = (SEVERITY_STYLE.get(f.severity, ""), "bold", "cyan", "", "")
        rows.append(Row(SEP.join((s.kind, s.source, s.id)), cells, styles))
    return rows


# ------------------------------------------------------------------ details


def incident_summary(inc: Incident, acked: bool, now: datetime) -> Text:
    """Detail lines for the incident under the cursor."""
    out = Text()
    out.append(
        f"{_(SEVERITY_MARK.get(inc.severity, ''))} ", style=SEVERITY_STYLE.get(inc.severity, "")
    )
    out.append(clean(inc.title, 400), style="bold")
    out.append(f"\n{inc.root_cause} · {inc.subject.label()}", style="cyan")
    if inc.first_seen:
        ago = age((now - inc.first_seen).total_seconds())
        out.append(" · " + _("first seen {age} ago").format(age=ago))
    if acked:
        out.append(" · " + _("acknowledged"), style="green")
    p = inc.primary
    if p.remedy:
        out.append("\n→ " + clean(p.remedy, 600), style="green")
    if inc.affected:
        shown = ", ".join(clean(str(s), 60) for s in inc.affected[:12])
        extra = len(inc.affected) - 12
        more = _(" and {n} more").format(n=extra) if extra > 0 else ""
        out.append("\n" + _("affected ({n}): ").format(n=len(inc.affected)) + shown + more)
    return out
