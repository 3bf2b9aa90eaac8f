"""Drill-downs of where jobs run, so every incident opens to a detail view: a ModelArts
resource pool (its nodes, abnormal first, free resources per node against the flavor) and a
whole cluster or project (its load, health and the incidents about it: a surge, a full
filesystem, the controller unreachable).

No I/O of their own: the pool's nodes came with the poll, a cluster's findings are the ones
its rules produced (and its outage, kept by the hub).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from cockpit.diagnosis.rules.modelarts import _fits, is_initializing
from cockpit.fleet import health_label, source_row
from cockpit.i18n import N_, _, ngettext
from cockpit.model import Artifacts, Finding, Pool, Subject, TrainingJob
from cockpit.text import clean
from cockpit.views import subject_kind
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.table import Column, Row

from .base import CockpitScreen, FilterBar
from .panes import CockpitTable
from .subject import SCREENS_BY_KIND as _SUBJECTS
from .subject import SubjectScreen, _kv

WARNINGS_SHOWN = 20  # a source's poll warnings listed on its screen; the rest counted

POOL_NODE_COLUMNS = (
    Column(N_("NODE"), 22, 0),
    Column(N_("STATUS"), 10, 0),
    Column(N_("FREE CPU"), 10, 1, justify="right"),
    Column(N_("FREE MEM"), 10, 2, justify="right"),
    Column(N_("FREE GPU/NPU"), 12, 1, justify="right"),
    Column(N_("FLAVOR"), 20, 3, flex=True),
)


def _of(free: float | int | None, total: float | int | None, unit: str = "") -> str:
    if free is None and total is None:
        return "–"
    f = "?" if free is None else f"{free:g}"
    t = "?" if total is None else f"{total:g}"
    return f"{f}/{t}{unit}"


def pool_node_rows(pool: Pool) -> list[Row]:
    """Abnormal nodes first, then by name: the ones to look at on top."""
    out = []
    for n in sorted(pool.nodes, key=lambda n: (n.phase == "Available", n.name)):
        gpus = _of(n.free_gpus, n.gpus) if n.gpus else _of(n.free_npus, n.npus)
        mem = _of(
            None if n.free_memory_mib is None else round(n.free_memory_mib / 1024),
            None if n.memory_mib is None else round(n.memory_mib / 1024),
            "G",
        )
        cells = (n.name, n.phase, _of(n.free_cpus, n.cpus), mem, gpus, n.flavor or pool.flavor)
        styles = ("bold", "" if n.phase == "Available" else "bold red", "", "", "", "dim")
        out.append(Row(n.name, tuple(clean(c, 200) for c in cells), styles))
    return out


def _pool_kind(pool: Pool) -> str:
    """``public``, ``dedicated``, or ``dedicated (TYPE)`` when the API's type says more (its
    ``Dedicate`` is the same word again)."""
    if pool.public:
        return _("public")
    kind = pool.pool_type.strip()
    if not kind or kind.lower().startswith("dedicat"):
        return _("dedicated")
    return _("dedicated ({type})").format(type=kind)


def pool_fit_rows(pool: Pool, jobs: tuple[TrainingJob, ...]) -> list[tuple[str, str]]:
    """Per flavor asked of the pool: what fits, by the very computation the queued and
    fragmented rules put in their verdicts (per-node free GPU/NPU, CPU, memory of its Available
    nodes), then the API's own CPU/memory maximum, which does not count accelerators."""
    by_flavor: dict[str, TrainingJob] = {}
    for job in sorted(jobs, key=lambda j: not is_initializing(j)):  # waiting ones first
        if job.flavor_id and job.flavor_id not in by_flavor:
            by_flavor[job.flavor_id] = job
    rows: list[tuple[str, str]] = []
    for flavor in sorted(set(by_flavor) | set(pool.max_available)):
        job = by_flavor.get(flavor)
        if job is not None and pool.nodes:
            fit, _total_ok, text = _fits(job, pool)
            rows.append(
                (
                    _("fits {flavor}").format(flavor=flavor),
                    _("{n} node(s) fit; {detail}").format(n=fit, detail=text),
                )
            )
        if flavor in pool.max_available:
            cpu, mem = pool.max_available[flavor]
            rows.append(
                (
                    _("max available {flavor}").format(flavor=flavor),
                    _("{cpu} CPU, {mem} GB (API; CPU and memory only)").format(
                        cpu=cpu if cpu is not None else "?", mem=mem if mem is not None else "?"
                    ),
                )
            )
    return rows


class PoolNodeTable(CockpitTable):
    def __init__(self, **kw) -> None:
        super().__init__(POOL_NODE_COLUMNS, empty_text=N_("no nodes reported for this pool"), **kw)


