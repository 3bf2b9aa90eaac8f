"""The cockpit's own panes: the tables of jobs, nodes, training jobs and incidents, the
source status line and incidents strip bound to the hub, and the findings list.

The generic widgets (``cockpit.widgets``) draw plain data; what a pane shows is built in
:mod:`cockpit.views`. Text shown here is built as ``rich.text.Text`` from
:func:`cockpit.text.clean`-ed strings, so markup in a job name (``[red]``,
``[@click=...]``) is shown literally.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from cockpit import gcpolicy
from cockpit.i18n import N_, _
from cockpit.incident_views import INCIDENT_COLUMNS
from cockpit.model import SEVERITY_RANK, Finding, shown_source
from cockpit.status_views import source_status
from cockpit.text import clean, pad_cells
from cockpit.views import (
    JOB_COLUMNS,
    NODE_COLUMNS,
    SEVERITY_MARK,
    SEVERITY_STYLE,
    TRAINING_COLUMNS,
    drop_cluster,
)
from cockpit.widgets.status import StatusLine
from cockpit.widgets.table import Column, VirtualTable

if TYPE_CHECKING:
    from cockpit.runtime.hub import Hub


class CockpitTable(VirtualTable):
    """A table whose replaced rows are freed on the reaper thread (:func:`gcpolicy.release`):
    freeing a 100k-row list on the UI thread is a visible stall."""

    def __init__(self, columns: Sequence[Column], **kw) -> None:
        kw.setdefault("release", gcpolicy.release)
        super().__init__(columns, **kw)


class QueueTable(CockpitTable):
    """squeue jobs of every Slurm source with the engine's verdict per row."""

    def __init__(self, multi_source: bool = False, **kw) -> None:
        super().__init__(drop_cluster(JOB_COLUMNS, multi_source), empty_text=N_("no jobs"), **kw)


class NodeTable(CockpitTable):
    """Nodes, unhealthy first, with the full DRAIN/DOWN reason and who set it when."""

    def __init__(self, multi_source: bool = False, **kw) -> None:
        super().__init__(drop_cluster(NODE_COLUMNS, multi_source), empty_text=N_("no nodes"), **kw)


class TrainingJobTable(CockpitTable):
    """ModelArts training jobs: console and API phase side by side."""

    def __init__(self, multi_source: bool = False, **kw) -> None:
        columns = drop_cluster(TRAINING_COLUMNS, multi_source)
        super().__init__(columns, empty_text=N_("no training jobs"), **kw)


class IncidentTable(CockpitTable):
    def __init__(self, multi_source: bool = False, **kw) -> None:
        # two clusters: "job 34" twice is two jobs, so SOURCE stays at any width
        columns = (
            tuple(
                dataclasses.replace(c, priority=0) if c.label == "SOURCE" else c
                for c in INCIDENT_COLUMNS
            )
            if multi_source
            else INCIDENT_COLUMNS
        )
        super().__init__(columns, empty_text=N_("no open incidents"), **kw)


class SourceStatus(StatusLine):
    """The status line of the hub's sources. :meth:`sync` after each poll, and every second:
    a source turns STALE (two intervals without good data) without polling."""

    def __init__(self, hub: Hub, *, id: str | None = None) -> None:
        super().__init__(source_status(hub) + hub.store_status(), id=id)
        self.hub = hub

    def on_mount(self) -> None:
        # A healthy source shows the clock time of its data, which changes only when it
        # polls; the 1 Hz check is a cheap compare that repaints only when the line changes.
        self.set_interval(1.0, self.sync)

    def sync(self) -> None:
        # "store unavailable" beside the sources: the cockpit works from memory meanwhile
        self.set_entries(source_status(self.hub) + self.hub.store_status())


