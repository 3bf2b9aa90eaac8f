"""c on a pane: choose its columns; the choice is kept for the next session."""

from __future__ import annotations

from cockpit.prefs import Prefs
from cockpit.screens.columns import ColumnChooser
from cockpit.screens.panes import QueueTable

from .test_ui_flows import make_app, ready, until


def header(table) -> str:
    return "".join(seg.text for seg in table.render_line(0))


async def test_hide_a_column_and_find_it_hidden_next_session(tmp_path):
    path = tmp_path / "ui.json"
    app = make_app(tmp_path, prefs=Prefs(path))
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        queue.focus()
        assert "USER" in header(queue)
        await pilot.press("c")
        assert isinstance(app.screen, ColumnChooser)
        labels = [c.label for c in queue.columns]
        for _ in range(labels.index("USER")):
            await pilot.press("down")
        await pilot.press("space", "enter")
        await pilot.pause()
        assert "USER" not in header(queue) and "JOBID" in header(queue)
        # the filter still finds rows by the hidden column
        queue.set_filter("alice")
        await pilot.pause()
        assert queue.row_count > 0
    again = make_app(tmp_path, prefs=Prefs(path))
    async with again.run_test(size=(160, 30)) as pilot:
        await ready(again, pilot)
        assert "USER" not in header(again.screen.query_one(QueueTable))


async def test_esc_keeps_the_columns_and_a_broken_prefs_file_is_ignored(tmp_path):
    path = tmp_path / "ui.json"
    path.write_text("{not json")
    app = make_app(tmp_path, prefs=Prefs(path))
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        queue.focus()
        before = header(queue)
        await pilot.press("c", "space", "escape")
        await pilot.pause()
        assert header(queue) == before


async def test_wide_queue_shows_exit_code_node_list_account_and_qos(tmp_path):
    app = make_app(tmp_path, prefs=Prefs(tmp_path / "ui.json"))
    async with app.run_test(size=(200, 30)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        head = header(queue)
        for label in ("EXIT", "NODELIST", "ACCOUNT", "QOS"):
            assert label in head
        labels = [c.label for c in queue.columns]
        await until(
            pilot,
            lambda: next(r for r in queue.rows if r.key.endswith("\x1f48104")).cells[
                labels.index("EXIT")
            ],
            "the failed job's exit code from its sacct row",
            500,
        )
        row = next(r for r in queue.rows if r.key.endswith("\x1f48104"))  # fastqc: exit 127
        cell = dict(zip(labels, row.cells, strict=False))
        assert cell["EXIT"] == "127:0" and cell["NODELIST"] == "cn015"
        assert cell["ACCOUNT"] == "bio" and cell["QOS"] == "normal"
        running = next(r for r in queue.rows if r.cells[labels.index("STATE")] == "RUNNING")
        assert running.cells[labels.index("EXIT")] == ""  # a running job has no exit yet


def test_gpu_column_text():
    from cockpit.views import gpu_text

    assert gpu_text("gpu:a100:8(S:0-1)") == "gpu:a100:8"
    assert gpu_text("gpu:a100:4(S:0,2),gpu:t4:2(S:1)") == "gpu:a100:4,gpu:t4:2"
    assert gpu_text("(null)") == "" and gpu_text("") == ""


async def test_nodes_pane_shows_each_nodes_gpus(tmp_path):
    from cockpit.screens.panes import NodeTable

    app = make_app(tmp_path, prefs=Prefs(tmp_path / "ui.json"))
    async with app.run_test(size=(180, 40)) as pilot:
        await ready(app, pilot)
        nodes = app.screen.query_one(NodeTable)
        assert "GPUS" in header(nodes)
        labels = [c.label for c in nodes.columns]
        snap = app.hub.states["demo-hpc"].snapshot
        gpu_node = next(n for n in snap.nodes if n.gres and n.gres != "(null)")
        row = next(r for r in nodes.rows if r.key.endswith("\x1f" + gpu_node.name))
        assert row.cells[labels.index("GPUS")].startswith("gpu:")


async def test_the_key_column_cannot_be_hidden(tmp_path):
    """JOBID (node name, training job name) names each row: the chooser lists it as fixed,
    space on it leaves it on, and a preference that hid it (older file) is ignored."""
    from textual.widgets import SelectionList

    path = tmp_path / "ui.json"
    app = make_app(tmp_path, prefs=Prefs(path))
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        queue.focus()
        await pilot.press("c")
        chooser = app.screen
        assert isinstance(chooser, ColumnChooser)
        selection = chooser.query_one(SelectionList)
        first = selection.get_option_at_index(0)
        assert first.value == "JOBID" and "fixed" in str(first.prompt)
        await pilot.press("space")  # the cursor starts on JOBID
        await pilot.pause()
        assert "JOBID" in selection.selected
        await pilot.press("enter")
        await pilot.pause()
        assert "JOBID" in header(queue)
        assert "JOBID" not in Prefs(path).hidden_columns("queue")
        queue.set_hidden(["JOBID", "USER"])  # what a stale ui.json asks for
        await pilot.pause()
        assert header(queue).lstrip().startswith("JOBID") and "USER" not in header(queue)


async def test_the_chooser_says_which_columns_have_no_room_at_this_width(tmp_path):
    """At 80 columns EXIT, NODELIST, GPUS… are chosen yet not drawn: the chooser said nothing,
    and an operator ticking them saw no change."""
    from textual.widgets import SelectionList

    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        app.screen.query_one(QueueTable).focus()
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ColumnChooser), "chooser")
        options = app.screen.query_one(SelectionList)
        prompts = {
            str(options.get_option_at_index(i).prompt).split("  ")[0]: str(
                options.get_option_at_index(i).prompt
            )
            for i in range(options.option_count)
        }
        assert "no room at this width" in prompts["NODELIST"]
        assert "no room" not in prompts["STATE"] and "no room" not in prompts["VERDICT"]
        assert "names the row" in prompts["JOBID"]
