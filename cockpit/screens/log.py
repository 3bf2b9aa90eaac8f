"""Full-screen log viewer with one tab per log of the subject (stdout, stderr, daemons), and
the readers that feed it: a file on a source, or bytes in memory.

The readers bring the engine's log scanner (:mod:`cockpit.diagnosis.logscan`) to the
generic viewer: what a red error line is depends on the log's kind (an application's
stdout, slurmctld, slurmd, a ModelArts startup log).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static, Tab, Tabs

from cockpit.diagnosis.logscan import ScanHit, guess_kind, iter_errors
from cockpit.i18n import N_, _
from cockpit.model import shown_source
from cockpit.text import clean
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.logview import LogReader, LogView

from .base import CockpitScreen, InOrderInput


def log_kind(name: str) -> str:
    """Scanner kind for a log name or path (slurmctld / slurmd / app)."""
    return guess_kind(name.replace(" ", "_").replace("(", "").replace(")", ""))


class _Scanned:
    """Error lines by the engine's scanner for the reader's ``kind``."""

    kind: str  # logscan kind: app | slurmctld | slurmd | startup | command | ...

    def errors(self, data: bytes, start_line: int) -> Iterator[ScanHit]:
        return iter_errors(data, kind=self.kind, start_offset=0, start_line=start_line)


class SourceLogReader(_Scanned):
    """A file on a source (local, SSH, demo) read by ranges."""

    def __init__(
        self, source, path: str, name: str = "", landing_offset: int | None = None
    ) -> None:
        self.source, self.path = source, path
        self.name = name or path.rsplit("/", 1)[-1]
        self.kind = log_kind(f"{self.name} {path}")
        # where to open when no line is asked for: a shared daemon log (slurmctld.log) opens
        # at the subject's own first error, not at another job's
        self.landing_offset = landing_offset

    async def read(self, offset: int, length: int) -> bytes:
        return await self.source.read_range(self.path, offset, length)

    async def size(self) -> int:
        return (await self.source.stat(self.path)).size


class BytesLogReader(_Scanned):
    """Bytes already in memory (ModelArts log preview, slurmctld lines for a job)."""

    def __init__(self, data: bytes, name: str, kind: str = "") -> None:
        self.data, self.name = data, name
        self.kind = kind or log_kind(name)

    async def read(self, offset: int, length: int) -> bytes:
        return self.data[offset : offset + length]

    async def size(self) -> int:
        return len(self.data)


class SearchBar(InOrderInput):
    """The log's one input line: ``/`` search forward, ``?`` backward, ``&`` keep matching
    lines (``mode``)."""

    DEFAULT_CSS = (
        "SearchBar { dock: bottom; display: none; height: 3; } SearchBar.-shown { display: block; }"
    )
    BINDINGS = [Binding("escape", "cancel", show=False)]
    PROMPTS = {
        "/": N_("search forward (enter: find; n/N next/previous; esc: close)"),
        "?": N_("search backward (enter: find; n/N next/previous; esc: close)"),
        "&": N_("show only lines containing… (enter: filter; empty: show all; esc: close)"),
    }
    mode = "/"

    def open(self, mode: str, value: str = "") -> None:
        self.mode = mode
        self.placeholder = _(self.PROMPTS[mode])
        self.value = value
        self.add_class("-shown")
        self.screen.set_focus(self)  # at once: the keys typed behind / come here (FilterBar)

    def action_cancel(self) -> None:
        self.remove_class("-shown")
        self.screen.query_one(LogView).focus()


class LogScreen(CockpitScreen):
    """``logs``: (tab label, reader); opens tab ``active`` at ``line``/``offset`` or the first
    error."""

    BINDINGS = [
        Binding("tab", "tab(1)", N_("Next log"), show=False),
        Binding("shift+tab", "tab(-1)", N_("Prev log"), show=False),
        # '/' searches here (less, lnav): the key bar says so, not the tables' "Filter"
        Binding("slash", "filter", N_("Search"), priority=True),
        Binding("question_mark", "search_back", N_("Search ↑"), show=False),
        Binding("ampersand", "keep", N_("Keep matching"), show=False),
    ]

    def __init__(
        self,
        title: str,
        logs: Sequence[tuple[str, LogReader]],
        active: int = 0,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.logs = list(logs)
        self.active = active
        self._line, self._offset = line, offset
        self._tabs_of = 0  # tab ids are new for each set of logs (old tabs go asynchronously)
        self._retargeted = False

    def _tab_id(self, index: int) -> str:
        return f"log{self._tabs_of}-{index}"

    def _tabs(self) -> list[Tab]:
        return [
            Tab(Text(clean(shown_source(n), 60)), id=self._tab_id(i))
            for i, (n, _) in enumerate(self.logs)
        ]

    def compose(self) -> ComposeResult:
        yield Static(Text(" " + clean(self.title_text, 200), style="bold"), id="log-title")
        yield Tabs(*self._tabs())
        yield LogView(id="logview")
        yield Static(id="log-status")
        yield SearchBar(placeholder=SearchBar.PROMPTS["/"], id="search")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(Tabs).can_focus = False  # keys go to the log; tab/shift+tab switch logs
        self._show()

    def retarget(
        self,
        title: str,
        logs: Sequence[tuple[str, LogReader]],
        active: int = 0,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        """Show other logs from now on: the kept log screen opened again
        (``CockpitApp.open_log``). Its tabs are made anew and the log opened as it is shown."""
        self.title_text, self.logs, self.active = title, list(logs), active
        self._line, self._offset = line, offset
        self._retargeted = True

    async def on_screen_resume(self) -> None:
        if not self._retargeted:
            return
        self._retargeted = False
        self._tabs_of += 1
        title = Text(" " + clean(self.title_text, 200), style="bold")
        self.query_one("#log-title", Static).update(title)
        self.query_one(SearchBar).remove_class("-shown")
        tabs = self.query_one(Tabs)
        await tabs.clear()
        for tab in self._tabs():
            await tabs.add_tab(tab)
        self._show()

    def on_screen_suspend(self) -> None:
        # kept (not removed) once closed: a followed log must not be read on every second
        if self not in self.app.screen_stack:
            self.query_one(LogView).set_follow(False)

    def _show(self) -> None:
        tabs = self.query_one(Tabs)
        if self.logs:
            tabs.active = self._tab_id(self.active)
            self._open(self.active, self._line, self._offset)
        else:
            self.query_one("#log-status", Static).update(
                Text(_("no logs known for this subject"), style="yellow")
            )
        self.query_one(LogView).focus()

    def _open(self, index: int, line: int | None = None, offset: int | None = None) -> None:
        self.active = index
        self.query_one(LogView).open(self.logs[index][1], line=line, offset=offset)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is None or event.tab.id is None:
            return
        if event.tab.id != self.query_one(Tabs).active:
            # stale: the first tab's activation on mount arrives after on_mount chose another
            # tab; reopening would lose the evidence's line
            return
        index = int(event.tab.id.rsplit("-", 1)[1])
        if index != self.active:
            self._open(index)
        self.query_one(LogView).focus()

    def action_tab(self, step: int) -> None:
        if len(self.logs) > 1:
            self.query_one(Tabs).active = self._tab_id((self.active + step) % len(self.logs))

    def action_filter(self) -> None:  # '/' searches in a log
        self.check_typing()
        self.query_one(SearchBar).open("/")

    def action_search_back(self) -> None:
        self.query_one(SearchBar).open("?")

    def action_keep(self) -> None:
        # opens empty, so & then enter shows every line again; the kept text is in the prompt
        kept = self.query_one(LogView).keep_text
        bar = self.query_one(SearchBar)
        bar.open("&")
        if kept:
            bar.placeholder = _("showing lines with “{text}”: enter on nothing shows all").format(
                text=clean(kept, 40)
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        bar = self.query_one(SearchBar)
        bar.remove_class("-shown")
        view = self.query_one(LogView)
        view.focus()
        if bar.mode == "&":
            view.keep(event.value)
        else:
            view.search(event.value, -1 if bar.mode == "?" else 1)

    def on_log_view_changed(self, event: LogView.Changed) -> None:
        self._show_status(event.view)

    def on_resize(self) -> None:
        self._show_status(self.query_one(LogView))

    def _show_status(self, view: LogView) -> None:
        status = self.query_one("#log-status", Static)
        width = status.size.width or self.size.width
        status.update(Text(view.status_text(width), style="reverse"))

    def action_back(self) -> None:
        bar = self.query_one(SearchBar)
        if bar.has_class("-shown"):
            bar.action_cancel()
            return
        super().action_back()
