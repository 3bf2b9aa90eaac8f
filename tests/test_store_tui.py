"""The incident lifecycle in the TUI with a store: an incident outlives squeue until it is
acknowledged, a dead controller is an incident, and a store that goes away mid-session costs
no ack."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from datetime import timedelta

import pytest

from cockpit.app import CockpitApp
from cockpit.model import ExitCode, SlurmJob, SourceError
from cockpit.screens.panes import SourceStatus
from cockpit.store import open_store
from tests.pg import postgres  # noqa: F401 - the session fixture
from tests.ui_support import NOW, FakeSource


def failed_job(job_id: str = "20") -> SlurmJob:
    return SlurmJob(
        job_id,
        "bwa-align",
        "ana",
        "cpu",
        "FAILED",
        "NonZeroExitCode",
        cpus=4,
        node_count=1,
        nodes=("c1",),
        node_list="c1",
        elapsed_s=60,
        submit_time=NOW - timedelta(minutes=10),
        end_time=NOW - timedelta(minutes=1),
        exit_code=ExitCode(127, 0),
    )


async def until(pilot, cond, what, tries: int = 600) -> None:
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")


async def poll(app, pilot, cond, what: str) -> None:
    """Poll (``r``) until ``cond`` holds: a wake during a poll in flight is not a new poll."""
    for _ in range(60):
        app.hub.refresh_now()
        for _ in range(20):
            if cond():
                return
            await pilot.pause(0.05)
    raise AssertionError(f"timed out polling for {what}")


def job_keys(app) -> dict[str, object]:
    """Failed job id -> the open incident listing it (as its subject or among the affected)."""
    out = {}
    for si in app.hub.open_incidents:
        for s in (si.incident.subject, *si.incident.affected):
            if s.kind == "job":
                out.setdefault(s.id, si)
    return out


async def test_a_job_gone_from_squeue_stays_until_acknowledged(tmp_path):
    src = FakeSource("lab", jobs=(failed_job(),))
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    app = CockpitApp([src], clock=lambda: NOW, bell=False, store=store)
    async with app.run_test() as pilot:
        await until(pilot, lambda: "20" in job_keys(app), "the failed job's incident")
        src.jobs = ()  # MinJobAge passed: slurmctld forgot the job
        await poll(app, pilot, lambda: job_keys(app)["20"].gone, "the job to be gone")
        si = job_keys(app)["20"]
        assert si.resolved_at is not None  # still listed: not acknowledged
        await pilot.press("i")
        await pilot.pause(0.3)
        table = app.screen.query_one("#incident-table")
        assert table.cursor_key == si.key  # the only incident: listed, under the cursor
        detail = str(app.screen.query_one("#incident-detail").render())
        assert "gone from squeue" in detail
        # acknowledged (with a note) and gone: it leaves the list, in every cockpit
        assert app.acks.toggle(si.key, "rerun with the module loaded", NOW)
        app.acks.flush(10)
        await poll(app, pilot, lambda: "20" not in job_keys(app), "the acked job to leave")
    assert open_store(f"sqlite:///{tmp_path}/c.db").acks()[si.key].note == (
        "rerun with the module loaded"
    )


async def test_a_dead_controller_is_an_incident_resolved_when_it_answers(tmp_path):
    src = FakeSource("lab", jobs=())
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    app = CockpitApp([src], clock=lambda: NOW, bell=False, store=store)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.hub.remembered is not None, "the first poll")
        src.fail = SourceError("unreachable", "slurmctld: Connection refused")
        await poll(
            app,
            pilot,
            lambda: any(
                s.incident.root_cause == "source_unreachable" for s in app.hub.open_incidents
            ),
            "the outage incident",
        )
        [out] = [s for s in app.hub.open_incidents if s.incident.root_cause == "source_unreachable"]
        assert out.key.startswith("source|lab|") and out.incident.severity == "critical"
        assert out.resolved_at is None
        src.fail = None
        await poll(
            app,
            pilot,
            lambda: any(s.key == out.key and s.resolved_at for s in app.hub.open_incidents),
            "the outage to resolve",
        )
        [back] = [s for s in app.hub.open_incidents if s.key == out.key]
        assert back.resolved_at is not None  # resolved with the time; open until acked
        app.acks.toggle(out.key, "", NOW)
        app.acks.flush(10)
        await poll(
            app,
            pilot,
            lambda: all(s.key != out.key for s in app.hub.open_incidents),
            "the acked, resolved outage to leave",
        )


def test_cockpit_incidents_exits_3_and_lists_the_outage_of_a_source_it_cannot_read(tmp_path):
    with socket.socket() as s:  # a port nobody listens on: the controller is down
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[clusters.lab]\n"
        'transport = "ssh"\nhost = "127.0.0.1"\n'
        f"port = {port}\n"
        'user = "nobody"\ninsecure_ignore_host_key = true\nconnect_timeout = 2\n'
        f'[store]\nurl = "sqlite:///{tmp_path}/c.db"\n'
    )
    r = subprocess.run(
        [sys.executable, "-m", "cockpit", "--config", str(cfg), "incidents", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"XDG_STATE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert r.returncode == 3, r.stderr  # the only source did not answer: no all-clear (3)
    doc = json.loads(r.stdout)
    [inc] = doc["incidents"]
    assert inc["root_cause"] == "source_unreachable" and inc["key"].startswith("source|lab|")


async def test_store_down_mid_session_keeps_the_cockpit_and_the_ack(postgres):  # noqa: F811
    url = postgres.fresh_database("tuidown")
    src = FakeSource("lab", jobs=(failed_job("31"),))
    app = CockpitApp([src], clock=lambda: NOW, bell=False, store=open_store(url))
    async with app.run_test() as pilot:
        await until(pilot, lambda: "31" in job_keys(app), "the failed job's incident")
        key = job_keys(app)["31"].key
        postgres.stop()
        try:
            src.jobs = (failed_job("31"), failed_job("32"))
            app.hub.refresh_now()
            await until(pilot, lambda: not app.store.available, "the store to be missed")
            await until(pilot, lambda: "32" in job_keys(app), "the new failure, from memory")
            status = app.screen.query_one(SourceStatus)
            status.sync()
            await pilot.pause(0.2)
            assert "store unavailable" in str(status.render())
            # ack through the keys while the database is down
            await pilot.press("i")
            await pilot.pause(0.3)
            app.screen.query_one("#incident-table").cursor_key  # noqa: B018 - focus settles
            assert app.acks.toggle(key, "while the db was down", NOW)
            app.acks.flush(10)
            assert app.acks.ack_of(key) is not None and app.store.pending == 1
        finally:
            postgres.start()
        app.store._tried = 0.0  # the next poll retries without waiting RETRY_S
        await poll(app, pilot, lambda: app.store.available, "the store to be back")
        app.acks.flush(10)
        assert app.store.pending == 0
    a = open_store(url).acks()[key]
    assert a.note == "while the db was down"


def test_cockpit_incidents_exits_1_when_one_of_its_sources_could_not_be_read(
    tmp_path, monkeypatch, capsys
):
    import argparse

    from cockpit.commands import incidents as cmd
    from tests.ui_support import FakeSource

    down = FakeSource("lab")
    down.fail = SourceError("unreachable", "slurmctld: Connection refused")
    sources = [FakeSource("hpc"), down]
    monkeypatch.setattr(cmd, "_select", lambda args: sources)
    monkeypatch.setattr(cmd, "store_for", lambda args: open_store(f"sqlite:///{tmp_path}/c.db"))
    assert cmd.run(argparse.Namespace(json=True, markdown=False)) == 1
    [inc] = json.loads(capsys.readouterr().out)["incidents"]
    assert inc["root_cause"] == "source_unreachable" and inc["subject"]["id"] == "lab"


async def test_a_gone_job_opens_to_the_evidence_stored_when_it_failed(tmp_path):
    from cockpit.model import Artifacts, Subject

    src = FakeSource("lab", jobs=(failed_job("40"),))
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    app = CockpitApp([src], clock=lambda: NOW, bell=False, store=store)
    subject = Subject("job", "lab", "40")
    async with app.run_test() as pilot:
        await until(pilot, lambda: store.evidence("lab", subject) is not None, "evidence stored")
        src.jobs = ()

        async def forgotten(subject, snapshot):  # scontrol: Invalid job id; logs rotated
            return Artifacts()

        src.artifacts = forgotten
        await poll(app, pilot, lambda: job_keys(app)["40"].gone, "the job to be gone")
        arts, _ = await app.hub.artifacts(subject)
        assert [g.name for g in arts.logs] == ["slurmctld.log"]


async def test_the_source_resumes_from_the_stores_cursor(tmp_path):
    seen = []

    class Resuming(FakeSource):
        def resume_from(self, at):
            seen.append(at)

        def cursor(self):
            return NOW - timedelta(seconds=5)

    url = f"sqlite:///{tmp_path}/c.db"
    open_store(url).set_cursor("lab", NOW - timedelta(hours=9))  # last night's cockpit
    src = Resuming("lab")
    app = CockpitApp([src], clock=lambda: NOW, bell=False, store=open_store(url))
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.hub.remembered is not None, "the first poll")
    assert seen == [NOW - timedelta(hours=9)]
    assert open_store(url).cursor("lab") == NOW - timedelta(seconds=5)


async def test_a_poll_landing_while_a_view_composes_is_left_to_its_mount(tmp_path):
    """`i` pressed as a poll ends: the poll's update reaches the incident view before its
    table exists. The view reads the hub when it mounts; the update must not crash the app
    (it raised NoMatches for IncidentTable in CI)."""
    from cockpit.runtime.state import HubUpdated
    from cockpit.screens.incidents import IncidentScreen

    src = FakeSource("lab", jobs=(failed_job("50"),))
    app = CockpitApp(
        [src], clock=lambda: NOW, bell=False, store=open_store(f"sqlite:///{tmp_path}/s.db")
    )
    async with app.run_test() as pilot:
        await until(pilot, lambda: "50" in job_keys(app), "the failed job's incident")
        app.action_incidents()  # pushed, not composed yet
        app.on_hub_updated(HubUpdated("lab"))
        await pilot.pause()
        assert isinstance(app.screen, IncidentScreen)
        assert app.screen.query_one("#incident-table").row_count >= 1


async def test_the_queue_is_on_screen_before_the_store_has_opened(tmp_path):
    """The TUI opens the store on a thread while the first poll runs (it cost ~0.5 s before
    the first frame): the queue and the status line do not wait for it, and once it is open
    the incidents are kept in it."""
    import threading

    from cockpit.store.opening import OpeningStore

    gate = threading.Event()
    url = f"sqlite:///{tmp_path}/c.db"

    def slow_open():
        gate.wait(20)
        return open_store(url)

    src = FakeSource("lab", jobs=(failed_job("60"),))
    store = OpeningStore(slow_open)
    app = CockpitApp([src], clock=lambda: NOW, bell=False, store=store)
    try:
        async with app.run_test() as pilot:
            title = app.screen.query_one("#queue-title")
            await until(pilot, lambda: " Queue 1" in str(title.render()), "the queue on screen")
            assert not store.ready
            assert "store" not in str(app.screen.query_one(SourceStatus).render())
            gate.set()
            await until(pilot, lambda: app.hub.remembered is not None, "the store's answer")
            assert "60" in job_keys(app)
        assert [s.incident.subject.id for s in open_store(url).incidents(NOW)] == ["60"]
    finally:
        gate.set()


async def test_a_store_that_cannot_open_ends_the_tui_and_says_why_in_one_line(
    tmp_path, monkeypatch
):
    """A database of a newer cockpit: refused before the TUI started, when the store opened
    first; now it opens with the first poll, and the TUI ends on it with the same line."""
    import argparse

    import sqlalchemy as sa

    from cockpit.errors import UserError
    from cockpit.store import schema as store_schema
    from cockpit.store.opening import OpeningStore

    url = f"sqlite:///{tmp_path}/c.db"
    with open_store(url).engine.begin() as conn:
        conn.execute(sa.update(store_schema.schema_version).values(version=99))
    app = CockpitApp(
        [FakeSource("lab")],
        clock=lambda: NOW,
        bell=False,
        store=OpeningStore(lambda: open_store(url)),
    )
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.return_code == 2, "the app to end")
    # and `cockpit` prints it as one line, exit status 2
    import cockpit.app

    class Started:
        def __init__(self, sources, **kw) -> None:
            self.store = kw["store"]
            self.return_code = None

        def run(self):
            self.store.start()
            self.store.settled()
            return 2

    monkeypatch.setattr(cockpit.app, "CockpitApp", Started)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[clusters.lab]\ntransport = "local"\n[store]\nurl = "{url}"\n')
    from cockpit.commands import tui

    args = argparse.Namespace(demo=False, config=str(cfg), no_bell=True)
    with pytest.raises(UserError, match="newer than this cockpit"):  # cli: one line, exit 2
        tui.run(args)
