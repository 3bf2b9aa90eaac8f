"""Drill-down screens: a Slurm job, a node, a ModelArts training job.

Each shows its fields at once from the hub's snapshot, then fetches the subject's
artifacts (sacct, logs, events) in a worker, re-runs the engine with them and lists
the findings with their evidence chain. ``enter`` on an evidence line opens the log
at that line; ``l`` opens the logs.
"""

from __future__ import annotations

import posixpath

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static

from cockpit.i18n import N_, _
from cockpit.model import (
    Artifacts,
    Evidence,
    Finding,
    LogText,
    SlurmJob,
    SlurmNode,
    Subject,
    TrainingJob,
)
from cockpit.text import clean
from cockpit.views import (
    SEVERITY_STYLE,
    age,
    job_rows,
    job_state_style,
    mib,
    node_state_style,
    phase_style,
    since,
    slurm_duration,
    split_key,
    stamp,
    subject_kind,
)
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.logview import LogReader
from cockpit.widgets.table import VirtualTable

from .base import CockpitScreen, FilterBar
from .log import BytesLogReader, SourceLogReader
from .panes import FindingList, QueueTable
from .training_view import baseline_diff as _baseline_diff
from .training_view import timeline as _timeline


def _kv(rows: list[tuple[str, Text | str]]) -> Table:
    t = Table.grid(padding=(0, 1))
    t.add_column(style="bold cyan", no_wrap=True)
    t.add_column(overflow="fold")
    for k, v in rows:
        t.add_row(_(k), v if isinstance(v, Text) else Text(clean(v, 2000)))
    return t


def _styled(value: str, style: str) -> Text:
    return Text(clean(value, 2000), style=style)


