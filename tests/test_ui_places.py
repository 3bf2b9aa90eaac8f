"""Every incident opens to a detail view: a ModelArts pool shows its nodes (abnormal first),
a cluster-wide incident (surge, full filesystem) shows the cluster with its findings."""

from __future__ import annotations

from textual.widgets import Static

from cockpit.screens.dashboard import DashboardScreen
from cockpit.screens.places import PoolNodeTable, PoolScreen, SourceScreen
from cockpit.screens.subject import SubjectScreen

from .test_hostile_text import painted
from .test_ui_flows import make_app, ready, until


async def test_every_demo_incident_opens_a_detail_view(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: len(app.hub.incidents) > 10, "incidents", 500)
        kinds = set()
        for inc in app.hub.incidents:
            notes = len(app._notifications)
            app.open_subject(inc.subject)
            await pilot.pause()
            assert isinstance(app.screen, SubjectScreen), (inc.subject, inc.title)
            assert not any(
                "no detail view" in str(n.message) for n in list(app._notifications)[notes:]
            )
            kinds.add(inc.subject.kind)
            app.pop_screen()
            await pilot.pause()
            assert isinstance(app.screen, DashboardScreen)
        # the demo's incidents are about jobs, nodes, training jobs, a pool and the cluster
        assert {"job", "node", "training_job", "pool", "cluster"} <= kinds


async def test_pool_screen_lists_abnormal_nodes_first(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await until(
            pilot, lambda: any(i.subject.kind == "pool" for i in app.hub.incidents), "pool", 500
        )
        inc = next(i for i in app.hub.incidents if i.subject.kind == "pool")
        app.open_subject(inc.subject)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PoolScreen)
        table = screen.query_one(PoolNodeTable)
        await until(pilot, lambda: table.row_count > 0, "pool nodes")
        first = table.rows[0].cells
        assert first[1] == "Abnormal"  # the node to look at is on top
        assert "not Available" in "\n".join(painted(screen.query_one("#fields", Static)))
        assert any(f.root_cause == inc.root_cause for f in screen.findings)


async def test_a_cluster_incident_opens_the_cluster_with_its_findings(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await until(
            pilot,
            lambda: any(i.subject.kind == "cluster" for i in app.hub.incidents),
            "a cluster incident",
            500,
        )
        inc = next(i for i in app.hub.incidents if i.subject.kind == "cluster")
        app.open_subject(inc.subject)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SourceScreen)
        assert inc.primary in screen.findings
        assert "running / pending" in "\n".join(painted(screen.query_one("#fields", Static)))


async def test_pools_pane_lists_pools_and_opens_one(tmp_path):
    from cockpit.screens.places import PoolsScreen, PoolTable

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(app, pilot)
        await until(
            pilot, lambda: app.hub.states["demo-modelarts"].snapshot is not None, "ModelArts"
        )
        await pilot.press("P")
        assert isinstance(app.screen, PoolsScreen)
        table = app.screen.query_one(PoolTable)
        pools = app.hub.states["demo-modelarts"].snapshot.pools
        assert table.row_count == len(pools) > 0
        first = table.rows[0]
        assert int(first.cells[4]) > 0  # the pool with a node not Available is on top
        await pilot.press("enter")
        assert isinstance(app.screen, PoolScreen)
        assert app.screen.subject.id == first.key.split("\x1f")[1]
        await pilot.press("escape")
        assert isinstance(app.screen, PoolsScreen)
