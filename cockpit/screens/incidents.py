"""``i``: open incidents ranked by severity then age, grouped by cause; ack and export.

With a store (:mod:`cockpit.store`) the list is the store's open incidents: one stays until
acknowledged and resolved (or past the retention), whatever squeue says; a gone one is marked
("gone from squeue 6 m ago") and still opens to its stored evidence. ``a`` asks for an optional
note and records who acknowledged and when; on a shared PostgreSQL every cockpit shows it.
"""

from __future__ import annotations

import dataclasses
import errno
import os
from datetime import datetime
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from cockpit.i18n import N_, _
from cockpit.incident_views import incident_rows, incident_summary
from cockpit.runtime.lifecycle import ago
from cockpit.store.types import StoredIncident
from cockpit.text import clean
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.table import VirtualTable

from .base import CockpitScreen, FilterBar
from .members import MembersScreen
from .panes import IncidentTable

GONE_WORDS = {"job": N_("gone from squeue"), "node": N_("node back"), "cluster": N_("cleared")}


def gone_word(key: str, kind: str) -> str:
    """What "gone from the live data" means for this incident: a source outage ends when it
    answers again; a group of jobs (about the cluster too) when its jobs left that state."""
    if key.startswith("source|"):
        return _("answers again")
    if key.startswith("group|"):
        return _("its jobs left this state")
    return _(GONE_WORDS.get(kind, N_("resolved")))


class NoteInput(ModalScreen[str | None]):
    """A one-line note for an acknowledgement (enter: ack; esc: cancel)."""

    DEFAULT_CSS = """
    NoteInput { align: center middle; }
    NoteInput > Vertical { width: 72; height: auto; border: round $accent; padding: 0 1;
                           background: $surface; }
    """
    BINDINGS = [Binding("escape", "cancel", N_("Cancel"))]

    def __init__(self, title: str) -> None:
        super().__init__()
        self._title = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                Text(_("Acknowledge: {title}").format(title=clean(self._title, 60)), style="bold")
            )
            yield Input(placeholder=_("note (optional), enter to acknowledge"), id="ack-note")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def lifecycle_line(si: StoredIncident | None, ack, now: datetime) -> Text:
    """``acked by ana 3 m ago: draining cn013`` and ``gone from squeue 6 m ago``, one line
    each (no trailing newline; empty when neither applies)."""
    lines: list[Text] = []
    if ack is not None:
        who = clean(ack.who, 40) or _("someone")
        when = ago((now - ack.at).total_seconds())
        line = Text("✓ " + _("acked by {who} {age} ago").format(who=who, age=when), style="green")
        if ack.note:
            line.append(f": {clean(ack.note, 150)}", style="green")  # full text: x export
        lines.append(line)
    if si is not None and si.resolved_at is not None:
        word = gone_word(si.key, si.incident.subject.kind) if si.gone else _("resolved")
        when = ago((now - si.resolved_at).total_seconds())
        line = Text(_("{what} {age} ago").format(what=word, age=when), style="yellow")
        if not si.gone or ack is None:
            line.append(" · " + _("stays until acknowledged"), style="dim")
        lines.append(line)
    return Text("\n").join(lines)