class SubjectScreen(CockpitScreen):
    """Common part: title, fields, findings with evidence, the logs list."""

    BINDINGS = [Binding("l", "logs", N_("Logs")), Binding("a", "act", N_("Act"))]
    # one screen of the class is kept and shown again for the next subject of its kind
    # (CockpitApp.open_subject, :meth:`retarget`) instead of a new one made at each visit
    REUSABLE = False

    def __init__(self, subject: Subject, then: str | None = None) -> None:
        super().__init__()
        self.subject = subject
        # "logs" | "act": what `l` / `a` on the dashboard's row asked for, done once the
        # subject's evidence (its log files) is here
        self.then = then
        self.findings: list[Finding] = []
        self.logs: list[tuple[str, LogReader]] = []
        self.artifacts = Artifacts()
        self._loaded_for = -1

    def retarget(self, subject: Subject, then: str | None = None) -> None:
        """Show ``subject`` from now on: a kept drill-down opened for another subject. Its
        widgets stay; what it read for the last subject goes, and is read for this one when
        the screen is shown again (``on_screen_resume``). A read still under way for the last
        subject is cancelled: it must not land here."""
        self.workers.cancel_node(self)
        self.subject, self.then = subject, then
        self.findings, self.logs, self.artifacts = [], [], Artifacts()
        self._loaded_for = -1
        for scroll in self.query("#subject-fields"):
            scroll.scroll_home(animate=False)

    def compose(self) -> ComposeResult:
        yield Static(id="subject-title")
        with VerticalScroll(id="subject-fields"):
            yield Static(id="fields")
        yield Static(
            Text(_(" Findings and evidence (enter opens the log at that line)"), style="bold"),
            classes="pane-title",
        )
        yield FindingList(id="findings")
        yield from self.compose_extra()
        yield FilterBar()
        yield KeyBar()

    def compose_extra(self) -> ComposeResult:
        return iter(())

    def on_mount(self) -> None:
        self.refresh_data()
        self.query_one(FindingList).focus()

    def refresh_data(self) -> None:
        if not self.query("#fields"):  # a poll landed before compose finished; on_mount refreshes
            return
        obj = self.hub.lookup(self.subject)
        self.query_one("#subject-title", Static).update(self.title_text(obj))
        self.query_one("#fields", Static).update(self.fields(obj))
        if self._loaded_for != self.hub.generation:
            self._loaded_for = self.hub.generation
            if not self.findings:
                self.findings = self.hub.findings_for(self.subject)
                self._show_findings()
            self._load_artifacts()

    def on_resize(self) -> None:
        if self.query("#subject-title"):  # titles fit the width (the training job's phase brackets)
            self.query_one("#subject-title", Static).update(
                self.title_text(self.hub.lookup(self.subject))
            )

    def _show_findings(self) -> None:
        self.query_one(FindingList).set_findings(self.findings, [name for name, _ in self.logs])

    def _gone(self) -> bool:
        """Popped while a worker awaited (esc, or i/A going back several screens): its widgets
        are being removed and a query would raise NoMatches out of the worker."""
        return self not in self.app.screen_stack or not self.query("#fields")

    @work(exclusive=True, group="artifacts")
    async def _load_artifacts(self) -> None:
        arts, findings = await self.hub.artifacts(self.subject)
        if self._gone():
            return
        self.artifacts = arts
        self.findings = list(findings) or self.hub.findings_for(self.subject)
        self.logs = self.build_logs(arts)
        self._show_findings()
        obj = self.hub.lookup(self.subject)
        self.query_one("#fields", Static).update(self.fields(obj))
        then, self.then = self.then, None
        if then == "logs":
            self.action_logs()
        elif then == "act":
            self.action_act()

    def build_logs(self, arts: Artifacts) -> list[tuple[str, LogReader]]:
        """Files the source names for the subject, then excerpts and command outputs."""
        st = self.hub.states.get(self.subject.source)
        snap = st.snapshot if st else None
        out: list[tuple[str, LogReader]] = []
        paths: set[str] = set()
        landing = {lt.path: _landing_offset(lt) for lt in arts.logs if lt.path and lt.line_offsets}
        if st is not None and snap is not None:
            try:
                locations = st.source.log_locations(self.subject, snap)
            except Exception:  # a source bug must not close the screen
                locations = []
            for label, loc in locations:
                paths.add(loc.path)
                name = posixpath.basename(loc.path) or label
                out.append(
                    (
                        label,
                        SourceLogReader(
                            st.source,
                            loc.path,
                            name=f"{label} {name}" if name != label else label,
                            landing_offset=landing.get(loc.path),
                        ),
                    )
                )
        for lt in arts.logs:
            if lt.path and lt.path in paths and lt.kind not in ("slurmctld",):
                continue
            # an excerpt the source cut for this subject (e.g. its slurmctld.log lines)
            label = (
                _("{log} (lines for {subject})").format(log=lt.name, subject=self.subject.id)
                if lt.name in {n for n, _ in out}
                else lt.name
            )
            out.append((label, BytesLogReader(lt.data, lt.name, kind=lt.kind)))
        for cmd, text in arts.commands.items():
            # sacct -P's fields are split by the unit separator, which the viewer strips as a
            # control character: show them split by " | " as an operator would read them
            shown = text.replace("\x1f", " | ")
            out.append((cmd, BytesLogReader(shown.encode("utf-8", "replace"), cmd, kind="command")))
        return out

    # ------------------------------------------------------------------ navigation

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        if oid.startswith("log:"):
            self.open_log(int(oid[4:]))
        elif oid.startswith("ev:"):
            _, fi, ei = oid.split(":")
            self.open_evidence(self.findings[int(fi)].evidence[int(ei)])
        elif oid.startswith("f:"):
            f = self.findings[int(oid[2:])]
            if f.evidence:
                # the line the headline quotes: a log line with its number, the application's
                # own before the daemons' and the scheduler's (not squeue's row)
                self.open_evidence(
                    max(f.evidence, key=lambda e: (e.line is not None or bool(e.path), e.tier))
                )

    def open_log(self, index: int, line: int | None = None, offset: int | None = None) -> None:
        if not self.logs:
            self.notify(_("no logs known for this subject (yet)"), timeout=3)
            return
        self.cockpit.open_log(self.subject.label(), self.logs, index, line, offset)

    def open_evidence(self, ev: Evidence) -> None:
        index = self._log_for(ev)
        if index is None:
            self.notify(
                clean(f"{ev.shown_where()}: {ev.text}", 300),
                title=_("evidence (no log file)"),
                timeout=6,
                markup=False,
            )
            return
        line = ev.line
        offset = ev.offset if line is None else None
        self.open_log(index, line, offset)

    def _log_for(self, ev: Evidence) -> int | None:
        where = ev.where.strip()
        for i, (_label, reader) in enumerate(self.logs):
            if ev.path and getattr(reader, "path", None) == ev.path:
                return i
        for i, (label, reader) in enumerate(self.logs):
            path = getattr(reader, "path", "") or ""
            if where and where in (label, reader.name, posixpath.basename(path)):
                return i
        # command evidence: squeue/scontrol lines are best read in `scontrol show job`
        prefixes = {"squeue": "scontrol show", "scontrol": "scontrol show"}.get(where, where)
        for i, (label, _reader) in enumerate(self.logs):
            if prefixes and (label.startswith(prefixes) or where.startswith(label.split(" ")[0])):
                return i
        return None

    def action_logs(self) -> None:
        """``l``: the log at the line ``cockpit diagnose`` names as the first red error (the top
        finding's cause line), else the first log at its first error."""
        from cockpit.diagnosis.engine import first_red_error

        top = self.findings[0] if self.findings else None
        ev = first_red_error(top) if top is not None and top.severity != "info" else None
        if ev is None and top is not None and top.severity != "info":
            # evidence without a line number (a ModelArts event): its log, not the first one
            # (a stuck job's empty startup log opened at 'line 1/0' with the cause a tab away)
            ev = next((e for e in top.evidence if self._log_for(e) is not None), None)
        if ev is not None and self._log_for(ev) is not None:
            self.open_evidence(ev)
        else:
            self.open_log(0)

    def action_act(self) -> None:
        """``a``: the guarded actions on this subject, if its source allows them."""
        from cockpit.screens.actions import ActionMenu, ConfirmAction

        st = self.hub.states.get(self.subject.source)
        if st is None:
            return
        source = st.source
        if self.cockpit.replay is not None:
            self.notify(_("a replay is read-only: actions are off"), timeout=4)
            return
        if self.cockpit.readonly:
            self.notify(
                _(
                    "read-only (--readonly, or a browser session without [web] actions = true): "
                    "actions are off"
                ),
                timeout=5,
            )
            return
        if not source.allow_actions:
            self.notify(
                _("actions are off for {source}: set allow_actions = true in its config").format(
                    source=source.name
                ),
                timeout=5,
                markup=False,
            )
            return

        def chosen(kind) -> None:
            if kind is not None:
                self.app.push_screen(
                    ConfirmAction(kind, self.subject, source, self.cockpit.audit_path)
                )

        self.app.push_screen(ActionMenu(self.subject, self.hub.lookup(self.subject)), chosen)

    # ------------------------------------------------------------------ per kind

    def title_text(self, obj: object) -> Text:
        s = self.subject
        shown = s.name if s.kind == "training_job" and s.name else s.id
        where = f" @{s.source}" if s.source else ""
        t = Text(f" {subject_kind(s.kind)} {shown}{where} ", style="bold reverse")
        if obj is None:
            t.append("  " + _("no longer in the latest snapshot"), style="yellow")
        return t

    def fields(self, obj: object) -> Table | Text:
        return Text("")


