"""CockpitApp: the Textual application an operator keeps open in tmux.

The app owns the :class:`~cockpit.runtime.hub.Hub` (one supervised poller per source,
run as workers, and the state they publish: snapshots, findings, rows, incidents) and the
acknowledgement store. It starts the pollers after the first frame, routes
:class:`~cockpit.runtime.state.HubUpdated` to the visible screen, rings the bell once for a
new critical incident, and maps ``enter`` on any subject to its drill-down screen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen

from cockpit import gcpolicy
from cockpit.i18n import N_, _
from cockpit.model import Incident, Subject
from cockpit.prefs import Prefs
from cockpit.runtime.hub import Hub
from cockpit.screens.commands import CockpitCommands
from cockpit.screens.dashboard import DashboardScreen
from cockpit.screens.help import HelpScreen
from cockpit.screens.incidents import IncidentScreen
from cockpit.store.acks import AckStore
from cockpit.store.book import AckBook
from cockpit.store.opening import OpeningStore
from cockpit.widgets import component_styles, strip_cycles

strip_cycles.install()  # rendered lines that refer to themselves were frozen garbage
component_styles.install()  # so were the virtual style nodes made anew at every restyle

if TYPE_CHECKING:  # cockpit.watch is imported after the first frame (_start_polls)
    from cockpit.record import ReplayClock
    from cockpit.source import Source
    from cockpit.watch.baseline import BaselineStore
    from cockpit.watch.watcher import Watcher
    from cockpit.widgets.logview import LogReader

STYLES = Path(__file__).resolve().parent.parent / "styles" / "cockpit.tcss"


def _css_path() -> Path:
    """``cockpit.styles/cockpit.tcss`` whether installed or run from the checkout."""
    try:
        from importlib.resources import files

        p = Path(str(files("cockpit.styles") / "cockpit.tcss"))
        if p.exists():
            return p
    except (ModuleNotFoundError, TypeError):
        pass
    return STYLES


def _recorder(source: Source) -> object | None:
    """The --record recorder under a source's transport (Slurm) or API (ModelArts), if any."""
    under = getattr(source, "transport", None) or getattr(source, "api", None)
    return getattr(under, "recorder", None)


QUIET_S = 10.0  # no key or mouse for this long: a collector pause goes unseen
_OPERATOR_INPUT = (
    events.Key,
    events.MouseDown,
    events.MouseScrollDown,
    events.MouseScrollUp,
    events.Paste,
)


class HubUpdated(Message):
    """The core's :class:`~cockpit.runtime.state.HubUpdated`, as a Textual message: a source
    finished a poll; ``new_critical`` the incidents not seen before (they ring the bell)."""

    def __init__(self, source: str, new_critical: tuple[Incident, ...] = ()) -> None:
        super().__init__()
        self.source = source
        self.new_critical = new_critical


# Textual's own command palette entries (App.get_system_commands), translated where drawn
_TEXTUAL_COMMANDS = (
    N_("Theme"),
    N_("Change the current theme"),
    N_("Quit"),
    N_("Quit the application as soon as possible"),
    N_("Keys"),
    N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"),
    N_("Minimize the widget and restore to normal size"),
    N_("Maximize"),
    N_("Maximize the focused widget"),
    N_("Screenshot"),
    N_("Save an SVG 'screenshot' of the current screen"),
)


