"""Many sources: the fleet screen (F) shows each cluster's health and load, enter narrows the
dashboard to one cluster, the CLUSTER column stays at 80 columns, and the status line
summarises a fleet that does not fit instead of hiding the rest."""

from __future__ import annotations

from cockpit.app import CockpitApp
from cockpit.demo.site import (
    SLURMCTLD_LOG,
    SLURMD_LOG,
    DemoSite,
    DemoTransport,
)
from cockpit.screens.dashboard import DashboardScreen
from cockpit.screens.fleet import FleetScreen, FleetTable
from cockpit.screens.panes import NodeTable, QueueTable, SourceStatus
from cockpit.slurm.source import SlurmSource
from cockpit.store.acks import AckStore
from cockpit.transport import ConnectError

from .test_ui_flows import frozen, until

CLUSTERS = 12


class DownTransport(DemoTransport):
    async def run(self, argv, timeout: float = 30.0):
        raise ConnectError("ssh: connect to host hpc-05 port 22: Connection refused")


def fleet(tmp_path) -> CockpitApp:
    sources = []
    for i in range(CLUSTERS):
        site = DemoSite(7, frozen)
        transport = (DownTransport if i == 5 else DemoTransport)(site, f"hpc-{i:02d}")
        sources.append(
            SlurmSource(
                f"hpc-{i:02d}",
                transport,
                interval=15,
                clock=site.clock,
                slurmctld_log=SLURMCTLD_LOG,
                slurmd_log=SLURMD_LOG,
            )
        )
    return CockpitApp(sources, clock=frozen, acks=AckStore(tmp_path / "state.json"))


async def polled_queue(app: CockpitApp, pilot, more_than: int) -> QueueTable:
    """The dashboard's queue once every cluster has been polled and it holds more than
    ``more_than`` rows."""
    await until(pilot, lambda: all(st.polls for st in app.hub.states.values()), "every poll", 1500)
    queue = app.screen.query_one(QueueTable)
    await until(pilot, lambda: queue.row_count > more_than, "queue rows")
    return queue