class JobScreen(SubjectScreen):
    """A Slurm job: squeue fields, sacct rows once fetched, right-sizing from history,
    findings, logs."""

    rightsize: object = None  # cockpit.diagnosis.rightsize.RightSize once the history is in
    REUSABLE = True

    def retarget(self, subject: Subject, then: str | None = None) -> None:
        super().retarget(subject, then)
        self.rightsize = None

    def refresh_data(self) -> None:
        fresh = self._loaded_for != self.hub.generation
        super().refresh_data()
        if fresh:
            self._load_history()

    @work(exclusive=True, group="history")
    async def _load_history(self) -> None:
        """sacct history of the same user + job name (on demand, cached in the hub until the
        next poll)."""
        from cockpit.diagnosis.rightsize import suggest

        job = self.hub.lookup(self.subject)
        if not isinstance(job, SlurmJob):
            return
        records = await self.hub.history(self.subject.source, job.user, job.name)
        if self._gone():
            return
        self.rightsize = suggest(records) if records else None
        self.query_one("#fields", Static).update(self.fields(job))

    def build_logs(self, arts: Artifacts) -> list[tuple[str, LogReader]]:
        """A job that has not started has no stdout/stderr yet: those come last, marked
        "not written yet", and their "No such file" errors are not listed as logs."""
        logs = super().build_logs(arts)
        job = self.hub.lookup(self.subject)
        if not isinstance(job, SlurmJob) or job.start_time is not None or not job.is_pending:
            return logs
        unwritten = {"stdout", "stderr"}
        kept, later = [], []
        for label, reader in logs:
            if (
                label.startswith("error: ")
                and label[7:] in unwritten
                and "No such file" in _text_of(reader)
            ):
                continue
            if label in unwritten:
                later.append((_("{log} (not written yet)").format(log=label), reader))
            else:
                kept.append((label, reader))
        return kept + later

    def title_text(self, obj: object) -> Text:
        t = super().title_text(obj)
        if isinstance(obj, SlurmJob):
            t.append(f"  {clean(obj.name, 80)}", style="bold")
            t.append(f"  {obj.state}", style=job_state_style(obj.state))
            if obj.is_pending and obj.reason:
                t.append(f" ({clean(obj.reason, 60)})", style="yellow")
        return t

    def fields(self, obj: object) -> Table | Text:
        if not isinstance(obj, SlurmJob):
            return Text("")
        j = obj
        per_cpu = _(" per CPU") if j.mem_per_cpu else ""
        limit = slurm_duration(j.time_limit_s) if j.time_limit_s else "UNLIMITED"
        rows: list[tuple[str, Text | str]] = [
            (
                N_("user / account"),
                _("{user} / {account}  qos {qos}").format(
                    user=j.user, account=j.account or "-", qos=j.qos or "-"
                ),
            ),
            (N_("partition"), j.partition),
            (
                N_("state"),
                _styled(
                    _("{state}  reason {reason}").format(state=j.state, reason=j.reason or "-"),
                    job_state_style(j.state),
                ),
            ),
            (
                N_("resources"),
                _("{nodes} nodes, {cpus} CPUs, mem {mem}{per_cpu}").format(
                    nodes=j.node_count or "-",
                    cpus=j.cpus or "-",
                    mem=mib(j.min_memory_mib),
                    per_cpu=per_cpu,
                )
                + (_(", {gpus} GPUs").format(gpus=j.gpus) if j.gpus is not None else "")
                + (_("  (TRES per node {gres})").format(gres=j.gres) if j.gres else ""),
            ),
            (
                N_("time"),
                _("elapsed {elapsed} of limit {limit}").format(
                    elapsed=slurm_duration(j.elapsed_by(self.hub.clock())), limit=limit
                ),
            ),
            (N_("submitted / start"), f"{stamp(j.submit_time)} / {stamp(j.start_time)}"),
            (N_("nodes"), j.node_list or "-"),
        ]
        if j.sluid:  # 26.05+: the same job by its sortable unique id (scontrol, sacct take it)
            rows.append(("SLUID", j.sluid))
        if j.exit_code is not None:
            rows.append((N_("exit code"), str(j.exit_code)))
        if j.dependency:
            rows.append((N_("dependency"), j.dependency))
        if j.work_dir:
            rows.append((N_("work dir"), j.work_dir))
        if j.stdout_path:
            rows.append(
                (
                    N_("stdout"),
                    j.stdout_path
                    + (
                        f"   stderr {j.stderr_path}"
                        if j.stderr_path and j.stderr_path != j.stdout_path
                        else ""
                    ),
                )
            )
        if j.comment:
            rows.append((N_("comment"), j.comment))
        rs = self.rightsize
        if rs is not None:
            line = Text(
                clean(rs.summary, 300), style="bold green" if rs.mem_arg or rs.time_arg else "dim"
            )  # type: ignore[attr-defined]
            for note in rs.notes[:1]:  # type: ignore[attr-defined]
                line.append(f"\n{clean(note, 300)}", style="dim")
            rows.append((N_("right-size"), line))
        from cockpit.diagnosis.rules.slurm_common import mem_usage  # findings' wording

        for rec in self.artifacts.acct[:6]:
            label = f"sacct {rec.job_id}{'.' + rec.step if rec.step else ''}"
            usage = mem_usage(rec.max_rss_mib, rec.req_mem_mib)
            used = f"{usage} " if usage else ""
            elapsed = slurm_duration(rec.elapsed_s)
            rows.append(
                (
                    label,
                    _("{state} exit {code} {used}elapsed {elapsed}").format(
                        state=rec.state, code=rec.exit_code or "-", used=used, elapsed=elapsed
                    ),
                )
            )
        return _kv(rows)


