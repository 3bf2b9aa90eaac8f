"""The alert screen in the TUI: a transition between two polls shows up under ``A``."""

from cockpit.app import CockpitApp
from cockpit.model import SlurmJob, SlurmNode, SourceError
from cockpit.screens.alerts import AlertScreen, AlertTable
from cockpit.store.acks import AckStore
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher
from tests.ui_support import FakeSource, frozen


def job(state):
    return SlurmJob("4", "train", "alice", "gpu", state, "None", node_list="cn01")


async def test_alert_screen_lists_transitions_and_mutes(tmp_path):
    src = FakeSource(jobs=[job("RUNNING")], nodes=[SlurmNode("cn01", "MIXED")])
    watcher = Watcher(AlertConfig())
    app = CockpitApp(
        [src], clock=frozen, bell=False, acks=AckStore(tmp_path / "s.json"), watcher=watcher
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await app.hub.first_round.wait()
        src.jobs = (job("OUT_OF_MEMORY"),)
        src.nodes = (SlurmNode("cn01", "MIXED", flags=("DRAIN",), reason="Kill task failed"),)
        await app.hub.poll_once(app.hub.states["lab"])
        src.fail = SourceError("unreachable", "ssh: connection refused")
        await app.hub.poll_once(app.hub.states["lab"])
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, AlertScreen)
        table = app.screen.query_one(AlertTable)
        assert table.row_count == 3
        first = [r.cells for r in table.rows]  # newest first
        assert first[0][2] == "source_down" and "connection refused" in first[0][4]
        assert {c[2] for c in first[1:]} == {"node_unhealthy", "job_failed"}
        await pilot.press("M")  # mute the rule under the cursor (source_down)
        assert "rule:source_down" in [str(m) for m in watcher.rules.mutes]
        await pilot.press("escape")
        assert not isinstance(app.screen, AlertScreen)
