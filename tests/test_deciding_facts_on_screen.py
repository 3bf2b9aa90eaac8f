"""On the demo, at 80x24 and at 160x48, the row of every critical job, every node out of
service and every failing training job shows the fact that decides its verdict (the number,
the missing program, the Slurm reason), and so does every critical incident: cut words, not
facts. The facts below are the demo scenario's, written by hand from what an operator needs
to read; a new critical verdict in the demo must be added here (the coverage test says so).
"""

from __future__ import annotations

import pytest

from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.panes import IncidentTable, NodeTable, QueueTable, TrainingJobTable

from .test_hostile_text import painted
from .test_ui_flows import make_app, ready, until

KILL_TASK = ("Kill task failed",)
JOBS = {
    "48101": ("64 CPUs", "MaxCPUsPerNode 48"),
    "48102": ("64.1G", "ReqMem 64G"),
    "48103": ("04:00:00",),
    "48104": ("fastqc: command not found",),
    "48105": ("libcufft.so.10",),
    "48106": ("could not talk",),
    "48110": KILL_TASK,
    "48111": KILL_TASK,
    "48112": KILL_TASK,
    "48113": KILL_TASK,
    "48115": ("cn031",),
    "48130": ("16.0G", "ReqMem 16G"),  # an OOM that arrives later in the demo
}
NODES = {
    "cn031": ("Not responding",),
    "cn013": ("Kill task failed",),
    "cn022": ("Low RealMemory",),
}
TRAINING = {  # by name: the pane's first column
    "qwen-7b-sft-a100": ("no pod placed",),
    "llama-sft-image": ("image pull failed",),
    "gpt2-zh-pretrain-v2": ("pip cannot reach",),
    "custom-alpine-train": ("exit 127",),
    "detr-coco-obs": ("OBS mount AccessDenied",),
    "resnet-imagenet-path": ("input path not found",),
    "bert-ft-ckpt-ro": ("read-only file system",),
}
POOLS = {"pool-7f3a9c21": ("1 of 5", "Abnormal")}

SIZES = [(80, 24), (160, 48)]


def _critical(app) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for st in app.hub.states.values():
        for (kind, _src, ident), f in st.verdicts.items():
            if f.severity == "critical":
                out.setdefault(kind, set()).add(ident)
    return out


async def _row_line(pilot, table, first_cell: str) -> str:
    """The painted line of the row whose first cell is ``first_cell``, after putting the
    cursor on it (which scrolls it into view)."""
    row = next((r for r in table.rows if r.cells[0] == first_cell), None)
    assert row is not None, f"{first_cell} is not a row of {table.id}"
    assert table.move_to_key(row.key)
    await pilot.pause()
    lines = [ln for ln in painted(table) if ln.startswith(first_cell + " ")]
    assert lines, f"{first_cell} is not on screen in {table.id}:\n" + "\n".join(painted(table))
    return lines[0]