class NodeScreen(SubjectScreen):
    """A node: state and full reason (who, when), load, the jobs on it, its slurmd log."""

    REUSABLE = True

    def compose_extra(self) -> ComposeResult:
        yield Static(id="node-jobs-title", classes="pane-title")
        yield QueueTable(id="node-jobs")

    def title_text(self, obj: object) -> Text:
        t = super().title_text(obj)
        if isinstance(obj, SlurmNode):
            t.append(f"  {obj.state_label}", style=node_state_style(obj.state, obj.flags))
        return t

    def fields(self, obj: object) -> Table | Text:
        if not isinstance(obj, SlurmNode):
            return Text("")
        n = obj
        reason = Text(clean(n.reason, 2000) or "-", style="yellow" if n.reason else "")
        if n.reason_user or n.reason_time:
            reason.append(
                _("  set by {user} at {time}").format(
                    user=clean(n.reason_user, 40) or "?", time=stamp(n.reason_time)
                ),
                style="dim",
            )
        rows: list[tuple[str, Text | str]] = [
            (N_("state"), _styled(n.state_label, node_state_style(n.state, n.flags))),
            (N_("reason"), reason),
            (
                N_("CPUs"),
                _("{alloc} of {total} allocated, load {load}").format(
                    alloc=n.cpus_alloc if n.cpus_alloc is not None else "-",
                    total=n.cpus_total or "-",
                    load=n.cpu_load if n.cpu_load is not None else "-",
                ),
            ),
            (
                N_("memory"),
                _("{alloc} of {total} allocated, {free} free").format(
                    alloc=mib(n.alloc_memory_mib),
                    total=mib(n.real_memory_mib),
                    free=mib(n.free_memory_mib),
                ),
            ),
            (N_("partitions"), ",".join(n.partitions) or "-"),
        ]
        if n.gres:
            rows.append((N_("gres"), n.gres))
        if n.boot_time:
            rows.append((N_("booted"), stamp(n.boot_time)))
        return _kv(rows)

    def refresh_data(self) -> None:
        super().refresh_data()
        st = self.hub.states.get(self.subject.source)
        snap = st.snapshot if st else None
        if snap is None:
            return
        import dataclasses

        mine = dataclasses.replace(
            snap, jobs=tuple(j for j in snap.jobs if self.subject.id in j.nodes)
        )
        from cockpit.runtime.pipeline import exit_codes

        # the exit codes the queue shows (sacct's, from the ended jobs' evidence): squeue
        # has none for most ended jobs, so without them the same job's EXIT would be empty here
        evidence = {}
        for j in mine.jobs:
            job = Subject("job", self.subject.source, j.job_id)
            arts = st.evidence.lookup(snap, job)
            if arts is not None:
                evidence[job] = arts
        table = self.query_one("#node-jobs", QueueTable)
        table.set_rows(job_rows(mine, st.verdicts, self.hub.clock(), exits=exit_codes(evidence)))
        self.query_one("#node-jobs-title", Static).update(
            Text(
                _(" Jobs on {node}: {n}").format(
                    node=clean(self.subject.id, 60), n=table.total_count
                ),
                style="bold",
            )
        )

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        source, ident = split_key(event.key)
        self.cockpit.open_subject(Subject("job", source, ident))