class _NoFetch(SubjectScreen):
    """A place has no artifacts of its own to fetch: its findings are already in the hub."""

    def _load_artifacts(self) -> None:  # type: ignore[override]
        self.artifacts = Artifacts()

    def action_logs(self) -> None:
        self.notify(_("no logs for this; open a job or node of it"), timeout=3)


class PoolScreen(_NoFetch):
    """A ModelArts resource pool: phase, type, flavor, counts, and its nodes."""

    def compose_extra(self) -> ComposeResult:
        yield Static(id="pool-nodes-title", classes="pane-title")
        yield PoolNodeTable(id="pool-nodes")

    def title_text(self, obj: object) -> Text:
        t = super().title_text(obj)
        if isinstance(obj, Pool):
            t.append(f"  {clean(obj.name, 60)}  {obj.phase or '?'}", style="bold")
        return t

    def fields(self, obj: object) -> Table | Text:
        if not isinstance(obj, Pool):
            return Text("")
        p = obj
        abnormal = sum(1 for n in p.nodes if n.phase != "Available") if p.nodes else p.abnormal
        rows: list[tuple[str, Text | str]] = [
            (N_("pool"), f"{p.name} ({p.pool_id})"),
            (N_("kind"), _pool_kind(p)),
            (N_("phase"), Text(p.phase or "-", style="" if p.phase == "Running" else "yellow")),
            (N_("flavor"), p.flavor or "-"),
            (
                N_("nodes"),
                Text(
                    _("{n} reported, {bad} not Available").format(
                        n=len(p.nodes) or "?", bad=abnormal or 0
                    ),
                    style="bold red" if abnormal else "",
                ),
            ),
        ]
        rows.extend(pool_fit_rows(p, self._pool_jobs(p)))
        if p.message:
            rows.append((N_("message"), Text(clean(p.message, 500), style="yellow")))
        return _kv(rows)

    def _pool_jobs(self, pool: Pool) -> tuple[TrainingJob, ...]:
        snap = self.hub.snapshot(self.subject.source)
        jobs = getattr(snap, "training_jobs", ()) if snap is not None else ()
        return tuple(j for j in jobs if j.pool_id and j.pool_id == pool.pool_id)

    def refresh_data(self) -> None:
        super().refresh_data()
        obj = self.hub.lookup(self.subject)
        if not isinstance(obj, Pool) or not self.query("#pool-nodes"):
            return
        table = self.query_one(PoolNodeTable)
        table.set_rows(pool_node_rows(obj))
        bad = sum(1 for n in obj.nodes if n.phase != "Available")
        self.query_one("#pool-nodes-title", Static).update(
            Text(
                _(" Nodes: {n}, {bad} not Available").format(n=len(obj.nodes), bad=bad),
                style="bold",
            )
        )


class SourceScreen(_NoFetch):
    """A cluster or ModelArts project as a whole: its load and health (the fleet's row) and
    the incidents about it rather than one job (surge, storage, controller unreachable)."""

    def title_text(self, obj: object) -> Text:
        s = self.subject
        if s.kind == "file":
            what = _("filesystem {path} on {source}").format(
                path=clean(s.id, 60), source=clean(s.source, 40)
            )
        else:
            what = f"{subject_kind(s.kind)} {clean(s.id, 60)}"
        return Text(f" {what} ", style="bold reverse")

    def _findings(self) -> list[Finding]:
        hub = self.hub
        mine = [i for i in hub.open_list if i.subject == self.subject]
        seen: dict[int, Finding] = {}
        for f in [f for i in mine for f in i.findings] + hub.findings_for(self.subject):
            seen.setdefault(id(f), f)
        return list(seen.values())

    def fields(self, obj: object) -> Table | Text:
        st = self.hub.states.get(self.subject.source)
        if st is None:
            return Text(_("not a configured source"), style="yellow")
        r = source_row(st, self.hub.open_list, self.hub.clock())

        def n(v: int | None) -> str:
            return "–" if v is None else str(v)

        rows: list[tuple[str, Text | str]] = [
            (
                N_("health"),
                Text(
                    clean(health_label(r.health), 300),
                    style="green" if r.health == "ok" else "red",
                ),
            ),
            (N_("running / pending"), f"{n(r.running)} / {n(r.pending)}"),
            (N_("failed in the last hour"), n(r.failed_1h)),
            (N_("nodes down or drained"), n(r.nodes_sick)),
            (
                N_("open incidents"),
                _("{n} ({critical} critical)").format(n=r.incidents, critical=r.critical),
            ),
        ]
        # what the status line counts as "N warnings": the last poll's, each on its line
        warnings = st.snapshot.warnings if st.snapshot is not None else ()
        if warnings:
            shown = Text()
            for w in warnings[:WARNINGS_SHOWN]:
                shown.append(("\n" if shown else "") + "• " + clean(w, 400), style="yellow")
            if len(warnings) > WARNINGS_SHOWN:
                more = len(warnings) - WARNINGS_SHOWN
                # the flag of the source's kind: --cluster of a project is "unknown cluster"
                flag = "--cluster" if st.source.kind == "slurm" else "--modelarts"
                shown.append(
                    "\n"
                    + _("… and {n} more ({command})").format(
                        n=more, command=f"cockpit snapshot {flag} {self.subject.source}"
                    ),
                    style="dim",
                )
            rows.append((N_("poll warnings"), shown))
        return _kv(rows)

    def refresh_data(self) -> None:
        if not self.query("#fields"):
            return
        self.query_one("#subject-title", Static).update(self.title_text(None))
        self.query_one("#fields", Static).update(self.fields(None))
        self.findings = self._findings()
        self._show_findings()