class IncidentStrip(Widget):
    """Open incidents by severity (acknowledged ones counted apart); ``i`` opens the list."""

    DEFAULT_CSS = "IncidentStrip { height: 1; padding: 0 1; }"

    def __init__(
        self, hub: Hub, acked: Callable[[], frozenset[str]], *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.hub = hub
        self.acked = acked

    def render(self) -> Text:
        acked = self.acked()
        # the hub's tally (built off the UI thread) minus the acknowledged: O(acks), not
        # O(incidents)
        tallied = self.hub.open_tally  # the store's open incidents (gone ones too)
        counts = {"critical": 0, "warning": 0, "info": 0} | tallied.counts
        n_acked = 0
        for key in acked:
            sev = tallied.severity.get(key)
            if sev is not None:
                counts[sev] -= 1
                n_acked += 1
        width = max(self.size.width - 2, 10)
        narrow = width < 100  # an 80-column pane: the counts short, the top title whole
        out = Text(_("Incidents "), style="bold")
        for sev in ("critical", "warning", "info"):
            n = counts[sev]
            if narrow and not n:
                continue  # "0 info" says nothing the missing count does not
            out.append(_count(sev, n, narrow), style=SEVERITY_STYLE[sev] if n else "dim")
            out.append("  ")
        if n_acked:
            out.append(_("{n} acked").format(n=n_acked) + "  ", style="dim")
        top = next((i for i in self.hub.open_list if i.key not in acked), None)
        if top is not None:
            # cut at a word, never inside a figure ("64 CPUs > MaxCPUsPe…" hid the 48)
            room = max(width - out.cell_len - 2, 8)
            # the engine's module, imported here: it loads the pattern catalogue, which the
            # first frame and the queue's first rows must not wait for (~0.1-0.15 s)
            from cockpit.diagnosis.context import clip

            title = clip(clean(top.title, 200), room)
            out.append(f"▶ {title}", style=SEVERITY_STYLE.get(top.severity, ""))
        out.truncate(width, overflow="ellipsis")
        return out


def _count(sev: str, n: int, short: bool) -> str:
    """The incident strip's "3 critical" ("3 crit" in an 80-column strip)."""
    if sev == "critical":
        text = _("{n} crit") if short else _("{n} critical")
    elif sev == "warning":
        text = _("{n} warn") if short else _("{n} warning")  # "8 warning", as it always read
    else:
        text = _("{n} info")
    return text.format(n=n)


TIER_NAME = {0: N_("scheduler"), 1: N_("node"), 2: N_("application")}


class FindingList(OptionList):
    """Findings with their evidence chain (scheduler → node → application) and remedies.

    Option ids: ``ev:<finding>:<evidence>`` (enter opens the log at that line) and
    ``log:<n>`` for the subject's logs appended at the end.
    """

    # the scrollbar's gutter always reserved: options are measured at one width, and a
    # scrollbar appearing later (more findings than rows at 80x24) narrowed them by two
    # columns, so a wrapped remedy lost its last line
    DEFAULT_CSS = "FindingList { height: 1fr; border: none; scrollbar-gutter: stable; }"
    BINDINGS = [
        Binding("j", "cursor_down", N_("Down"), show=False),
        Binding("k", "cursor_up", N_("Up"), show=False),
        Binding("g", "first", N_("Top"), show=False),
        Binding("G", "last", N_("Bottom"), show=False),
    ]

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self._shown: tuple | None = None  # what set_findings last drew (skip identical redraws)
        self._identity: dict[str, tuple] = {}  # option id -> what it shows, stable across polls
        self._default: tuple | None = None  # where set_findings put the cursor by itself

    def highlighted_identity(self) -> tuple | None:
        """What the cursor is on (finding cause + subject, evidence text, log name), or None."""
        h = self.highlighted
        if h is None or h >= self.option_count:
            return None
        return self._identity.get(self.get_option_at_index(h).id or "")

    def set_findings(self, findings: Sequence[Finding], logs: Sequence[str] = ()) -> None:
        """Show ``findings`` and the ``logs`` names. The cursor stays on the same finding,
        evidence line or log when they are still there (a poll must not move it)."""
        shown = (tuple(findings), tuple(logs))
        if shown == self._shown:
            return
        keep = self.highlighted_identity()
        if keep is not None and keep == self._default:
            # the operator did not move it: the new top finding, not the old one (evidence
            # arriving ranked a new cause first, and the cursor followed the old one down,
            # scrolling the headline off an 80x24 screen)
            keep = None
        self._shown = shown
        self.findings = list(findings)
        self.clear_options()
        identity: dict[str, tuple] = {}
        opts: list[Option] = []
        if not findings:
            opts.append(
                Option(Text(_("No problem found by the engine."), style="green"), disabled=True)
            )
        ranked = sorted(enumerate(findings), key=lambda t: SEVERITY_RANK.get(t[1].severity, 3))
        for fi, f in ranked:
            mark = Text(
                f" {_(SEVERITY_MARK.get(f.severity, f.severity))} ",
                style=f"reverse {SEVERITY_STYLE.get(f.severity, '')}",
            )
            mark.append(" ")
            head = Text(clean(f.title, 300), style="bold")
            head.append(f"  [{clean(f.root_cause, 60)}]", style="cyan")
            opts.append(Option(_hanging(mark, head), id=f"f:{fi}"))
            identity[f"f:{fi}"] = ("f", f.root_cause, f.subject)
            # what to do right under the cause: at 80x24 it must not fall below the fold
            if f.remedy:
                opts.append(
                    Option(
                        _hanging(
                            Text("   → ", style="green"), Text(clean(f.remedy, 600), style="green")
                        ),
                        disabled=True,
                    )
                )
            if f.explanation:
                opts.append(
                    Option(
                        _hanging(Text("   "), Text(clean(f.explanation, 600), style="dim")),
                        disabled=True,
                    )
                )
            chain = sorted(enumerate(f.evidence), key=lambda t: t[1].tier)
            for ei, ev in chain:
                tier_name = pad_cells(_(TIER_NAME.get(ev.tier, "?")), 11)
                tier = Text(f"   {tier_name} ", style="magenta")
                loc = clean(ev.shown_where(), 60) + (f":{ev.line}" if ev.line else "")
                line = Text(f"{loc}  ", style="cyan")
                line.append(clean(ev.text, 400))
                opts.append(Option(_hanging(tier, line), id=f"ev:{fi}:{ei}"))
                identity[f"ev:{fi}:{ei}"] = ("ev", f.root_cause, f.subject, ev.where, ev.text)
        if logs:
            opts.append(Option(Text(_("Logs"), style="bold underline"), disabled=True))
            for i, name in enumerate(logs):
                label = clean(shown_source(name), 120)
                opts.append(Option(Text(f"   ▸ {label}", style="cyan"), id=f"log:{i}"))
                identity[f"log:{i}"] = ("log", name)
        self._identity = identity
        self.add_options(opts)
        if keep is not None:
            at = next((i for i, o in enumerate(opts) if o.id and identity.get(o.id) == keep), None)
            if at is not None:
                self.highlighted = at
                return
        # the cursor starts on the first cause itself: at 80x24 starting on its first evidence
        # line scrolled the headline out of view (enter on it opens its most telling log line)
        first = next((i for i, o in enumerate(opts) if o.id and o.id.startswith("f:")), None)
        if first is None:
            first = next((i for i, o in enumerate(opts) if not o.disabled), None)
        if first is not None:
            self.highlighted = first
            self._default = identity.get(opts[first].id or "")
            self.scroll_to(y=0, animate=False)


def _hanging(lead: Text, body: Text) -> Table:
    """``lead`` then ``body``; wrapped lines of ``body`` start under its first character."""
    grid = Table.grid(padding=0, expand=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(lead, body)
    return grid