async def test_fleet_screen_and_enter_narrows_the_dashboard(tmp_path):
    app = fleet(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        queue = await polled_queue(app, pilot, 0)
        # at 80 columns the CLUSTER column is still drawn: the same job id on two clusters
        header = "".join(seg.text for seg in queue.render_line(0))
        assert "CLUSTER" in header
        status = "".join(seg.text for seg in app.screen.query_one(SourceStatus).render_line(0))
        assert "12 clusters:" in status and "hpc-05" in status and "failing" in status
        await pilot.press("F")
        assert isinstance(app.screen, FleetScreen)
        table = app.screen.query_one(FleetTable)
        assert table.row_count == CLUSTERS
        by_source = {r.key: r.cells for r in table.rows}
        assert by_source["hpc-05"][-1].startswith("failing: unreachable")
        assert by_source["hpc-03"][-1] == "ok" and int(by_source["hpc-03"][3]) > 0  # pending
        assert table.move_to_key("hpc-03")
        await pilot.press("enter")
        assert isinstance(app.screen, DashboardScreen)
        queue = app.screen.query_one(QueueTable)
        await until(pilot, lambda: not queue.filter_pending, "filter")
        assert queue.row_count > 0
        assert {r.cells[-1] for r in queue.rows} == {"hpc-03"}
        nodes = app.screen.query_one(NodeTable)
        assert nodes.row_count > 0 and {r.cells[-1] for r in nodes.rows} == {"hpc-03"}
        await pilot.press("escape")  # the kept filter goes first: every cluster again
        assert queue.row_count > len({r.key for r in queue.rows if r.cells[-1] == "hpc-03"})


async def test_enter_on_a_cluster_in_the_fleet_hides_the_modelarts_pane_until_esc(tmp_path):
    # the demo's one cluster and one ModelArts project: "showing demo-hpc only" left the
    # ModelArts pane listing its 15 training jobs (it has no PROJECT column to filter on)
    from cockpit.screens.dashboard import Pane
    from cockpit.screens.panes import TrainingJobTable

    from .test_ui_flows import make_app, ready

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        training = app.screen.query_one(TrainingJobTable)
        assert training.row_count > 0
        await pilot.press("F")
        table = app.screen.query_one(FleetTable)
        assert table.move_to_key("demo-hpc")
        await pilot.press("enter")
        await pilot.pause()
        dash = app.screen
        assert isinstance(dash, DashboardScreen)
        assert not training.parent.display
        assert dash.query_one(QueueTable).parent.display
        await pilot.press("escape")
        await pilot.pause()
        assert all(p.display for p in dash.query(Pane))
        assert training.region.height > 0
        # and the other way round: the project alone hides the cluster's panes
        await pilot.press("F")
        assert app.screen.query_one(FleetTable).move_to_key("demo-modelarts")
        await pilot.press("enter")
        await pilot.pause()
        assert training.parent.display and not dash.query_one(QueueTable).parent.display


async def test_with_many_clusters_every_queue_row_shows_its_time(tmp_path):
    """The clusters' queues joined into one list still draw each running job's TIME and each
    pending job's wait (counted from the polls' time), not blank cells."""
    import re

    app = fleet(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        queue = await polled_queue(app, pilot, 40)
        await pilot.pause()
        header = "".join(seg.text for seg in queue.render_line(0))
        at = header.index("TIME")
        lines = ["".join(seg.text for seg in queue.render_line(y)) for y in range(1, 40)]
        times = [ln[at : at + 10].strip() for ln in lines]
        assert all(re.fullmatch(r"(\d+-)?(\d+:)?\d+:\d\d", t) for t in times), times
        states = {ln.split()[4] if len(ln.split()) > 4 else "" for ln in lines}
        assert any(s in ("RUNNING", "PENDING") for s in states)


class NoDatabase(DemoTransport):
    """slurmdbd is down: sacct fails, squeue and scontrol answer (a poll with warnings)."""

    async def run(self, argv, timeout: float = 30.0):
        from cockpit.transport import CommandResult

        if argv and argv[0] == "sacct":
            err = b"sacct: error: Problem talking to the database: Connection refused\n"
            return CommandResult(tuple(argv), b"", err, 1)
        return await super().run(argv, timeout)


async def test_i_on_a_fleet_row_lists_the_warnings_the_status_line_counts(tmp_path):
    site = DemoSite(7, frozen)
    source = SlurmSource(
        "hpc-db", NoDatabase(site, "hpc-db"), interval=15, clock=site.clock,
        slurmctld_log=SLURMCTLD_LOG, slurmd_log=SLURMD_LOG,
    )  # fmt: skip
    app = CockpitApp([source], clock=frozen, acks=AckStore(tmp_path / "state.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        st = app.hub.states["hpc-db"]
        await until(
            pilot, lambda: st.snapshot is not None and st.snapshot.warnings, "a poll's warnings"
        )
        status = "".join(seg.text for seg in app.screen.query_one(SourceStatus).render_line(0))
        assert "warning" in status, status
        await pilot.press("F")
        assert app.screen.query_one(FleetTable).move_to_key("hpc-db")
        await pilot.press("i")
        await pilot.pause()
        from cockpit.screens.places import SourceScreen

        assert isinstance(app.screen, SourceScreen)
        text = "\n".join(
            "".join(seg.text for seg in app.screen.query_one("#fields").render_line(y))
            for y in range(app.screen.query_one("#fields").size.height)
        )
        assert "poll warnings" in text and "Problem talking to the database" in text, text


async def test_a_projects_many_warnings_point_to_the_command_that_prints_them(tmp_path):
    """A ModelArts project whose events, stages and logs fail: its screen lists 20 of
    the poll's warnings and names the command for the rest, which must be one that accepts
    a project (`cockpit snapshot --cluster <project>` exits 2: not a cluster)."""
    from cockpit.demo.site import DEMO_PROJECT, DemoModelArtsApi
    from cockpit.modelarts.api import ModelArtsApiError
    from cockpit.modelarts.source import ModelArtsSource
    from cockpit.screens.places import SourceScreen

    class NoEvents(DemoModelArtsApi):
        def list_events(self, job_id: str) -> dict:
            raise ModelArtsApiError("server", 503, "ModelArts.0001", "events unavailable")

        def list_stages(self, job_id: str) -> dict:
            raise ModelArtsApiError("server", 503, "ModelArts.0001", "stages unavailable")

        def logs_preview(self, job_id: str, task_id: str) -> dict:
            raise ModelArtsApiError("server", 503, "ModelArts.0001", "logs unavailable")

    site = DemoSite(7, frozen)
    source = ModelArtsSource(DEMO_PROJECT, NoEvents(site), interval=30, clock=site.clock)
    app = CockpitApp([source], clock=frozen, acks=AckStore(tmp_path / "state.json"))
    async with app.run_test(size=(100, 40)) as pilot:
        st = app.hub.states[DEMO_PROJECT]
        await until(pilot, lambda: st.snapshot is not None, "a poll")
        assert len(st.snapshot.warnings) > 20, st.snapshot.warnings
        await pilot.press("F")
        assert app.screen.query_one(FleetTable).move_to_key(DEMO_PROJECT)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, SourceScreen)
        fields = app.screen.query_one("#fields")
        text = "\n".join(
            "".join(seg.text for seg in fields.render_line(y)) for y in range(fields.size.height)
        )
        assert "events: server: events" in text, text
        assert f"cockpit snapshot --modelarts {DEMO_PROJECT}" in text, text


async def test_with_several_clusters_the_incident_view_keeps_source_at_80_columns(tmp_path):
    # two rows "CRIT job 34 …" are two jobs on two clusters: at 80x24 SOURCE made way and
    # they read as one job twice (a new-user trial with a local and an SSH cluster)
    from cockpit.screens.panes import IncidentTable

    app = fleet(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await polled_queue(app, pilot, 0)
        await pilot.press("i")
        table = app.screen.query_one(IncidentTable)
        await until(pilot, lambda: table.row_count > 0, "incident rows")
        header = "".join(seg.text for seg in table.render_line(0))
        assert "SOURCE" in header, header
        row = "".join(seg.text for seg in table.render_line(1))
        assert "hpc-" in row, row


async def test_the_palette_names_the_cluster_of_each_job_it_finds(tmp_path):
    # ctrl+p listed "job 38 nu-oom root OUT_OF_MEMORY" twice, one per cluster, alike
    from cockpit.screens.commands import CockpitCommands

    app = fleet(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await polled_queue(app, pilot, 0)
        jid = app.hub.states["hpc-00"].snapshot.jobs[0].job_id
        hits = [h for h in CockpitCommands(app.screen).ranked(jid) if h[1] == "job"]
        assert len(hits) > 1
        labels = [h[3] for h in hits]
        assert len(set(labels)) == len(labels), labels  # each says which cluster
        assert all(" @hpc-" in label for label in labels), labels
