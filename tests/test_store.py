"""The incident store on SQLite and on a real PostgreSQL (tests/pg.py): lifecycle, acks,
claims, evidence, schema versions, and a database that goes away mid-session."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from cockpit.errors import UserError
from cockpit.model import Artifacts, Finding, Incident, LogText, Subject
from cockpit.store import open_store
from cockpit.store import schema as store_schema
from tests.pg import postgres  # noqa: F401 - the session fixture

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def job_incident(job: str, cause: str = "nonzero_exit", title: str = "non-zero exit") -> Incident:
    subject = Subject("job", "lab", job)
    f = Finding(cause, "critical", subject, f"job {job}: {title}")
    # the key is the failure's identity (job + its end), not its label
    return Incident(f"job|lab|{job}|2026-12-01T08:59", cause, "critical", subject, f.title, (f,))


def test_an_incident_gone_from_squeue_stays_until_acked_and_resolved(url):
    store = open_store(url)
    inc = job_incident("20")
    store.sync_incidents(["lab"], [inc], T0)
    # five minutes later slurmctld forgot the job: the incident is still open, marked gone
    store.sync_incidents(["lab"], [], T0 + timedelta(minutes=5))
    [si] = store.incidents(T0 + timedelta(minutes=6))
    assert si.key == inc.key and si.gone and si.resolved_at == T0 + timedelta(minutes=5)
    assert si.first_seen == T0
    store.ack(inc.key, "ana", "looked at it", T0 + timedelta(minutes=7))
    assert store.incidents(T0 + timedelta(minutes=8)) == []


def test_an_acked_incident_still_live_stays_listed_as_acknowledged(url):
    store = open_store(url)
    inc = job_incident("21")
    store.sync_incidents(["lab"], [inc], T0)
    store.ack(inc.key, "ana", "", T0)
    [si] = store.incidents(T0)
    assert si.ack is not None and si.ack.who == "ana" and not si.gone


def test_a_refined_cause_keeps_the_key_the_first_seen_and_the_ack(url):
    store = open_store(url)
    vague = job_incident("22")
    store.sync_incidents(["lab"], [vague], T0)
    store.ack(vague.key, "ana", "on it", T0 + timedelta(seconds=30))
    sharp = job_incident("22", "command_not_found", "bwa-mem2: command not found")
    store.sync_incidents(["lab"], [sharp], T0 + timedelta(minutes=1))
    [si] = store.incidents(T0 + timedelta(minutes=1))
    assert si.incident.root_cause == "command_not_found"
    assert "bwa-mem2" in si.incident.title
    assert si.first_seen == T0 and si.ack is not None and si.ack.note == "on it"


def test_acks_keep_who_when_note_and_an_unack_is_history_not_deletion(url):
    store = open_store(url)
    store.ack("k", "ana", "draining cn013", T0)
    store.unack("k", "bo", T0 + timedelta(minutes=1))
    assert "k" not in store.acks()
    store.ack("k", "bo", "again", T0 + timedelta(minutes=2))
    a = open_store(url).acks()["k"]  # another process sees it
    assert (a.who, a.at, a.note) == ("bo", T0 + timedelta(minutes=2), "again")
    with store.engine.connect() as c:
        assert c.execute(sa.select(sa.func.count()).select_from(store_schema.acks)).scalar() == 3


def test_retention_forgets_incidents_not_seen_for_longer(url):
    store = open_store(url, retention_days=1)
    store.sync_incidents(["lab"], [job_incident("23")], T0)
    store.sync_incidents(["lab"], [], T0 + timedelta(minutes=1))
    assert len(store.incidents(T0 + timedelta(hours=23))) == 1
    assert store.incidents(T0 + timedelta(days=2)) == []


def test_each_claim_is_won_by_exactly_one_of_many_concurrent_claimers(url):
    stores = [open_store(url) for _ in range(4)]
    wins: list[str] = []
    lock = threading.Lock()

    def claim(store, n):
        for i in range(50):
            if store.claim(f"alert-{i}", "webhook", T0):
                with lock:
                    wins.append(f"alert-{i}")

    threads = [threading.Thread(target=claim, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == sorted(f"alert-{i}" for i in range(50))
    assert stores[0].claim("alert-0", "command", T0)  # another channel is another delivery


def test_evidence_keeps_the_first_capture_redacted(url):
    store = open_store(url)
    subject = Subject("job", "lab", "24")
    first = Artifacts(
        commands={"scontrol show job 24": "JobId=24 Command=/home/a/run.sh password=hunter2"},
        logs=(LogText("slurm-24.out", "stdout", b"bwa-mem2: command not found\n"),),
    )
    store.save_evidence("lab", subject, first, T0)
    store.save_evidence("lab", subject, Artifacts(commands={"later": "x"}), T0)
    got = store.evidence("lab", subject)
    assert got is not None and "scontrol show job 24" in got.commands
    assert "hunter2" not in got.commands["scontrol show job 24"]
    assert got.logs[0].data == b"bwa-mem2: command not found\n"
    assert store.evidence("lab", Subject("job", "lab", "25")) is None


def test_cursor_and_outage_start_are_shared(url):
    a, b = open_store(url), open_store(url)
    a.set_cursor("lab", T0)
    assert b.cursor("lab") == T0
    start = a.open_outage("lab", T0, "connection refused")
    assert b.open_outage("lab", T0 + timedelta(minutes=1), "timeout") == start == T0
    a.close_outage("lab", T0 + timedelta(minutes=2))
    assert open_store(url).open_outage("lab", T0 + timedelta(minutes=3), "x") != start


def test_a_database_of_the_older_schema_migrates_and_keeps_its_rows(url):
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        store_schema.migrate(conn, "test", upto=1)
        conn.execute(
            sa.insert(store_schema.acks).values(key="k", action="ack", who="ana", at=1.0, note="")
        )
    engine.dispose()
    store = open_store(url)
    assert store.acks()["k"].who == "ana"
    store.sync_incidents(["lab"], [job_incident("26")], T0)  # v2's columns work
    store.sync_incidents(["lab"], [], T0 + timedelta(minutes=1))
    assert store.incidents(T0 + timedelta(minutes=1))[0].gone
    with store.engine.connect() as c:
        assert store_schema.current_version(c) == store_schema.VERSION


def test_a_database_of_a_newer_schema_is_refused_in_one_line(url, tmp_path):
    store = open_store(url)
    with store.engine.begin() as conn:
        conn.execute(sa.update(store_schema.schema_version).values(version=99))
    with pytest.raises(UserError, match="schema is version 99, newer than this cockpit"):
        open_store(url)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[clusters.lab]\ntransport = "local"\n[store]\nurl = "{url}"\n')
    r = subprocess.run(
        [sys.executable, "-m", "cockpit", "--config", str(cfg), "incidents"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert "newer than this cockpit" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_old_json_acks_are_taken_over_on_first_open(tmp_path):
    from cockpit.store.acks import AckStore

    legacy = AckStore(tmp_path / "state.json")
    legacy.toggle("node|lab|cn013|drain")
    store = open_store(f"sqlite:///{tmp_path}/c.db", legacy_acks=tmp_path / "state.json")
    assert "node|lab|cn013|drain" in store.acks()


def test_postgres_going_away_mid_session_loses_no_ack(postgres):  # noqa: F811
    url = postgres.fresh_database("downtest")
    store = open_store(url)
    inc = job_incident("27")
    store.sync_incidents(["lab"], [inc], T0)
    postgres.stop()
    try:
        store.sync_incidents(["lab"], [inc, job_incident("28")], T0 + timedelta(minutes=1))
        assert not store.available and store.last_error.startswith("store unavailable")
        # the cockpit goes on from memory: both incidents, and the ack given meanwhile
        store.ack(inc.key, "ana", "while the db was down", T0 + timedelta(minutes=2))
        listed = {si.key: si for si in store.incidents(T0 + timedelta(minutes=2))}
        assert set(listed) == {inc.key, job_incident("28").key}
        assert listed[inc.key].ack is not None
        assert store.claim("a", "webhook", T0) and not store.claim("a", "webhook", T0)
    finally:
        postgres.start()
    store._tried = 0.0  # the next poll's retry, without waiting RETRY_S
    store.sync_incidents(["lab"], [inc], T0 + timedelta(minutes=3))
    assert store.available and store.last_error == ""
    a = open_store(url).acks()[inc.key]  # written, seen by another process
    assert (a.who, a.note) == ("ana", "while the db was down")
    assert not open_store(url).claim("a", "webhook", T0)  # the claim made meanwhile is kept


def test_a_refined_cause_seen_by_another_process_is_not_announced_again(tmp_path):
    from cockpit.model import ExitCode, SlurmJob, Snapshot
    from cockpit.watch.alerts import AlertConfig
    from cockpit.watch.watcher import Watcher
    from tests.watch_support import ListChannel as Channel

    def snap(state: str) -> Snapshot:
        job = SlurmJob(
            "20", "bwa", "ana", "cpu", state, "None", cpus=1, node_count=1,
            end_time=T0 if state == "FAILED" else None,
            exit_code=ExitCode(127, 0) if state == "FAILED" else None,
        )  # fmt: skip
        return Snapshot("lab", "slurm", T0, jobs=(job,))

    subject = Subject("job", "lab", "20")
    vague = Finding("nonzero_exit", "critical", subject, "non-zero exit")
    sharp = Finding("command_not_found", "critical", subject, "bwa-mem2: command not found")
    url = f"sqlite:///{tmp_path}/c.db"
    channels = [Channel(), Channel()]
    watchers = [Watcher(AlertConfig(), store=open_store(url), channels=[c]) for c in channels]
    for w in watchers:
        w.observe(snap("RUNNING"), [], T0)
    watchers[0].observe(snap("FAILED"), [vague], T0)
    watchers[1].observe(snap("FAILED"), [sharp], T0 + timedelta(seconds=20))
    assert len(channels[0].sent) + len(channels[1].sent) == 1
    assert [a.rule for a in watchers[1].alerts] == ["job_failed"]  # its pane still shows it


def test_the_export_carries_who_acked_when_and_the_note():
    from cockpit.report import incidents_json, incidents_markdown
    from cockpit.store import Ack, StoredIncident

    inc = job_incident("29")
    ack = Ack("ana", T0 - timedelta(minutes=3), "draining cn013")
    si = StoredIncident(inc, T0 - timedelta(hours=1), T0, True, T0 - timedelta(minutes=6), ack)
    md = incidents_markdown([inc], T0, acks={inc.key: ack}, stored={inc.key: si})
    assert "**Acknowledged by** ana" in md and "(3m ago): draining cn013" in md
    assert "Gone from the live data" in md
    [doc] = incidents_json([inc], T0, acks={inc.key: ack}, stored={inc.key: si})["incidents"]
    assert doc["acknowledged"] and doc["gone"]
    assert doc["ack"] == {"who": "ana", "at": ack.at.isoformat(), "note": "draining cn013"}


def test_store_settings_in_the_config(tmp_path):
    from cockpit.config import load_config
    from cockpit.errors import ConfigError

    cfg = tmp_path / "c.toml"
    cfg.write_text('[store]\nurl = "postgres://db.example/cockpit"\nretention_days = 3\n')
    store = load_config(cfg).store
    assert (store.url, store.retention_days) == ("postgresql://db.example/cockpit", 3.0)
    cfg.write_text('[store]\nurl = "mysql://db/cockpit"\n')
    with pytest.raises(ConfigError, match=r"c.toml:2: \[store.url\]"):
        load_config(cfg)
    cfg.write_text("[store]\nretention_days = 0\n")
    with pytest.raises(ConfigError, match="retention_days"):
        load_config(cfg)


def _failed_job(jid: str, cause: str, title: str):
    from cockpit.model import Finding, Subject

    return Finding(cause, "critical", Subject("job", "hpc", jid), title, first_seen=T0)


def test_a_job_folded_into_a_group_is_not_a_gone_incident_of_its_own(tmp_path):
    """Task 3 of an array failed first (its own incident); the others failed next poll and
    the group took it in: the task is listed once, in the group, never as '(gone)'."""
    from cockpit.diagnosis.correlate import correlate
    from cockpit.store import open_store

    def failed(jid: str):
        return _failed_job(jid, "command_not_found", "prog_zz: command not found")

    store = open_store(f"sqlite:///{tmp_path}/s.db")
    store.sync_incidents(["hpc"], correlate([failed("16_3")]), T0)
    store.sync_incidents(["hpc"], correlate([failed(f"16_{i}") for i in range(1, 6)]), T0)
    listed = store.incidents(T0)
    assert len(listed) == 1 and not listed[0].gone
    assert "16_3" in {s.id for s in listed[0].incident.affected}


def test_a_group_whose_other_jobs_left_no_longer_lists_the_one_still_live(tmp_path):
    """Nine of ten failed tasks aged out of the live data: the tenth is its own incident now,
    and the group (gone) lists only the nine, never the tenth twice."""
    from cockpit.diagnosis.correlate import correlate
    from cockpit.store import open_store

    def failed(jid: str):
        return _failed_job(jid, "application_error", "SIGSEGV (signal 11): segmentation fault")

    store = open_store(f"sqlite:///{tmp_path}/s.db")
    store.sync_incidents(["hpc"], correlate([failed(str(i)) for i in range(10)]), T0)
    store.sync_incidents(["hpc"], correlate([failed("9")]), T0)
    naming_9 = [
        s
        for s in store.incidents(T0)
        if "9" in {a.id for a in (s.incident.subject, *s.incident.affected)}
    ]
    assert len(naming_9) == 1 and not naming_9[0].gone
    group = next(s for s in store.incidents(T0) if s.gone)
    assert group.incident.title.startswith("9 jobs") and len(group.incident.affected) == 9


def test_the_title_column_is_redacted_and_clean(tmp_path):
    """What a team's database keeps in a plain column, for psql and dashboards to read."""
    import sqlalchemy as sa

    from cockpit.diagnosis.correlate import correlate
    from cockpit.store import open_store, schema

    title = "train --api_key s3cretKey \x1b]52;c;cm0gLXJm\x07done"
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    store.sync_incidents(["hpc"], correlate([_failed_job("5", "application_error", title)]), T0)
    with store.engine.begin() as conn:
        (kept,) = conn.execute(sa.select(schema.incidents.c.title)).scalars()
    assert "s3cretKey" not in kept and "\x1b" not in kept and "\x07" not in kept
    assert kept.startswith("train --api_key <redacted>") and kept.endswith("done")