class IncidentScreen(CockpitScreen):
    BINDINGS = [
        Binding("a", "ack", N_("Ack")),
        Binding("m", "members", N_("Members")),
        Binding("x", "export", N_("Export .md")),
    ]

    def __init__(self) -> None:
        super().__init__(id="incidents")
        self._applied: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="incidents-title", classes="pane-title")
        kinds = [st.source.kind for st in self.hub.states.values()]
        multi = any(kinds.count(k) > 1 for k in set(kinds))
        yield IncidentTable(multi, id="incident-table")
        yield Static(id="incident-detail")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.refresh_data()
        self.query_one(IncidentTable).focus()

    def refresh_data(self) -> None:
        acked = self.cockpit.acks.acked
        stored = self.hub.open_incidents
        state = (self.hub.generation, acked, id(stored))
        table = self.query_one(IncidentTable)
        if state != self._applied:
            self._applied = state
            table.set_rows(_rows(stored, acked))
        n_open = sum(1 for s in stored if s.key not in acked)
        n_gone = sum(1 for s in stored if s.gone)
        t = Text(_(" Incidents "), style="bold reverse")
        t.append(
            "  "
            + _("{open} open, {acked} acknowledged").format(
                open=n_open, acked=len(stored) - n_open
            ),
            style="bold",
        )
        if n_gone:
            t.append(_(", {n} gone from the live data").format(n=n_gone), style="yellow")
        store = self.hub.store
        if store is not None and not store.available:
            t.append("  " + _("store unavailable: working from memory"), style="bold red")
        t.append(
            "   " + _("enter: drill down  m: members  a: ack  x: export  esc: back"), style="dim"
        )
        self.query_one("#incidents-title", Static).update(t)
        self._show_detail(table.cursor_key)

    def _show_detail(self, key: str | None) -> None:
        detail = self.query_one("#incident-detail", Static)
        si = self.hub.stored_for(key) if key else None
        inc = si.incident if si is not None else (self.hub.incident_for(key) if key else None)
        if inc is None:
            detail.update(Text(_(" No open incidents.") if not self.hub.open_incidents else ""))
            return
        now = self.hub.clock()
        acks = self.cockpit.acks
        # who acked and when (and "gone"), first: the detail is a few lines high and at 80x24
        # a wrapped remedy and the affected list would push it below the fold
        text = lifecycle_line(si, acks.ack_of(inc.key), now)
        if text.plain:
            text.append("\n")
        text.append_text(incident_summary(inc, acks.is_acked(inc.key), now))
        detail.update(text)

    def on_virtual_table_cursor_moved(self, event: VirtualTable.CursorMoved) -> None:
        self._show_detail(event.key)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        inc = self.hub.incident_for(event.key)
        if inc is not None and inc.subject.kind == "cluster" and len(inc.findings) > 1:
            self._members(inc)  # "412 jobs (ana): ...": the jobs behind the count
        elif inc is not None:
            self.cockpit.open_subject(inc.subject)

    def action_members(self) -> None:
        key = self.query_one(IncidentTable).cursor_key
        inc = self.hub.incident_for(key) if key else None
        if inc is not None:
            self._members(inc)

    def _members(self, inc) -> None:
        self.app.push_screen(MembersScreen(inc))

    def action_ack(self) -> None:
        key = self.query_one(IncidentTable).cursor_key
        if key is None:
            return
        acks = self.cockpit.acks
        if acks.is_acked(key) or acks.store is None:  # unack, or the JSON acks (no notes)
            self._toggle(key, "")
            return
        inc = self.hub.incident_for(key)
        title = inc.title if inc is not None else key

        def done(note: str | None) -> None:
            if note is not None:
                self._toggle(key, note)

        self.app.push_screen(NoteInput(title), done)

    def _toggle(self, key: str, note: str) -> None:
        now_acked = self.cockpit.acks.toggle(key, note, self.hub.clock())
        self.notify(_("acknowledged") if now_acked else _("acknowledgement removed"), timeout=2)
        self._applied = None
        self.refresh_data()

    def action_export(self) -> None:
        from cockpit.report import incidents_markdown

        now = self.hub.clock()
        stored = self.hub.open_incidents
        acks = self.cockpit.acks
        text = incidents_markdown(
            [s.incident for s in stored],
            now,
            acked=acks.acked,
            acks={k: a for k in acks.acked if (a := acks.ack_of(k)) is not None},
            stored={s.key: s for s in stored},
        )
        path = (
            self.cockpit.export_dir or Path.cwd()
        ) / f"cockpit-incidents-{now.strftime('%Y%m%d-%H%M%S')}.md"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # 0600 and never through a link: the report quotes job output (as alerts.jsonl,
            # the store and collect's bundles do)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            fd = os.open(path, flags, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                os.fchmod(fd, 0o600)
                fh.write(text)
        except OSError as exc:
            error = str(exc)
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link: not a loop, a link refused
                error = "a symbolic link: not written through it"
            self.notify(
                _("cannot write {path}: {error}").format(path=path, error=clean(error, 200)),
                severity="error",
                markup=False,
            )
            return
        # the path on its own line, short: a toast wrapping inside a file name is unreadable
        self.notify(
            _("incidents exported to") + f"\n{short_path(path)}",
            title="Markdown",
            timeout=8,
            markup=False,
        )


def _rows(stored: tuple[StoredIncident, ...], acked: frozenset[str]) -> list:
    """The incident table's rows; a gone incident's title says so (it stays until acked)."""
    rows = incident_rows([s.incident for s in stored], acked)
    gone = {s.key for s in stored if s.gone}
    if not gone:
        return rows
    out = []
    for r in rows:
        if r.key in gone:
            cells = list(r.cells)
            cells[3] = _("(gone) {title}").format(title=cells[3])
            r = dataclasses.replace(r, cells=tuple(cells))
        out.append(r)
    return out


def short_path(path: Path) -> str:
    """``./name`` in the current directory, ``~/…`` under the home directory, else as is."""
    try:
        if path.parent.resolve() == Path.cwd().resolve():
            return f"./{path.name}"
    except OSError:
        pass
    home = str(Path.home())
    s = str(path)
    return (
        "~" + s[len(home) :]
        if home not in ("", "/") and (s == home or s.startswith(home + "/"))
        else s
    )
