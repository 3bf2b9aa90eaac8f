"""The cockpit in Chinese (``--lang zh``) at 80x24, as a tmux pane shows it, and at 160x48: the
dashboard, a job's drill-down, its log at the first red error, the incident view, a training
job and a guarded action's dialog. CJK text is two cells a character: no column may overflow
or cut a fact, and every critical verdict keeps the number that decides it.

Regenerate with ``pytest tests/test_ui_snapshots_zh.py --snapshot-update`` and look at the SVGs
(the finding texts come from the engine's catalogue: regenerate after it changes).
"""

from __future__ import annotations

import html

import pytest

from cockpit import i18n
from cockpit.model import Subject
from cockpit.screens.panes import NodeTable, QueueTable, TrainingJobTable

from .test_deciding_facts_on_screen import JOBS, NODES, _row_line, critical_incidents
from .test_ui_flows import make_app, ready, until
from .test_ui_snapshots import _settle, demo_app, guarded_action, utc_local_time  # noqa: F401

SIZES = [(80, 24), (160, 48)]
ids = lambda s: f"{s[0]}x{s[1]}"  # noqa: E731


@pytest.fixture(autouse=True)
def chinese():
    i18n.set_language("zh")
    yield
    i18n.set_language("en")


async def _job(pilot):
    await _settle(pilot)
    pilot.app.open_subject(Subject("job", "demo-hpc", "48102"))
    await _settle(pilot, lambda app: bool(getattr(app.screen, "logs", None)))


async def _log(pilot):
    await _job(pilot)
    await pilot.press("l")
    await _settle(pilot, lambda app: getattr(app.screen.query("LogView").first(), "_done", 0))


async def _incidents(pilot):
    await _settle(pilot)
    await pilot.press("i")
    await _settle(pilot)


async def _training_job(pilot):
    await _settle(pilot)
    app = pilot.app
    snap = app.hub.states["demo-modelarts"].snapshot
    stuck = next(t for t in snap.training_jobs if t.console_phase == "Initializing")
    app.open_subject(Subject("training_job", "demo-modelarts", stuck.job_id))
    await _settle(pilot, lambda app: bool(getattr(app.screen, "logs", None)))


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_dashboard_zh(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=_settle)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_job_screen_zh(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=_job)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_log_at_first_red_error_zh(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=_log)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_incident_view_zh(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=_incidents)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_training_job_screen_zh(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=_training_job)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_guarded_action_zh(snap_compare, tmp_path, size):
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=guarded_action)


def _screen_text(app) -> str:
    """The SVG's text, its non-breaking spaces as spaces."""
    return html.unescape(app.export_screenshot()).replace("\xa0", " ")


async def test_dashboard_zh_reads_chinese(tmp_path):
    """What a person reads on the 80x24 dashboard: the panes' titles, the columns, the keys and
    the top incident in Chinese; job ids, states and the deciding figures as Slurm prints them."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot)
        text = _screen_text(app)
    for word in ("队列", "节点", "训练作业", "作业ID", "结论", "故障", "帮助", "演示站点"):
        assert word in text, word
    for fact in ("48104", "FAILED", "MaxCPUsPerNode 48", "DOWN*", "cn031"):
        assert fact in text, fact


async def test_log_and_guarded_action_read_chinese(tmp_path):
    """The log's status line (line, counts, what the red line is) and the guarded action's
    dialog (what runs, the exact command, the keys) in Chinese at 80x24; the command as is."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _log(pilot)
        log = _screen_text(app)
    assert "/6 行" in log and "1 个错误" in log and "此处: oom_killed" in log, log
    app = demo_app(tmp_path / "action")
    async with app.run_test(size=(80, 24)) as pilot:
        await guarded_action(pilot)
        dialog = _screen_text(app)
    assert "将执行" in dialog and "enter: 执行" in dialog
    assert "scontrol update NodeName=bm01 State=DRAIN 'Reason=fan FAN2 failed'" in dialog


# Facts that no translation touches (numbers, Slurm's limits, reasons and node names, program
# and library names, exit codes) from the English list of every critical verdict of the demo
# (tests/test_deciding_facts_on_screen.py); prose facts ("could not talk") are the engine's
# Chinese and are left to its tests.
ZH_JOBS = {k: v for k, v in JOBS.items() if k != "48106"} | {"48104": ("fastqc",)}
ZH_TRAINING = {
    "custom-alpine-train": ("exit 127",),
    "detr-coco-obs": ("AccessDenied",),
    "gpt2-zh-pretrain-v2": ("pip",),
}


@pytest.mark.parametrize("size", SIZES, ids=ids)
async def test_every_critical_row_keeps_its_deciding_number_zh(tmp_path, size):
    """In Chinese, in the text a person reads: every critical job's row keeps its deciding
    figure whole (``64 CPUs > MaxCPUsPerNode 48``), every node out of service its reason, the
    training jobs their exit code or error, and no painted line is wider than the terminal."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        screen, cut = app.screen, []
        panes = ((QueueTable, ZH_JOBS), (NodeTable, NODES), (TrainingJobTable, ZH_TRAINING))
        for table_cls, facts in panes:
            table = screen.query_one(table_cls)
            await until(pilot, lambda t=table: t.row_count > 0, f"{table.id} rows")
            for first, want in facts.items():
                line = await _row_line(pilot, table, first)
                assert len(line.rstrip()) <= size[0]
                cut += [f"{first}: {w!r} not in {line.rstrip()!r}" for w in want if w not in line]
        assert not cut, "\n".join(cut)


async def test_every_critical_incident_keeps_its_deciding_number_zh(tmp_path):
    """80x24 incident view in Chinese: a critical job's or node's incident shows its deciding
    figure in its row or in the detail under the table."""
    facts = {f"作业 {k}": v for k, v in ZH_JOBS.items()}
    facts |= {f"节点 {k}": v for k, v in NODES.items()}
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        seen, cut = 0, []
        for subject, _line, below, table in await critical_incidents(app, pilot, facts, "严重"):
            seen += 1
            shown = table + "\n" + below
            cut += [f"{subject}: {w!r}" for w in facts[subject] if w not in shown]
        assert seen >= 8, seen  # 48101-48105, 48130, cn013, cn022, cn031
        assert not cut, "\n".join(cut)