def test_a_poll_where_nothing_changed_neither_reads_bodies_nor_writes_rows(url):
    # #33: a poll re-read every open incident's body and rewrote every row's last_seen
    store = open_store(url)
    incs = [job_incident(str(i)) for i in range(30)]
    store.sync_incidents(["lab"], incs, T0)
    store.incidents(T0)
    said: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *a: said.append(a[2].upper()))
    for s in range(1, 4):  # 5 s apart, as a TUI polls
        store.sync_incidents(["lab"], incs, T0 + timedelta(seconds=5 * s))
        got = store.incidents(T0 + timedelta(seconds=5 * s))
    assert sorted(si.key for si in got) == sorted(i.key for i in incs)
    assert not any(si.gone for si in got)
    assert [w for w in said if w.split()[0] in ("INSERT", "UPDATE", "DELETE")] == []
    assert [w for w in said if "BODY" in w] == []
    # ... while another cockpit's refined verdict on the same store is read back at once
    other = open_store(url)
    sharp = job_incident("7", "command_not_found", "bwa-mem2: command not found")
    other.sync_incidents(["lab"], [sharp], T0 + timedelta(seconds=20))
    mine = {si.key: si for si in store.incidents(T0 + timedelta(seconds=21))}
    assert mine[sharp.key].incident.title == "job 7: bwa-mem2: command not found"
    assert mine[sharp.key].incident.root_cause == "command_not_found"


