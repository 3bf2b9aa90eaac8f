"""Two views of one thing say the same: the pool screen's fit and the queued job's verdict,
the node drill-down's exit codes and the queue's."""

from __future__ import annotations

from datetime import timedelta

from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.diagnosis.engine import diagnose


class Clock:
    def __init__(self) -> None:
        self.now = DEMO_START + timedelta(minutes=15)

    def __call__(self):
        return self.now


async def _demo_ma():
    src = demo_sources(7, clock=Clock())[1]
    snap = await src.poll()
    await src.close()
    assert snap.error is None
    return snap


async def test_pool_screen_fit_is_the_verdicts():
    from cockpit.screens.places import _pool_kind, pool_fit_rows

    snap = await _demo_ma()
    pool = next(p for p in snap.pools if p.name == "a100-dedicated")
    job = next(j for j in snap.training_jobs if j.name == "detr-4gpu-dedicated")
    verdict = [
        e.text
        for f in diagnose(snap, now=snap.taken_at)
        if f.subject.id == job.job_id
        for e in f.evidence
        if e.text.startswith(f"pool {pool.name}: ")
    ]
    assert verdict, "the verdict names the pool's fit"
    rows = dict(pool_fit_rows(pool, snap.training_jobs))
    shown = rows[f"fits {job.flavor_id}"]
    assert f"pool {pool.name}: {shown}" in verdict
    assert shown.startswith("0 node(s) fit") and "largest free on one node: 2 GPU" in shown
    assert _pool_kind(pool) == "dedicated"  # not "dedicated Dedicate"


async def test_node_screen_jobs_show_the_queues_exit_codes(tmp_path):
    from cockpit.model import Subject
    from cockpit.screens.panes import QueueTable
    from cockpit.screens.subject import NodeScreen

    from .test_ui_flows import make_app, ready, until

    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)

        def queue_row(jid):
            return next((r for r in queue.rows if r.key.split("\x1f")[1] == jid), None)

        col = [c.label for c in queue.columns].index("EXIT")
        await until(
            pilot,
            lambda: (r := queue_row("48110")) is not None and r.cells[col].strip(),
            "the queue's exit code of 48110 (sacct evidence)",
            1000,
        )
        assert "cn013" in queue_row("48110").cells
        want = {
            jid: queue_row(jid).cells[col]
            for jid in ("48110", "48111", "48112", "48113")
            if queue_row(jid) is not None
        }
        app.open_subject(Subject("node", "demo-hpc", "cn013"))
        await until(
            pilot,
            lambda: isinstance(app.screen, NodeScreen) and app.screen.query("#node-jobs"),
            "node screen",
            500,
        )
        table = app.screen.query_one("#node-jobs", QueueTable)
        await until(pilot, lambda: table.row_count > 0, "jobs on cn013", 500)
        got = {
            r.key.split("\x1f")[1]: r.cells[[c.label for c in table.columns].index("EXIT")]
            for r in table.rows
        }
        assert {j: got.get(j) for j in want} == want
        assert want["48110"].strip()
