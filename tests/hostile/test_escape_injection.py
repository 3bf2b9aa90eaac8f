"""Terminal escape injection: job names, node reasons, log lines and ModelArts event
messages carrying CSI/OSC/DCS/APC/C1/BEL/backspace never reach the terminal raw, and
the text around them stays readable — in the sanitiser, the TUI, and the CLI outputs."""

from __future__ import annotations

import io
import json

import pytest
from cockpit.widgets.logview import LogView
from rich.console import Console

from cockpit.app import CockpitApp
from cockpit.model import Subject
from cockpit.screens.log import LogScreen
from cockpit.screens.panes import QueueTable
from cockpit.screens.subject import JobScreen, NodeScreen, TrainingJobScreen
from cockpit.store.acks import AckStore
from cockpit.text import clean, strip_ansi
from tests.hostile.corpus import ESCAPES, RAW_CONTROL, visible_text, wrap
from tests.hostile.site import DRAINED_NODE, OOM_JOB, frozen, hostile_sources, screen_lines

# A CR shows only what follows it (as a terminal would): keep it out of the combined string.
ALL = " ".join(wrap(tag, p) for tag, (p, _) in ESCAPES.items() if tag != "cr_overwrite")


@pytest.mark.parametrize("tag", sorted(ESCAPES))
@pytest.mark.parametrize("as_bytes", [False, True])
def test_clean_strips_every_sequence_and_keeps_the_text(tag, as_bytes):
    payload, shown = ESCAPES[tag]
    raw = wrap(tag, payload)
    out = clean(raw.encode("utf-8") if as_bytes else raw)
    assert "\x1b" not in out and not RAW_CONTROL.search(out), repr(out)
    assert out.endswith(f"{tag}-end")
    assert out.startswith(f"{tag}-start")  # a CR hides nothing before it
    assert visible_text(shown) in visible_text(out)
    # nothing of the hidden payload leaks as text either
    for hidden in ("owned-title", "dG91Y2gg", "evil.example", "/etc/passwd"):
        assert hidden not in out


def test_clean_on_8bit_c1_bytes_decoded_as_latin1_and_invalid_utf8():
    # C1 controls arrive as U+0080..U+009F when a log is decoded leniently; raw 0x9b bytes
    # are invalid UTF-8 and become U+FFFD, never a CSI.
    assert not RAW_CONTROL.search(clean(b"a\x9b31mb\x9d0;t\x9cc".decode("latin-1")))
    assert clean(b"a\x9b31mb") == "a\ufffd31mb"


@pytest.mark.parametrize("cut", ["tail\x1b[31", "tail\x1b]52;c;AAAA", "tail\x1bP$q", "tail\x1b"])
def test_sequences_cut_at_the_end_of_a_line_are_dropped(cut):
    assert clean(cut) == "tail"


def test_strip_ansi_on_a_10_mb_line_of_escapes_keeps_only_the_text():
    # its speed is measured in bench/bench_hostile_text.py (no timing in tests)
    line = ("\x1b[31m" + "x" * 50 + "\x1b]8;;u\x07") * 160_000
    assert strip_ansi(line) == "x" * 50 * 160_000


async def _ready(app, pilot):
    await app.hub.first_round.wait()
    for _ in range(200):
        if app.screen.query(QueueTable) and app.screen.query_one(QueueTable).row_count:
            break
        await pilot.pause(0.02)


def _assert_clean_screen(app, *must_show: str) -> str:
    lines = screen_lines(app)
    text = "\n".join(lines)
    bad = [(i, ln) for i, ln in enumerate(lines) if "\x1b" in ln or RAW_CONTROL.search(ln)]
    assert not bad, f"raw control characters on screen: {bad[:3]!r}"
    svg = app.export_screenshot()
    assert "\x1b" not in svg and not RAW_CONTROL.search(svg.replace("\n", ""))
    flat = visible_text(text)
    for s in must_show:
        assert visible_text(s) in flat, f"{s!r} not readable on screen"
    return text


