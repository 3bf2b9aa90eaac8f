import json
from datetime import UTC, datetime, timedelta

from cockpit.cli import main
from cockpit.model import SlurmJob, SlurmNode, Snapshot
from cockpit.slurm.storage import FsUsage
from cockpit.watch.alerts import AlertConfig, Mute
from cockpit.watch.history import AlertHistory
from cockpit.watch.watcher import Watcher

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def snap(t, state="RUNNING", node_flags=()):
    return Snapshot(
        "hpc",
        "slurm",
        t,
        jobs=(SlurmJob("42", "train", "alice", "gpu", state, "None"),),
        nodes=(
            SlurmNode(
                "cn03", "MIXED", flags=node_flags, reason="Kill task failed" if node_flags else ""
            ),
        ),
    )


def test_watcher_records_history_and_survives_restart(tmp_path):
    hist = AlertHistory(tmp_path / "alerts.jsonl")
    w = Watcher(AlertConfig(), history=hist)
    assert w.observe(snap(T0), [], T0) == []
    fired = w.observe(
        snap(T0 + timedelta(minutes=1), "FAILED", ("DRAIN",)), [], T0 + timedelta(minutes=1)
    )
    assert [a.rule for a in fired] == ["node_unhealthy", "job_failed"]
    assert w.alerts == fired and hist.load() == fired

    # a restart: history is back in the pane and the rate limit remembers cn03
    w2 = Watcher(AlertConfig(), history=AlertHistory(tmp_path / "alerts.jsonl"))
    assert w2.alerts == fired
    t2 = T0 + timedelta(minutes=10)
    w2.observe(snap(t2), [], t2)  # resumed
    assert (
        w2.observe(snap(t2 + timedelta(minutes=1), node_flags=("DRAIN",)), [], t2) == []
    )  # drained again within repeat_s


def test_watcher_mutes_and_storage(tmp_path):
    w = Watcher(AlertConfig(mutes=(Mute.parse("node:cn03"),)))
    w.observe(snap(T0), [], T0, storage=[FsUsage("/home", 100, 50, 50, 50.0)])
    t1 = T0 + timedelta(minutes=1)
    fired = w.observe(
        snap(t1, node_flags=("DRAIN",)), [], t1, storage=[FsUsage("/home", 100, 90, 10, 90.0)]
    )
    assert [(a.rule, a.subject.id) for a in fired] == [("storage", "/home")]


def test_alerts_command_prints_history(tmp_path, capsys):
    path = tmp_path / "alerts.jsonl"
    w = Watcher(AlertConfig(), history=AlertHistory(path))
    w.observe(snap(T0), [], T0)
    w.observe(snap(T0 + timedelta(minutes=1), "FAILED", ("DRAIN",)), [], T0 + timedelta(minutes=1))
    assert main(["alerts", "--history", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        len(out) == 2
        and "WARN" in out[0]
        and "node cn03 @hpc" in out[0]
        and "Kill task failed" in out[0]
    )
    assert "job 42 (train, alice) FAILED" in out[1]
    assert main(["alerts", "--history", str(path), "--json", "--last", "1"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["rule"] == "job_failed"
    (tmp_path / "empty.jsonl").touch()
    assert main(["alerts", "--history", str(tmp_path / "empty.jsonl")]) == 0
    assert capsys.readouterr().out == "no alerts\n"
    assert main(["alerts", "--history", str(tmp_path / "none.jsonl")]) == 2  # a typo
    assert main(["alerts", "--last", "-1"]) == 2


def test_alerts_demo_plays_the_demo_site_forward(capsys, monkeypatch):
    import cockpit.diagnosis.engine as engine

    # the demo story, independent of which engine rules exist yet
    monkeypatch.setattr(
        engine,
        "diagnose",
        lambda snap, artifacts=None, now=None, **kw: engine.Diagnosis(),
        raising=False,
    )
    assert main(["alerts", "--demo", "--json"]) == 0
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"rule": "node_unhealthy", "id": "cn040"} in [
        {"rule": a["rule"], "id": a["subject"]["id"]} for a in got
    ]
    assert all(a["source"] in ("demo-hpc", "demo-modelarts") for a in got)


def test_the_alert_list_is_read_without_waiting_for_a_poll(tmp_path):
    """The alert screen reads the list on the UI thread while a poll's observe() holds the
    watcher's lock comparing snapshots (0.3-0.9 s at 10k churned jobs in the soak): the read
    must not wait for it, and still sees every alert fired before."""
    import threading

    w = Watcher(AlertConfig(), history=AlertHistory(tmp_path / "alerts.jsonl"))
    w.observe(snap(T0), [], T0)
    t1 = T0 + timedelta(minutes=1)
    fired = w.observe(snap(t1, "FAILED", ("DRAIN",)), [], t1)
    got: list = []
    with w._lock:  # a poll in the middle of observe()
        reader = threading.Thread(target=lambda: got.append(w.alerts))
        reader.start()
        reader.join(2)
        alive = reader.is_alive()
    reader.join()
    assert not alive and got == [fired]
