"""What the store costs a poll (#33), counted: the acks are read once a poll, and still the
team's acks (another cockpit's on the same database) reach the next read back."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cockpit.model import Finding, Incident, Subject
from cockpit.runtime import lifecycle
from cockpit.store import open_store
from cockpit.store.sql import Store

NOW = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)


def _incident(jid: str) -> Incident:
    s = Subject("job", "peer", jid)
    f = Finding("pending_held", "warning", s, f"held {jid}", first_seen=NOW)
    return Incident(f"job|peer|{jid}|x", f.root_cause, f.severity, s, f.title, (f,), first_seen=NOW)


def test_a_poll_reads_the_acks_once_and_sees_another_cockpits(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    mine, theirs = open_store(url), open_store(url)
    reads = []
    real = Store._latest_acks
    monkeypatch.setattr(
        Store, "_latest_acks", lambda self, conn: reads.append(1) or real(self, conn)
    )
    incidents = [_incident("1"), _incident("2")]
    lifecycle.remember(mine, "peer", incidents, NOW)
    reads.clear()
    theirs.ack("job|peer|2|x", "bob", "looking", NOW + timedelta(seconds=1))
    reads.clear()
    got = lifecycle.remember(mine, "peer", incidents, NOW + timedelta(seconds=5))
    assert len(reads) == 1
    assert set(got.acks) == {"job|peer|2|x"} and got.acks["job|peer|2|x"].who == "bob"
    assert [s.ack is not None for s in got.incidents if s.key == "job|peer|2|x"] == [True]


def test_the_incident_view_reranks_an_incident_whose_severity_rose(tmp_path):
    # the read back keeps last poll's StoredIncidents and their ranks while rows stay
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    incidents = [_incident(str(i)) for i in range(6)]
    first = lifecycle.remember(store, "peer", incidents, NOW)
    assert [s.incident.severity for s in first.incidents] == ["warning"] * 6
    worse = replace(incidents[4], severity="critical")
    again = lifecycle.remember(
        store, "peer", [*incidents[:4], worse, incidents[5]], NOW + timedelta(seconds=5)
    )
    assert (
        again.incidents[0].key == worse.key and again.incidents[0].incident.severity == "critical"
    )
    assert [s.key for s in again.incidents[1:]] == [
        s.key for s in first.incidents if s.key != worse.key
    ]
    assert again.tally.counts == {"critical": 1, "warning": 5}
