"""Hostile tests of the alert for a resource pool's node turning Abnormal (f4d1460)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.model import Pool, PoolNode, Snapshot
from cockpit.runtime import pipeline
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher

T0 = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
NAMES = [f"os-node-created-{i:05d}" for i in range(400)]


def _poll(watcher: Watcher, at: datetime, phases: list[str]):
    nodes = tuple(PoolNode(n, ph) for n, ph in zip(NAMES, phases, strict=False))
    snap = Snapshot("ma", "modelarts", at, pools=(Pool("pool-1", "a100-dedicated", nodes=nodes),))
    a = pipeline.analyse(snap, at, {}, None, (None,))
    return [x for x in watcher.observe(snap, a.findings, at) if x.subject.kind == "pool"]


def test_a_whole_pool_turning_abnormal_at_once_keeps_its_counts_in_the_alert():
    # 400 names ran to 4096 characters and were cut there: the page listed 177 node names
    # and lost "(400 of 400 Abnormal)", the one thing an on-call reads first
    w = Watcher(AlertConfig())
    assert _poll(w, T0, ["Available"] * 400) == []
    [alert] = _poll(w, T0 + timedelta(minutes=1), ["Abnormal"] * 400)
    assert alert.title.endswith("entered Abnormal (400 of 400 Abnormal)")
    assert alert.severity == "critical"
    assert NAMES[0] in alert.title and "390 more" in alert.title
    assert len(alert.title) < 500


def test_a_few_nodes_turning_are_all_named():
    w = Watcher(AlertConfig())
    _poll(w, T0, ["Available"] * 12)
    [alert] = _poll(w, T0 + timedelta(minutes=1), ["Abnormal"] * 3 + ["Available"] * 9)
    assert alert.title == (
        "pool a100-dedicated: node os-node-created-00000, os-node-created-00001, "
        "os-node-created-00002 entered Abnormal (3 of 12 Abnormal)"
    )


def test_the_whole_pool_going_abnormal_after_one_node_pages_again():
    """One node turns (1 of 400: a warning, paged); 11 minutes later all 400 are Abnormal
    (the pool's verdict: critical). The pool alone as the rate limit's key held that page
    back for an hour; the nodes that turned are now part of it. The same node flapping
    back within the hour is not paged twice."""
    w = Watcher(AlertConfig())
    _poll(w, T0, ["Available"] * 400)
    [first] = _poll(w, T0 + timedelta(minutes=1), ["Available", "Abnormal"] + ["Available"] * 398)
    assert first.severity == "warning"
    [second] = _poll(w, T0 + timedelta(minutes=12), ["Abnormal"] * 400)
    assert second.severity == "critical" and "(400 of 400 Abnormal)" in second.title
    w2 = Watcher(AlertConfig())
    _poll(w2, T0, ["Available"] * 4)
    assert len(_poll(w2, T0 + timedelta(minutes=1), ["Abnormal"] + ["Available"] * 3)) == 1
    assert _poll(w2, T0 + timedelta(minutes=2), ["Available"] * 4) == []
    assert _poll(w2, T0 + timedelta(minutes=3), ["Abnormal"] + ["Available"] * 3) == []