def test_an_incident_seen_for_days_stays_within_the_retention(url):
    # last_seen is written once a step, not every poll: an incident live all along is kept
    store = open_store(url, retention_days=1)
    inc = job_incident("31")
    for minutes in range(0, 3 * 24 * 60, 7):
        store.sync_incidents(["lab"], [inc], T0 + timedelta(minutes=minutes))
    later = T0 + timedelta(days=3)
    assert [si.key for si in store.incidents(later)] == [inc.key]
    store.sync_incidents(["lab"], [], later)  # then it leaves squeue: kept a day
    assert [si.gone for si in store.incidents(later + timedelta(hours=23))] == [True]
    assert store.incidents(later + timedelta(days=1, minutes=1)) == []


def test_a_store_of_the_last_schema_keeps_its_incidents_and_acks_when_upgraded(url):
    # v4 added each body's digest: the rows an older cockpit wrote get theirs
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    from cockpit.store import codec

    inc = job_incident("27", "oom_killed", "out of memory")
    with engine.begin() as conn:
        store_schema.migrate(conn, "test", upto=3)
        conn.execute(
            sa.text(
                "INSERT INTO incidents (key, source, kind, root_cause, severity, title, body,"
                " first_seen, last_seen, gone, resolved_at) VALUES (:k, 'lab', 'job',"
                " 'oom_killed', 'critical', 't', :b, :t, :t, FALSE, NULL)"
            ),
            {"k": inc.key, "b": codec.incident_to_json(inc), "t": T0.timestamp()},
        )
        conn.execute(
            sa.insert(store_schema.acks).values(key=inc.key, action="ack", who="ana", at=1.0)
        )
    engine.dispose()
    store = open_store(url)
    (si,) = store.incidents(T0 + timedelta(minutes=1))
    assert si.incident == inc and si.ack is not None and si.ack.who == "ana"
    with store.engine.connect() as c:
        assert store_schema.current_version(c) == store_schema.VERSION
        (dg,) = c.execute(sa.select(store_schema.incidents.c.digest)).scalars()
        # v5: what a sync reads of every row each poll, from an index
        assert "ix_incidents_known" in {i["name"] for i in sa.inspect(c).get_indexes("incidents")}
    assert dg == codec.digest(codec.incident_to_json(inc))
    store.sync_incidents(["lab"], [inc], T0 + timedelta(minutes=2))  # and it lives on
    (si,) = store.incidents(T0 + timedelta(minutes=2))
    assert not si.gone and si.incident == inc and si.ack is not None
    store.sync_incidents(["lab"], [], T0 + timedelta(minutes=3))  # acked and resolved: closed
    assert store.incidents(T0 + timedelta(minutes=3)) == []