class TrainingJobScreen(SubjectScreen):
    """A ModelArts training job: phases, stages timeline, events (Warning/Error first),
    mounts and image with the problem highlighted, startup log."""

    REUSABLE = True

    def title_text(self, obj: object) -> Text:
        """The job's name, then what decides (its verdict, else its phase), then the API phase
        and the id as far as the width allows: at 80 columns a UUID first left no room."""
        if not isinstance(obj, TrainingJob):
            return super().title_text(obj)
        width = self.app.size.width
        t = Text(f" {clean(obj.name, 48) or obj.job_id} ", style="bold reverse")
        console = obj.console_phase
        verdict = clean(self.findings[0].title, 200) if self.findings else ""
        fact = console
        if verdict:  # "Failed: exit 127: ..." already says the phase
            fact = verdict if verdict.startswith(console) else f"{console} · {verdict}"
        room = width - t.cell_len - 2
        if room >= 8 and len(fact) > room:
            fact = fact[: room - 1] + "…"
        t.append(f"  {fact}", style=phase_style(console))
        if console != obj.phase:
            inner = f"API: {obj.phase}{' / ' + obj.secondary_phase if obj.secondary_phase else ''}"
            # cut inside the brackets so the title never ends in an open "(API: Pending /"
            room = width - t.cell_len - 3
            if room < len(inner) and room >= 8:
                inner = inner[: room - 1] + "…"
            if room >= 8:
                t.append(f" ({inner})", style="dim")
        tail = f"  {obj.job_id} @{self.subject.source}"
        if width - t.cell_len >= len(tail):
            t.append(tail, style="dim")  # else it is in the fields below ("id")
        return t

    def _show_findings(self) -> None:
        super()._show_findings()
        if self.query("#subject-title"):  # the verdict is in the title: it came with them
            self.query_one("#subject-title", Static).update(
                self.title_text(self.hub.lookup(self.subject))
            )

    def _suspects(self) -> str:
        """Evidence text of the findings, lower-cased: a mount or image named there is the
        problem."""
        return " ".join(f"{f.title} {e.text}" for f in self.findings for e in f.evidence).lower()

    def fields(self, obj: object) -> Table | Text:
        if not isinstance(obj, TrainingJob):
            return Text("")
        t = obj
        now = self.hub.clock()
        suspects = self._suspects()

        def hot(value: str) -> Text:
            bad = bool(value) and value.lower() in suspects
            return Text(clean(value, 2000) or "-", style="bold red" if bad else "")

        secondary = f" / {t.secondary_phase}" if t.secondary_phase else ""
        in_phase = age(since(t.phase_since or t.create_time, now))
        rows: list[tuple[str, Text | str]] = [
            (N_("id"), f"{t.job_id} @{self.subject.source}"),
            (
                N_("phase"),
                _styled(
                    _("{console} (API {phase}{secondary}) for {age}").format(
                        console=t.console_phase, phase=t.phase, secondary=secondary, age=in_phase
                    ),
                    phase_style(t.console_phase),
                ),
            ),
            (N_("created / started"), f"{stamp(t.create_time)} / {stamp(t.start_time)}"),
            (
                N_("pool"),
                f"{t.pool_name or t.pool_id or '-'} "
                + (_("(public)") if t.pool_public else _("(dedicated)")),
            ),
            (
                N_("flavor"),
                _("{flavor}  ×{n} nodes").format(flavor=t.flavor_id or "-", n=t.node_count),
            ),
            (N_("image"), hot(t.image)),
        ]
        for m in t.mounts:
            line = hot(m.remote)
            line.append(
                f" → {clean(m.local, 200)}  "
                f"[{m.kind} {m.direction}{', ro' if m.read_only else ''}]",
                style="dim",
            )
            rows.append((N_("mount"), line))
        if t.stages:
            rows.append((N_("stages"), _timeline(t, now)))
        if (
            t.console_phase == "Initializing"
        ):  # right under the stages: where it stopped vs a good start
            diff = _baseline_diff(self.hub, t, now)
            if diff is not None:
                rows.append((N_("vs good run"), diff))
        events = sorted(
            t.events,
            key=lambda e: (
                {"Error": 0, "Warning": 1}.get(e.level, 2),
                -(e.time.timestamp() if e.time else 0),
            ),
        )
        for e in events[:12]:
            style = {"Error": "bold red", "Warning": "yellow"}.get(e.level, "dim")
            line = Text(f"{e.level:<7} ", style=style)
            line.append(f"{stamp(e.time)} {clean(e.source, 40)}: ", style="dim")
            line.append(clean(e.message, 1000))
            rows.append((N_("event"), line))
        for ts in t.task_statuses:
            rows.append(
                (
                    _("task {task}").format(task=ts.task),
                    _("exit {code} {message}").format(
                        code=ts.exit_code if ts.exit_code is not None else "-", message=ts.message
                    ),
                )
            )
        return _kv(rows)

    def build_logs(self, arts: Artifacts) -> list[tuple[str, LogReader]]:
        logs = super().build_logs(arts)
        obj = self.hub.lookup(self.subject)
        if (
            isinstance(obj, TrainingJob)
            and obj.log_preview
            and not any(r.kind == "startup" for _, r in logs)
        ):
            logs.append(
                (
                    _("startup log (preview)"),
                    BytesLogReader(
                        obj.log_preview.encode("utf-8", "replace"),
                        _("startup log"),
                        kind="startup",
                    ),
                )
            )
        return logs


def _text_of(reader: LogReader) -> str:
    """The text of an in-memory reader (a command's output), "" for a file."""
    data = getattr(reader, "data", b"")
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else ""


def _landing_offset(lt: LogText) -> int | None:
    """File offset of the first red error among an excerpt's lines (a shared daemon log's
    lines for this subject), else of its first line; None for an empty excerpt."""
    from cockpit.diagnosis.logscan import iter_errors

    if not lt.line_offsets:
        return None
    hits = list(iter_errors(lt.data, kind=lt.kind))
    hit = next((h for h in hits if h.strong), hits[0] if hits else None)
    return lt.file_offset(hit.line, hit.offset) if hit is not None else lt.line_offsets[0]


SCREENS_BY_KIND = {"job": JobScreen, "node": NodeScreen, "training_job": TrainingJobScreen}
__all__ = ["JobScreen", "NodeScreen", "SCREENS_BY_KIND", "SEVERITY_STYLE", "TrainingJobScreen"]
