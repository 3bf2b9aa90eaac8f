"""Files the cockpit writes that quote other users' job output (the incident store, ``--record``
recordings, the alert history) are the operator's alone: 0600, in folders the cockpit makes
0700. Another account on a login node must not read them."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

from cockpit.model import Subject
from cockpit.record import Recorder, start_recording
from cockpit.store import open_store
from cockpit.transport import CommandResult
from cockpit.watch.alerts import Alert
from cockpit.watch.history import AlertHistory

NOW = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_a_new_sqlite_store_and_its_wal_are_private(tmp_path):
    db = tmp_path / "state" / "cockpit.db"
    store = open_store(f"sqlite:///{db}")
    try:
        store.ack("k", "ops", "seen", NOW)  # a write: the WAL exists now
        assert _mode(db) == 0o600
        assert _mode(db.parent) == 0o700
        for extra in (db.with_name("cockpit.db-wal"), db.with_name("cockpit.db-shm")):
            if extra.exists():
                assert _mode(extra) == 0o600, extra.name
    finally:
        store.close()


def test_the_default_store_made_0644_by_an_older_cockpit_is_tightened(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    db = tmp_path / "cockpit" / "cockpit-demo.db"
    db.parent.mkdir()
    db.touch(mode=0o644)
    db.chmod(0o644)
    store = open_store(demo=True, legacy_acks=tmp_path / "none.json")
    store.close()
    assert _mode(db) == 0o600


def test_a_store_file_a_group_shares_keeps_its_mode(tmp_path):
    db = tmp_path / "team.db"
    db.touch()
    db.chmod(0o660)
    open_store(f"sqlite:///{db}").close()
    assert _mode(db) == 0o660


def test_record_files_are_private(tmp_path):
    folder = tmp_path / "rec"
    start_recording(folder, [], lambda: NOW)
    rec = Recorder(folder, "hpc", lambda: NOW)
    rec.add_result(["squeue"], CommandResult(("squeue",), b"1|alice|train\n", b"", 0))
    rec.flush()
    files = list(folder.glob("*.jsonl.gz"))
    assert files and all(_mode(f) == 0o600 for f in files)
    assert _mode(folder) == 0o700


def test_alert_history_and_its_folder_are_private(tmp_path):
    hist = AlertHistory(tmp_path / "state" / "alerts.jsonl")
    hist.append([Alert(NOW, "job_failed", "critical", Subject("job", "hpc", "1"), "job 1 failed")])
    assert _mode(hist.path) == 0o600 and _mode(hist.path.parent) == 0o700
