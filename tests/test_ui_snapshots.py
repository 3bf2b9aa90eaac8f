"""Snapshot tests (pytest-textual-snapshot) of the main screens on the demo with a frozen clock.

Regenerate after an intended visual change with ``pytest tests/test_ui_snapshots.py
--snapshot-update`` and look at the SVGs in the report before committing them.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cockpit.app import CockpitApp
from cockpit.demo.site import demo_sources
from cockpit.model import Subject
from cockpit.store.acks import AckStore

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)
SIZES = [(80, 24), (160, 48)]


def frozen() -> datetime:
    return NOW


@pytest.fixture(autouse=True)
def utc_local_time(monkeypatch):
    """The status line shows data times in the local zone: draw them in UTC on any machine."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def demo_app(tmp_path) -> CockpitApp:
    return CockpitApp(
        demo_sources(7, clock=frozen),
        clock=frozen,
        acks=AckStore(tmp_path / "state.json"),
        banner="DEMO SITE (simulated, --demo)",
    )


def _caught_up(app) -> bool:
    """The visible screen has applied the hub's latest generation (its HubUpdated was handled)."""
    screen, gen = app.screen, app.hub.generation
    applied = getattr(screen, "_applied", None)
    if isinstance(applied, tuple):
        applied = applied[0]
    if applied is None:
        applied = getattr(screen, "_loaded_for", gen)
    return applied == gen


async def _settle(pilot, cond=lambda app: True) -> None:
    app = pilot.app
    await app.hub.first_round.wait()
    for _ in range(300):
        await pilot.pause(0.02)
        if (
            cond(app)
            and _caught_up(app)
            and not any(w.is_running for w in app.workers if w.group != "poll")
        ):
            break
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_dashboard(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=_settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_job_screen(snap_compare, tmp_path, size):
    async def open_job(pilot):
        await _settle(pilot)
        pilot.app.open_subject(Subject("job", "demo-hpc", "48102"))
        await _settle(pilot, lambda app: bool(getattr(app.screen, "logs", None)))

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=open_job)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_incident_view(snap_compare, tmp_path, size):
    async def open_incidents(pilot):
        await _settle(pilot)
        await pilot.press("i")
        await _settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=open_incidents)


def _opener(subject: Subject, ready=lambda app: True):
    async def run_before(pilot):
        await _settle(pilot)
        pilot.app.open_subject(subject)
        await _settle(pilot, ready)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_node_screen(snap_compare, tmp_path, size):
    node = _opener(Subject("node", "demo-hpc", "cn013"))
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=node)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_training_job_screen(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _settle(pilot)
        app = pilot.app
        snap = app.hub.states["demo-modelarts"].snapshot
        stuck = next(t for t in snap.training_jobs if t.console_phase == "Initializing")
        app.open_subject(Subject("training_job", "demo-modelarts", stuck.job_id))
        await _settle(pilot, lambda app: bool(getattr(app.screen, "logs", None)))

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_log_screen(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _settle(pilot)
        pilot.app.open_subject(Subject("job", "demo-hpc", "48102"))
        await _settle(pilot, lambda app: bool(getattr(app.screen, "logs", None)))
        await pilot.press("l")
        await _settle(pilot, lambda app: getattr(app.screen.query("LogView").first(), "_done", 0))

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_pool_screen(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _settle(pilot)
        app = pilot.app
        pool = next(i.subject for i in app.hub.incidents if i.subject.kind == "pool")
        app.open_subject(pool)
        await _settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_fleet_screen(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("F")
        await _settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_action_confirm_dialog(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=guarded_action)


async def guarded_action(pilot) -> None:
    """The drain dialog of node bm01 (in service), its reason typed, drawn once the node's
    screen has its evidence and each modal is up (pressing ahead of them made the screen
    under the dialog differ from run to run: a clean clone's CI drew another focus)."""
    from textual.widgets import Input

    from cockpit.screens.actions import ActionMenu, ConfirmAction
    from cockpit.screens.subject import NodeScreen

    await _settle(pilot)
    pilot.app.open_subject(Subject("node", "demo-hpc", "bm01"))  # a node in service
    await _settle(pilot, lambda app: isinstance(app.screen, NodeScreen) and bool(app.screen.logs))
    await pilot.press("a")
    await _settle(pilot, lambda app: isinstance(app.screen, ActionMenu))
    await pilot.press("enter")
    await _settle(pilot, lambda app: isinstance(app.screen, ConfirmAction))
    # the reason's cursor blinks every 0.5 s: on a loaded CI machine the picture was taken
    # with it off (test_guarded_action_zh failed at both sizes); held on, as after a key
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False
    await pilot.press(*"fan FAN2 failed")
    await _settle(pilot)
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_screen(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("f1")
        await pilot.pause(0.2)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)
