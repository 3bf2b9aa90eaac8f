"""The dashboard and the incident view in Chinese (``--lang zh``) at 80x24, as a tmux pane
shows them: CJK text is two cells a character, and no column may overflow or cut a fact.

Regenerate with ``pytest tests/test_ui_snapshots_zh.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import html

import pytest

from cockpit import i18n

from .test_ui_snapshots import _settle, demo_app, utc_local_time  # noqa: F401 (fixture)


@pytest.fixture(autouse=True)
def chinese():
    i18n.set_language("zh")
    yield
    i18n.set_language("en")


def test_dashboard_zh(snap_compare, tmp_path):
    assert snap_compare(demo_app(tmp_path), terminal_size=(80, 24), run_before=_settle)


def test_incident_view_zh(snap_compare, tmp_path):
    async def open_incidents(pilot):
        await _settle(pilot)
        await pilot.press("i")
        await _settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=(80, 24), run_before=open_incidents)


async def test_dashboard_zh_reads_chinese(tmp_path):
    """What a person reads on the 80x24 dashboard: the panes' titles, the columns, the keys and
    the top incident in Chinese; job ids, states and the deciding figures as Slurm prints them."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot)
        # the SVG's text, its non-breaking spaces as spaces
        text = html.unescape(app.export_screenshot()).replace("\xa0", " ")
    for word in ("队列", "节点", "训练作业", "作业ID", "结论", "故障", "帮助", "永远不会运行"):
        assert word in text, word
    for fact in ("48104", "FAILED", "MaxCPUsPerNode 48", "DOWN*", "cn031"):
        assert fact in text, fact