class CockpitApp(App[int]):
    """``sources``: the live sources; ``clock`` is frozen in tests; ``banner`` heads the dashboard;
    ``export_dir``: where the incident view's ``x`` writes (default: the current directory);
    ``late(app)``: called once after the first frame, before the pollers start, to attach what
    only the polls need (the demo's watcher) without importing it before the first frame."""

    TITLE = "Cockpit"
    CSS_PATH = _css_path()
    COMMANDS = App.COMMANDS | {CockpitCommands}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        # q leaves the view (quits only from the dashboard), Q quits from anywhere (k9s, less)
        Binding("q", "leave", N_("Back/Quit")),
        Binding("Q", "quit", N_("Quit"), show=False),
        Binding("f1", "help", N_("Help"), show=False),  # ? searches backwards in a log
        Binding("i", "incidents", N_("Incidents")),
        Binding("A", "alerts", N_("Alerts"), show=False),  # listed in help (?); footer kept short
        Binding("F", "fleet", N_("Fleet"), show=False),
        Binding("P", "pools", N_("Pools"), show=False),
        Binding("right_square_bracket", "replay_step(1)", N_("Next poll"), show=False),
        Binding("left_square_bracket", "replay_step(-1)", N_("Prev poll"), show=False),
        Binding("right_curly_bracket", "replay_step(10)", N_("+10 polls"), show=False),
        Binding("left_curly_bracket", "replay_step(-10)", N_("-10 polls"), show=False),
        Binding("r", "refresh", N_("Refresh")),
        Binding("question_mark", "help", N_("Help")),
        # Textual turns the terminal's own ctrl+z off (raw mode): suspend to the shell as
        # anywhere else; `fg` resumes with the screen drawn whole (on_mount)
        Binding("ctrl+z", "suspend_process", N_("Suspend"), show=False),
    ]

    def __init__(
        self,
        sources: list[Source],
        *,
        clock: Callable[[], datetime] | None = None,
        bell: bool = True,
        acks: AckStore | None = None,
        store: object | None = None,
        banner: str = "",
        watcher: Watcher | None = None,
        baselines: BaselineStore | None = None,
        export_dir: Path | None = None,
        late: Callable[[CockpitApp], None] | None = None,
        readonly: bool = False,
        audit_path: Path | None = None,
        replay: ReplayClock | None = None,
        prefs: Prefs | None = None,
    ) -> None:
        super().__init__()
        self._last_input = 0.0  # monotonic time of the last key, click or paste
        # --readonly: no action runs whatever the clusters' allow_actions say (k9s)
        self.readonly = readonly
        self.audit_path = audit_path  # the actions' journal (cockpit.audit); None: the default
        self.replay = replay  # --replay: the recorded poll shown; ] [ } { move it
        self.prefs = prefs if prefs is not None else Prefs()  # columns chosen per pane
        self.hub = Hub(sources, clock=clock)
        self.hub.watcher = watcher  # alert log + notifications (cockpit.watch); None = off
        # good ModelArts init logs to diff a stuck Initializing job against; None = in memory only.
        # hub.baselines (a BaselineRecorder) is set in _start_polls, after the first frame
        self._baselines = baselines
        self._late = late
        # the incident store (cockpit.store): incidents outlive the poll, acks carry who/when/
        # note and are shared on PostgreSQL; without one, the JSON acks of old (``acks``)
        self.store = store
        self.hub.store = store
        self.acks = AckBook(store, acks)
        self.bell_enabled = bell
        self.banner = _(banner) if banner else ""  # the demo's banner is a catalogue message
        self.bells = 0  # how many times we rang (tests, and honesty about noise)
        # where `x` in the incident view writes its Markdown ([ui] export_dir); None: the cwd
        self.export_dir = export_dir

    def get_driver_class(self):
        """Where Textual would pick its ``LinuxDriver``, our subclass whose input thread sleeps
        until a key instead of waking 10x/s (cockpit.driver); Windows, or a driver named by
        ``TEXTUAL_DRIVER``, is left alone. Headless runs never ask: ``run(headless=True)`` and
        ``run_test`` use Textual's ``HeadlessDriver`` whatever this returns."""
        from textual import constants

        driver_class = super().get_driver_class()
        stock = (
            driver_class.__module__ == "textual.drivers.linux_driver"
            and driver_class.__name__ == "LinuxDriver"
        )
        if stock and constants.DRIVER is None:
            try:
                from cockpit.driver import CockpitDriver
            except Exception:  # a Textual whose internals moved: the stock driver still works
                return driver_class
            return CockpitDriver
        return driver_class

    def get_line_filters(self):
        """Under ``NO_COLOR``, severity/state colours become bold/reverse first
        (widgets.nocolor)."""
        filters = super().get_line_filters()
        if self.no_color:
            from cockpit.widgets.nocolor import SEMANTIC_NO_COLOR

            return [SEMANTIC_NO_COLOR, *filters]
        return filters

    def get_default_screen(self) -> Screen:
        # the dashboard is the bottom of the stack: pushed over Textual's blank default
        # screen, that one would be composed, laid out and painted first, delaying the first
        # frame
        return DashboardScreen(self.banner)

    def on_mount(self) -> None:
        # back from ctrl+z / SIGTSTP and `fg`: the terminal was cleared meanwhile, but only
        # what changed since would be drawn (a screen of blank rows until each line changes)
        self.app_resume_signal.subscribe(self, lambda _app: self.refresh(layout=True))
        if self.acks.load_error:
            self.notify(
                _("state file ignored: {error}").format(error=self.acks.load_error),
                severity="warning",
                markup=False,
            )
        # pollers after the first frame: the first poll's threads (demo site, parsing) would
        # otherwise share the GIL with Textual's first layout and delay it
        self.call_after_refresh(self._start_polls)
        # the collector's rare full pass (gcpolicy) waits until the operator is not at the keys
        gcpolicy.quiet_when(lambda: time.monotonic() - self._last_input > QUIET_S)

    def on_unmount(self) -> None:
        gcpolicy.quiet_when(None)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, _OPERATOR_INPUT):
            self._last_input = time.monotonic()
        await super().on_event(event)

    def _start_pool(self) -> None:
        """``asyncio.to_thread``'s pool (parsing, the pipeline, log reads), all its threads
        started now: asyncio's own starts one more whenever every thread is busy, so a week's
        thread count rose with the busiest moment (a thread that appears days in looks like a
        leak, and is one more stack). Same size as asyncio's default."""
        import os
        import threading
        from concurrent.futures import ThreadPoolExecutor

        n = min(32, (os.cpu_count() or 1) + 4)
        pool = ThreadPoolExecutor(n, thread_name_prefix="cockpit-pool")
        gate = threading.Barrier(n, timeout=5)

        def meet() -> None:
            try:
                gate.wait()  # every thread holds one task until all n exist
            except threading.BrokenBarrierError:
                pass

        for _i in range(n):
            pool.submit(meet)
        asyncio.get_running_loop().set_default_executor(pool)

    def _start_polls(self) -> None:
        from cockpit.watch.baseline import BaselineRecorder, BaselineStore

        self._start_pool()

        if self._late is not None:
            self._late(self)
        store = self._baselines if self._baselines is not None else BaselineStore(persist=False)
        self.hub.baselines = BaselineRecorder(store)
        self.hub.start(self, lambda u: self.post_message(HubUpdated(u.source, u.new_critical)))
        if isinstance(self.store, OpeningStore):  # opens while the first poll runs
            self.store.start()
            self.run_worker(self._store_opened(self.store), name="store-open")
        recorders = [
            r for st in self.hub.states.values() if (r := _recorder(st.source)) is not None
        ]
        if recorders:  # --record: a full disk must not end a recording unnoticed
            self._record_errors: dict[int, str] = {}
            self.set_interval(5.0, lambda: self._check_recorders(recorders))

    async def _store_opened(self, opening: OpeningStore) -> None:
        """A store that cannot be opened (a newer schema, a bad ``[store] url``) ends the
        TUI; ``cockpit`` then prints why, as one line (``commands.tui``)."""
        error = await asyncio.to_thread(opening.settled)
        if error is not None:
            self.exit(return_code=2)

    def _check_recorders(self, recorders: list) -> None:
        for r in recorders:
            if r.error and self._record_errors.get(id(r)) != r.error:
                self.notify(
                    _("{error} (retried each poll)").format(error=r.error),
                    severity="error",
                    timeout=10,
                    markup=False,
                )
            elif not r.error and self._record_errors.get(id(r)):
                self.notify(
                    _("recording to {path} again").format(path=r.path), timeout=5, markup=False
                )
            self._record_errors[id(r)] = r.error

    def on_hub_updated(self, message: HubUpdated) -> None:
        if self.hub.remembered is not None:
            self.acks.update(self.hub.remembered.acks)
        fresh = [i for i in message.new_critical if not self.acks.is_acked(i.key)]
        if fresh and self.bell_enabled:
            self.bells += 1
            self.bell()
        if not self.is_running or not self.screen_stack:  # a poll ended as the app closed
            return  # (its screens' widgets are being removed)
        if not self.screen.is_mounted:  # still composing: its on_mount reads the hub
            return
        refresh = getattr(self.screen, "refresh_data", None)
        if refresh is not None:
            refresh()

    # ------------------------------------------------------------------ navigation

    def _operator_moved(self) -> None:
        """A view opened is the operator at work, whatever opened it (a key, a click, the
        palette, a script through the pilot): the collector's full pass waits (gcpolicy)."""
        self._last_input = time.monotonic()

    def open_subject(self, subject: Subject, then: str | None = None) -> None:
        """Push the drill-down screen for a job, node or training job (``then``: "logs" or
        "act", done on it once its evidence is loaded: `l` and `a` on a dashboard row)."""
        from cockpit.screens.places import SCREENS_BY_KIND

        self._operator_moved()
        screen = SCREENS_BY_KIND.get(subject.kind)
        if screen is None:
            self.notify(
                _("no detail view for {subject}").format(subject=subject.label()),
                timeout=3,
                markup=False,
            )
            return
        if self.hub.lookup(subject) is None and subject.kind not in (
            "node",
            "cluster",
            "project",
            "file",
        ):
            self.notify(
                _("{subject} is not in the latest snapshot").format(subject=subject.label()),
                severity="warning",
                timeout=3,
                markup=False,
            )
        self.push_screen(self._subject_screen(screen, subject, then))

    def open_log(
        self,
        title: str,
        logs: Sequence[tuple[str, LogReader]],
        active: int = 0,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        """Push the log viewer on ``logs`` (tab label, reader), tab ``active`` at ``line`` /
        ``offset`` or its first error: the one kept, retargeted (a full-screen log left ~800
        rendered lines behind as frozen garbage at each visit), unless it is open already."""
        from cockpit.screens.log import LogScreen

        self._operator_moved()
        name = "kept-LogScreen"
        if not self.is_screen_installed(name):
            self.install_screen(LogScreen(title, logs, active, line, offset), name)
            self.push_screen(name)
            return
        kept = self.get_screen(name)
        if kept in self.screen_stack or not logs:
            self.push_screen(LogScreen(title, logs, active, line, offset))
            return
        kept.retarget(title, logs, active, line, offset)  # type: ignore[attr-defined]
        self.push_screen(kept)

    def _subject_screen(self, cls: type, subject: Subject, then: str | None) -> Screen:
        """The drill-down of ``subject``: for a job, node or training job the one kept of its
        kind, retargeted (``REUSABLE``; installed like :meth:`_kept`: a drill-down made anew
        at each visit left its widgets behind as frozen cyclic garbage), unless that one is
        in the stack already (a job opened from a node opened from a job): then a new one."""
        if getattr(cls, "REUSABLE", False):
            name = f"kept-{cls.__name__}"
            if not self.is_screen_installed(name):
                self.install_screen(cls(subject, then=then), name)
                return self.get_screen(name)
            kept = self.get_screen(name)
            if kept not in self.screen_stack:
                kept.retarget(subject, then)  # type: ignore[attr-defined]
                return kept
        if then is not None and hasattr(cls, "action_logs"):
            return cls(subject, then=then)
        return cls(subject)

    def _raise_or_push(self, cls: type, make: Callable[[], Screen]) -> None:
        """Back to the ``cls`` screen already in the stack (its fixed id may exist once), else
        push the one kept for it (:meth:`_kept`)."""
        if not any(isinstance(s, cls) for s in self.screen_stack):
            self.push_screen(self._kept(cls, make))
            return
        while not isinstance(self.screen, cls):
            self.pop_screen()

    def _kept(self, cls: type, make: Callable[[], Screen]) -> Screen:
        """The one screen of ``cls`` (incidents, alerts, pools, fleet: none shows a particular
        subject), made at the first visit and installed: popped, it is suspended instead of
        removed, and the next visit shows it again (its cursor and filter kept, its data
        refreshed on resume). Made anew at each visit, every one left its widget tree behind
        as cyclic garbage, frozen with the polls' data (gcpolicy): the bulk of what the
        soak's full collections had to walk and free."""
        name = f"kept-{cls.__name__}"
        if not self.is_screen_installed(name):
            self.install_screen(make(), name)
        return self.get_screen(name)

    def action_incidents(self) -> None:
        # i -> enter (a job) -> i goes back to the incident screen (a second one would clash
        # with the first one's fixed widget ids); from anywhere else it replaces what was open,
        # so one esc is home again (a log, a drill-down and the incidents do not stack up)
        if not any(isinstance(s, IncidentScreen) for s in self.screen_stack):
            while len(self.screen_stack) > 1:
                self.pop_screen()
        self._raise_or_push(IncidentScreen, IncidentScreen)

    async def action_leave(self) -> None:
        """``q``: back one view; on the dashboard, quit."""
        if len(self.screen_stack) > 1:
            back = getattr(self.screen, "action_back", None)
            if back is not None:
                back()
            else:
                self.pop_screen()
            return
        await self.action_quit()

    def action_replay_step(self, polls: int) -> None:
        """--replay: move the replay clock and poll every source at the new time."""
        if self.replay is None:
            return
        if not self.replay.step(polls):
            self.bell()
            self.notify(_("no more recorded polls that way"), timeout=2)
            return
        self.banner = self.replay.label()
        for screen in self.screen_stack:
            set_banner = getattr(screen, "set_banner", None)
            if set_banner is not None:
                set_banner(self.banner)
        self.hub.refresh_now()

    def action_pools(self) -> None:
        from cockpit.screens.places import PoolsScreen

        if not any(isinstance(s, PoolsScreen) for s in self.screen_stack):
            while len(self.screen_stack) > 1:
                self.pop_screen()
        self._raise_or_push(PoolsScreen, PoolsScreen)

    def action_fleet(self) -> None:
        from cockpit.screens.fleet import FleetScreen

        if not any(isinstance(s, FleetScreen) for s in self.screen_stack):
            while len(self.screen_stack) > 1:
                self.pop_screen()
        self._raise_or_push(FleetScreen, FleetScreen)

    def action_alerts(self) -> None:
        from cockpit.screens.alerts import AlertScreen

        self._raise_or_push(AlertScreen, AlertScreen)

    def action_command_palette(self) -> None:
        """Textual's command palette (ctrl+p), its search field's placeholder in the language
        spoken (the rest is as Textual's own action)."""
        from textual.command import CommandPalette

        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(
                CommandPalette(id="--command-palette", placeholder=_("Search for commands…"))
            )

    def get_system_commands(self, screen):
        """Textual's own palette commands (theme, quit, keys, screenshot), their titles and
        help in the language spoken (``_TEXTUAL_COMMANDS`` puts them in the catalogue)."""
        for cmd in super().get_system_commands(screen):
            yield cmd._replace(title=_(cmd.title), help=_(cmd.help))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_refresh(self) -> None:
        self.hub.refresh_now()
        self.notify(_("polling every source now"), timeout=2)

    async def action_quit(self) -> None:
        self.workers.cancel_group(self, "poll")
        await self.hub.close()
        # an ack given just before q is written (or queued in the store if it is down)
        await asyncio.to_thread(self.acks.flush, 10.0)
        self.exit(0)