async def test_tui_dashboard_job_node_training_and_log_screens_show_no_raw_escapes(tmp_path):
    # one distinct payload per job near the top of the queue, all of them on the node and events
    log_lines = [f"RuntimeError: step failed {wrap(tag, p)}" for tag, (p, _) in ESCAPES.items()]
    slurm, ma, transport, api = hostile_sources(ALL, log_lines=log_lines)
    app = CockpitApp([slurm, ma], clock=frozen, acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(200, 60)) as pilot:
        await _ready(app, pilot)
        _assert_clean_screen(app)

        app.open_subject(Subject("job", slurm.name, OOM_JOB))
        for _ in range(300):
            if isinstance(app.screen, JobScreen) and app.screen.logs:
                break
            await pilot.pause(0.02)
        _assert_clean_screen(
            app, f"{next(iter(ESCAPES))}-start"
        )  # job name: title shows the start of it

        await pilot.press("l")  # the job's log, opened at its first red error
        assert isinstance(app.screen, LogScreen)
        view = app.screen.query_one(LogView)
        for _ in range(300):
            if view._done:
                break
            await pilot.pause(0.02)
        view.go_to_line(1)
        await pilot.pause()
        _assert_clean_screen(
            app,
            "csi_sgr-start RED csi_sgr-end",
            "osc8_link-start click me osc8_link-end",
            "backspace-start safeevil backspace-end",
        )
        await pilot.press("escape", "escape")

        app.open_subject(Subject("node", slurm.name, DRAINED_NODE))
        await pilot.pause(0.2)
        assert isinstance(app.screen, NodeScreen)
        _assert_clean_screen(app, "csi_sgr-start RED csi_sgr-end", "bel-start dingdong bel-end")
        await pilot.press("escape")

        tj = next(t for t in app.hub.snapshot(ma.name).training_jobs if t.events)
        app.open_subject(Subject("training_job", ma.name, tj.job_id))
        await pilot.pause(0.3)
        assert isinstance(app.screen, TrainingJobScreen)
        _assert_clean_screen(app, "csi_sgr-start RED csi_sgr-end")
        await pilot.press("escape")
    assert "list_events" in api.calls


def test_cli_snapshot_json_and_table_carry_no_raw_escapes(monkeypatch, capsys):
    import asyncio

    from cockpit import cli
    from cockpit.commands import snapshot

    slurm, ma, *_ = hostile_sources(ALL)
    monkeypatch.setattr("cockpit.connect.select_sources", lambda args: [slurm, ma])
    assert cli.main(["snapshot", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and not RAW_CONTROL.search(out.replace("\n", ""))
    data = json.loads(out)
    job = next(j for j in data[0]["jobs"] if j["job_id"] == OOM_JOB)
    assert job["name"] == ALL  # JSON keeps the data faithfully, escaped as \u001b

    slurm, ma, *_ = hostile_sources(ALL)
    snaps = [asyncio.run(slurm.poll()), asyncio.run(ma.poll())]
    buf = io.StringIO()
    console = Console(file=buf, width=300, force_terminal=True, color_system=None)
    for s in snaps:
        snapshot.render(s, console)
    table = buf.getvalue()
    assert not RAW_CONTROL.search(table.replace("\n", "")), "raw control in the Rich table"
    assert "csi_sgr-start" in table


def test_cli_incidents_markdown_carries_no_raw_escapes(monkeypatch, capsys):
    from cockpit import cli

    lines = [
        f"slurmstepd: error: Detected 1 oom_kill event in StepId={OOM_JOB}.batch. {wrap(t, p)}"
        for t, (p, _) in ESCAPES.items()
    ]
    slurm, ma, *_ = hostile_sources(ALL, log_lines=lines)
    monkeypatch.setattr("cockpit.connect.select_sources", lambda args: [slurm, ma])
    rc = cli.main(["incidents", "--markdown"])
    out = capsys.readouterr().out
    assert rc in (0, 1, 2) and out.startswith("# Cockpit incident report")
    assert "\x1b" not in out and not RAW_CONTROL.search(out.replace("\n", ""))
    assert "csi_sgr-start" in out  # the hostile text is there, readable
