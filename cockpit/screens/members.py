"""``m`` (or ``enter``) on an incident that folds many findings: its members, one row each.

An aggregated incident says "412 jobs (ana): held by its user" or "DRAIN: cn013 (9 jobs
affected)"; this view lists the jobs behind the count, most severe first, then oldest, and
``enter`` on one opens its drill-down. The list follows the hub: after a poll it shows the
incident's current members (an incident that resolved keeps its last members on screen).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from cockpit.i18n import N_, _, ngettext
from cockpit.incident_views import MEMBER_COLUMNS, member_rows
from cockpit.model import Incident, Subject
from cockpit.text import clean
from cockpit.views import SEP, subject_kind
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.table import VirtualTable

from .base import CockpitScreen, FilterBar
from .panes import CockpitTable


class MemberTable(CockpitTable):
    def __init__(self, **kw) -> None:
        super().__init__(MEMBER_COLUMNS, empty_text=N_("no members"), **kw)


class MembersScreen(CockpitScreen):
    """The members of one incident (by key: the hub's current incident of that key)."""

    def __init__(self, incident: Incident) -> None:
        super().__init__(id="members")
        self.incident = incident
        self._applied: object = None

    def compose(self) -> ComposeResult:
        yield Static(id="members-title", classes="pane-title")
        yield MemberTable(id="member-table")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        # the title wraps (up to 3 lines) instead of being cut: at 80 columns one line ended
        # at 'affected 4:', the names it lists lost; the key hints, last, go first
        title = self.query_one("#members-title", Static).styles
        title.height, title.max_height = "auto", 3
        self.refresh_data()
        self.query_one(MemberTable).focus()

    def refresh_data(self) -> None:
        current = self.hub.incident_for(self.incident.key)
        if current is not None:
            self.incident = current
        inc = self.incident
        if inc is not self._applied:
            self._applied = inc
            self.query_one(MemberTable).set_rows(member_rows(inc))
        t = Text(_(" Members "), style="bold reverse")
        t.append(f"  {inc.title}", style="bold")
        shown, total = len(inc.findings), inc.findings_total
        if total > shown:  # the store's record keeps the first ones and their count
            t.append(
                "  " + _("{shown} of {total} finding(s) shown").format(shown=shown, total=total)
            )
        else:
            t.append("  " + ngettext("{n} finding", "{n} findings", shown).format(n=shown))
        if inc.affected:
            # the incident view's AFFECTED counts these (a job's nodes, a node's jobs), not
            # the findings listed here: name them, so 4 there and 1 here do not disagree
            names = ", ".join(clean(f"{subject_kind(a.kind)} {a.id}", 40) for a in inc.affected[:3])
            more = ", …" if len(inc.affected) > 3 else ""
            t.append(" · " + _("affected {n}: ").format(n=len(inc.affected)) + names + more)
        if current is None:
            t.append("  " + _("(no longer open in the live data)"), style="yellow")
        t.append("   " + _("enter: drill down  /: filter  esc: back"), style="dim")
        self.query_one("#members-title", Static).update(t)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        parts = (event.key or "").split(SEP, 2)
        if len(parts) == 3:
            self.cockpit.open_subject(Subject(*parts))
