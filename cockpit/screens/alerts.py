"""``A``: the alert log (what fired, newest first), with mutes.

Reads ``hub.watcher`` (a :class:`cockpit.watch.Watcher`); ``enter`` opens the
alert's subject, ``m`` mutes that subject, ``M`` mutes the rule, both for this
session (put them in ``[alerts] mute`` to keep them).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from cockpit.i18n import N_, _
from cockpit.text import clean
from cockpit.views import SEVERITY_MARK, SEVERITY_STYLE
from cockpit.watch.alerts import Alert, Mute
from cockpit.widgets.fmt import age
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.table import Column, Row, VirtualTable

from .base import CockpitScreen, FilterBar
from .panes import CockpitTable

ALERT_COLUMNS = (
    Column(N_("TIME"), 19, 0),
    Column(N_("SEV"), 4, 0),
    Column(N_("RULE"), 18, 2),
    Column(N_("SUBJECT"), 24, 1),
    Column(N_("ALERT"), 40, 0, flex=True),
)


def alert_rows(alerts: Sequence[Alert]) -> list[Row]:
    """Newest first; the row key is the alert's index in ``alerts`` (stable while appending)."""
    rows = []
    for i in range(len(alerts) - 1, -1, -1):
        a = alerts[i]
        t = a.time.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        rows.append(
            Row(
                str(i),
                (
                    t,
                    _(SEVERITY_MARK.get(a.severity, a.severity)),
                    a.rule,
                    a.subject.label(),
                    a.title,
                ),
                ("dim", SEVERITY_STYLE.get(a.severity, ""), "cyan", "bold", ""),
                sort=(a.time.timestamp(),),
            )
        )
    return rows


class AlertTable(CockpitTable):
    def __init__(self, **kw) -> None:
        super().__init__(
            ALERT_COLUMNS,
            empty_text=N_("no alerts yet: transitions appear here as they happen"),
            **kw,
        )


class AlertScreen(CockpitScreen):
    BINDINGS = [
        Binding("m", "mute_subject", N_("Mute subject")),
        Binding("M", "mute_rule", N_("Mute rule")),
    ]

    def __init__(self) -> None:
        super().__init__(id="alerts")
        self._alerts: list[Alert] = []
        self._applied: tuple[int, int] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="alerts-title", classes="pane-title")
        yield AlertTable(id="alert-table")
        yield Static(id="alert-detail")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.refresh_data()
        self.query_one(AlertTable).focus()

    @property
    def watcher(self):
        return getattr(self.hub, "watcher", None)

    def refresh_data(self) -> None:
        w = self.watcher
        alerts = w.alerts if w is not None else []
        table = self.query_one(AlertTable)
        state = (len(alerts), id(alerts[-1]) if alerts else 0)
        if state != self._applied:
            self._applied = state
            self._alerts = alerts
            table.set_rows(alert_rows(alerts))
        t = Text(_(" Alerts "), style="bold reverse")
        if w is None:
            t.append(_("  alerting is off"), style="bold")
        else:
            t.append(_("  {n} kept").format(n=len(alerts)), style="bold")
            if w.rules.mutes:
                muted = ", ".join(str(m) for m in w.rules.mutes)
                t.append(_(", muted: {mutes}").format(mutes=muted), style="yellow")
            if w.last_error:
                t.append(f"  {w.last_error}", style="red")
        t.append(_("   enter: open  m: mute subject  M: mute rule  esc: back"), style="dim")
        self.query_one("#alerts-title", Static).update(t)
        self._show_detail(table.cursor_key)

    def _alert(self, key: str | None) -> Alert | None:
        if key is None or not key.isdigit() or int(key) >= len(self._alerts):
            return None
        return self._alerts[int(key)]

    def _show_detail(self, key: str | None) -> None:
        a = self._alert(key)
        detail = self.query_one("#alert-detail", Static)
        if a is None:
            detail.update("")
            return
        t = Text()
        t.append(clean(a.title), style=SEVERITY_STYLE.get(a.severity, ""))
        t.append(
            f"\n{a.subject.label()} · {a.rule} · {_ago(a.time, self.hub.clock())}", style="dim"
        )
        f = a.finding
        if f is not None:
            if f.explanation:
                t.append("\n" + clean(f.explanation))
            if f.remedy:
                t.append("\n" + _("Do: "), style="bold green")
                t.append(clean(f.remedy))
            for e in f.evidence[:4]:
                t.append(f"\n  {clean(e.shown_where())}: ", style="cyan")
                t.append(clean(e.text, 300))
        detail.update(t)

    def on_virtual_table_cursor_moved(self, event: VirtualTable.CursorMoved) -> None:
        self._show_detail(event.key)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        a = self._alert(event.key)
        if a is not None and a.subject.kind in ("job", "node", "training_job"):
            self.cockpit.open_subject(a.subject)

    def _mute(self, make) -> None:
        a = self._alert(self.query_one(AlertTable).cursor_key)
        if a is None or self.watcher is None:
            return
        m = self.watcher.rules.mute(make(a))
        self.notify(_("muted {mute} for this session").format(mute=m), timeout=3)
        self.refresh_data()

    def action_mute_subject(self) -> None:
        self._mute(lambda a: Mute(kind=a.subject.kind, id=a.subject.id, source=a.subject.source))

    def action_mute_rule(self) -> None:
        self._mute(lambda a: Mute(rule=a.rule))


def _ago(t: datetime, now: datetime) -> str:
    # the one age format (widgets.fmt.age)
    return _("{age} ago").format(age=age((now - t).total_seconds()))