async def test_the_demo_critical_subjects_are_the_ones_checked_here(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        critical = _critical(app)
        names = {
            t.job_id: t.name for st in app.hub.states.values() for t in st.snapshot.training_jobs
        }
    assert critical.get("job", set()) == set(JOBS)
    assert critical.get("node", set()) == set(NODES)
    assert {names[i] for i in critical.get("training_job", set())} == set(TRAINING)
    assert critical.get("pool", set()) == set(POOLS)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_critical_row_shows_its_deciding_fact(tmp_path, size):
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        screen = app.screen
        cut = []
        panes = ((QueueTable, JOBS), (NodeTable, NODES), (TrainingJobTable, TRAINING))
        for table_cls, facts in panes:
            table = screen.query_one(table_cls)
            await until(pilot, lambda t=table: t.row_count > 0, f"{table.id} rows")
            for first, want in facts.items():
                line = await _row_line(pilot, table, first)
                assert len(line.rstrip()) <= size[0]
                missing = [w for w in want if w not in line]
                if missing:
                    cut.append(f"{table.id} {first}: {missing} not in {line.rstrip()!r}")
        assert not cut, "\n".join(cut)


async def test_at_80x24_every_bad_node_is_in_the_nodes_pane_without_scrolling(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.pause(0.1)
        shown = "\n".join(painted(app.screen.query_one(NodeTable)))
        assert all(node in shown for node in NODES), shown


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_critical_incident_shows_its_deciding_fact(tmp_path, size):
    """In the incident view the row's TITLE, or else the detail under the table (the whole
    title and remedy of the selected incident), holds the facts."""
    facts = {f"job {k}": v for k, v in JOBS.items()}
    facts |= {f"node {k}": v for k, v in NODES.items()}
    facts |= {f"training job {k}": v for k, v in TRAINING.items()}
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        seen, cut = 0, []
        for subject, line, below, _table in await critical_incidents(app, pilot, facts, "CRIT"):
            seen += 1
            for want in facts[subject]:
                if want not in line and want not in below:
                    cut.append(f"{subject}: {want!r} neither in {line!r} nor below")
            # the row itself keeps a job's or node's deciding figures whole at 160 columns
            if size[0] >= 160 and not subject.startswith("training"):
                assert all(w in line for w in facts[subject]), line
        assert seen >= 15, seen  # the critical incidents of jobs, nodes and training jobs
        assert not cut, "\n".join(cut)


async def critical_incidents(app, pilot, facts: dict, mark: str) -> list[tuple[str, str, str, str]]:
    """In the incident view (``i``), each critical incident (SEV ``mark``) whose subject is a
    key of ``facts``, selected in turn: (subject, its painted row, the detail under the table,
    the whole painted table)."""
    await pilot.press("i")
    await until(pilot, lambda: isinstance(app.screen, IncidentScreen), "incidents")
    table = app.screen.query_one(IncidentTable)
    await until(pilot, lambda: table.row_count > 0, "incident rows")
    detail = app.screen.query_one("#incident-detail")
    out = []
    for row in list(table.rows):
        sev, subject, *_ = row.cells
        if sev != mark or subject not in facts:
            continue
        assert table.move_to_key(row.key)
        await pilot.pause()
        painted_table = painted(table)
        line = next((ln for ln in painted_table if ln.startswith(f"{sev}  {subject[:10]}")), "")
        out.append((subject, line, "\n".join(painted(detail)), "\n".join(painted_table)))
    return out


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_log_status_line_names_the_red_line_whole(tmp_path, size):
    """At the first red error of 48105's log, the status line says what the line is
    ("here: missing_shared_library") whole: at 80 columns the file's name (the tab above
    names the log) gives way; at 160 it is shown too."""
    from textual.widgets import Static

    from cockpit.model import Subject

    from .test_ui_snapshots import _settle

    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", "48105"))
        await until(pilot, lambda: bool(getattr(app.screen, "logs", None)), "48105's logs")
        await pilot.press("l")
        await _settle(pilot, lambda a: getattr(a.screen.query("LogView").first(), "_done", 0))
        status = str(app.screen.query_one("#log-status", Static).render())
    assert status.rstrip().endswith("here: missing_shared_library"), status
    assert ("slurm-48105.out" in status) == (size[0] >= 160), status


async def test_a_symptom_line_in_the_log_is_called_a_symptom(tmp_path):
    """Job 48110 died on a node whose slurmd could not kill its tasks (Kill task failed); its
    stdout's 'Killed' line was "here: oom_killed" in the log's status line, read as the
    cause by a new user. A weak line is marked a symptom, as scan-log marks it."""
    from textual.widgets import Static

    from cockpit.model import Subject

    from .test_ui_snapshots import _settle

    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", "48110"))
        await until(pilot, lambda: bool(getattr(app.screen, "logs", None)), "48110's logs")
        names = [name for name, _reader in app.screen.logs]
        app.screen.open_log(names.index("stdout"))  # the job's own output, as the row's `l`
        await _settle(pilot, lambda a: getattr(a.screen.query("LogView").first(), "_done", 0))
        status = str(app.screen.query_one("#log-status", Static).render())
    assert "here: oom_killed (symptom)" in status, status


async def test_l_on_a_training_job_whose_cause_is_an_event_opens_the_events(tmp_path):
    """detr-coco-obs is stuck in Initializing on an OBS AccessDenied mount event; `l` opened its
    empty startup log at 'line 1/0' with the cause one tab away (a new-user trial). It opens
    the events at the AccessDenied line."""
    from textual.widgets import Static

    from cockpit.model import Subject

    from .test_ui_snapshots import _settle

    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        snap = app.hub.states["demo-modelarts"].snapshot
        job = next(t for t in snap.training_jobs if t.name == "detr-coco-obs")
        app.open_subject(Subject("training_job", "demo-modelarts", job.job_id))
        await until(pilot, lambda: bool(getattr(app.screen, "logs", None)), "its logs")
        await pilot.press("l")
        await _settle(pilot, lambda a: getattr(a.screen.query("LogView").first(), "_done", 0))
        status = str(app.screen.query_one("#log-status", Static).render())
    assert status.startswith("events") and "here: storage_access_denied" in status, status