POOL_COLUMNS = (
    Column(N_("POOL"), 22, 0),
    Column(N_("PHASE"), 10, 0),
    Column(N_("KIND"), 10, 3),
    Column(N_("NODES"), 7, 1, justify="right"),
    Column(N_("NOT OK"), 7, 0, justify="right"),
    Column(N_("FLAVOR"), 24, 4),
    Column(N_("MESSAGE"), 20, 2, flex=True),
    Column(N_("PROJECT"), 14, 5),
)


def pool_rows(pools: list[tuple[str, Pool]]) -> list[Row]:
    """One row per resource pool of every ModelArts source: pools with nodes not Available or
    a phase other than Running first."""
    out = []
    for source, p in pools:
        bad = sum(1 for n in p.nodes if n.phase != "Available") if p.nodes else p.abnormal or 0
        nodes = len(p.nodes) if p.nodes else p.available
        cells = (
            p.name,
            p.phase or "-",
            _("public") if p.public else _("dedicated"),
            "-" if nodes is None else str(nodes),
            str(bad),
            p.flavor or "-",
            p.message,
            source,
        )
        sick = bool(bad) or (p.phase not in ("", "Running"))
        styles = (
            "bold",
            "" if p.phase == "Running" else "yellow",
            "dim",
            "",
            "bold red" if bad else "",
            "",
            "yellow",
            "dim",
        )
        out.append(
            (
                not sick,
                p.name,
                Row(f"{source}\x1f{p.pool_id}", tuple(clean(c, 300) for c in cells), styles),
            )
        )
    return [r for *_, r in sorted(out, key=lambda t: (t[0], t[1]))]


class PoolTable(CockpitTable):
    def __init__(self, **kw) -> None:
        super().__init__(
            POOL_COLUMNS, empty_text=N_("no resource pools (no ModelArts source)"), **kw
        )


class PoolsScreen(CockpitScreen):
    """``P``: every ModelArts resource pool; ``enter`` opens its nodes."""

    def compose(self) -> ComposeResult:
        yield Static(id="pools-title")
        yield PoolTable(id="pools")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.refresh_data()
        self.query_one(PoolTable).focus()

    def refresh_data(self) -> None:
        if not self.query(PoolTable):
            return
        pools = [
            (st.name, p)
            for st in self.hub.states.values()
            if st.snapshot is not None
            for p in st.snapshot.pools
        ]
        table = self.query_one(PoolTable)
        table.set_rows(pool_rows(pools))
        bad = sum(1 for r in table.rows if r.cells[4] != "0")
        title = Text(_(" Resource pools "), style="bold reverse")
        title.append(
            "  "
            + ngettext("{n} pool", "{n} pools", len(pools)).format(n=len(pools))
            + _(", {bad} with nodes not Available").format(bad=bad),
            style="bold",
        )
        title.append(_("   enter: its nodes"), style="dim")
        self.query_one("#pools-title", Static).update(title)

    def on_virtual_table_selected(self, event: PoolTable.Selected) -> None:
        source, pool_id = event.key.split("\x1f", 1)
        self.cockpit.open_subject(Subject("pool", source, pool_id))


SCREENS_BY_KIND = {
    **_SUBJECTS,
    "pool": PoolScreen,
    "cluster": SourceScreen,
    "project": SourceScreen,
    "file": SourceScreen,  # a filesystem of the cluster (storage alerts): the cluster's view
}
__all__ = ["SCREENS_BY_KIND", "PoolScreen", "SourceScreen", "pool_node_rows"]
