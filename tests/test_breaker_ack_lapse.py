"""Breaker: an ack on an incident lapses when a job of it failed after the ack
(lifecycle.lapse_acks). Acks that must hold, against a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Finding, Subject
from cockpit.runtime.lifecycle import remember
from cockpit.store import open_store

T = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
NODE = Subject("node", "lab", "gpu3")


def _node(at: datetime) -> Finding:
    return Finding(
        "gpu_hardware_error", "critical", NODE, "gpu3 drained: GPU Xid 79 fell off the bus",
        first_seen=at,
    )  # fmt: skip


def _job(jid: str, end: datetime, on: Subject | None = None) -> Finding:
    return Finding(
        "gpu_hardware_error", "critical", Subject("job", "lab", jid),
        "job died: GPU fell off the bus", first_seen=end, related=(on,) if on else (),
    )  # fmt: skip


def test_an_ack_on_a_drained_node_holds_when_its_running_jobs_die_later(tmp_path):
    # gpu3 drains at 12:00 (its reason's time keys the incident); the operator acks the node
    # at 12:02 ("ticket open with the vendor"); the two jobs still running on it die at 12:10
    # and 12:20: the same drain's casualties, the same incident key, nothing new to page for
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    (inc,) = correlate([_node(T), _job("41", T + timedelta(seconds=30), NODE)])
    remember(store, "lab", [inc], T + timedelta(minutes=1))
    store.ack(inc.key, "ops", "vendor ticket 123", T + timedelta(minutes=2))
    later = [_node(T), _job("41", T + timedelta(seconds=30), NODE)]
    later += [
        _job("42", T + timedelta(minutes=10), NODE),
        _job("43", T + timedelta(minutes=20), NODE),
    ]
    (again,) = correlate(later)
    assert again.key == inc.key
    got = remember(store, "lab", [again], T + timedelta(minutes=21))
    assert inc.key in got.acks, "the node's ack lapsed for the drain's own casualties"


def test_an_ack_holds_when_the_clusters_clock_runs_a_minute_ahead(tmp_path):
    # slurmctld's clock is 90 s ahead of the cockpit's: job 15 ends at 12:01:30 by its clock
    # (12:00 by the cockpit's), the cockpit shows it at 12:00:30 and the operator acks it at
    # 12:01 (the cockpit's clock) after reading it. The same job, polled again, is not news.
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    inc_f = [_job("15", T + timedelta(seconds=90)), _job("16", T + timedelta(seconds=90))]
    (inc,) = correlate(inc_f)
    remember(store, "lab", [inc], T + timedelta(seconds=30))
    store.ack(inc.key, "ana", "known bad input", T + timedelta(minutes=1))
    got = remember(store, "lab", [inc], T + timedelta(minutes=2))
    assert inc.key in got.acks, "the same jobs polled again took the ack back"


def test_a_cockpit_does_not_take_back_an_ack_given_again_on_another(url):
    # cockpits A and B on one store (SQLite, then a real PostgreSQL). Job 17 joins the acked
    # group after the ack; B takes the ack back, the operator acks again on B at once. A's
    # next poll must not take back that new ack with its memory of the old one
    a, b = open_store(url), open_store(url)
    old = [_job("15", T), _job("16", T + timedelta(minutes=1))]
    (group,) = correlate(old)
    remember(a, "lab", [group], T + timedelta(minutes=2))
    a.ack(group.key, "ana", "known bad input", T + timedelta(minutes=3))
    remember(a, "lab", [group], T + timedelta(minutes=4))  # A knows that ack
    remember(b, "lab", [group], T + timedelta(minutes=5))  # so does B
    (grown,) = correlate([*old, _job("17", T + timedelta(minutes=10))])
    assert grown.key == group.key
    got = remember(b, "lab", [grown], T + timedelta(minutes=11))
    assert group.key not in got.acks  # job 17 failed after the ack: B takes it back
    b.ack(group.key, "ana", "same input, 17 too", T + timedelta(minutes=11, seconds=20))
    got = remember(a, "lab", [grown], T + timedelta(minutes=11, seconds=30))
    assert got.acks.get(group.key) is not None, "A took back the ack given again on B"
    assert group.key in open_store(url).acks()
