import json
from datetime import UTC, datetime, timedelta

from cockpit.model import Subject
from cockpit.watch.alerts import Alert
from cockpit.watch.history import AlertHistory

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def alerts(n, start=0):
    return [
        Alert(
            T0 + timedelta(minutes=i),
            "job_failed",
            "warning",
            Subject("job", "hpc", str(i)),
            f"job {i} FAILED",
            None,
            "hpc",
            "alice",
        )
        for i in range(start, start + n)
    ]


def test_history_survives_a_reload(tmp_path):
    path = tmp_path / "state" / "alerts.jsonl"
    AlertHistory(path).append(alerts(3))
    again = AlertHistory(path)  # a new process
    assert again.load() == alerts(3)
    assert again.load(2) == alerts(3)[1:]
    assert path.stat().st_mode & 0o777 == 0o600  # titles name users and jobs


def test_history_rotates_and_stays_bounded(tmp_path):
    path = tmp_path / "alerts.jsonl"
    h = AlertHistory(path, max_bytes=2000, backups=2)
    for i in range(0, 60, 3):
        h.append(alerts(3, i))
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["alerts.jsonl", "alerts.jsonl.1", "alerts.jsonl.2"]
    assert all(p.stat().st_size <= 2000 for p in tmp_path.iterdir())
    got = h.load(None)
    # the newest alerts are all there, in order, oldest rotated away
    assert got[-1].subject.id == "59" and [int(a.subject.id) for a in got] == list(
        range(60 - len(got), 60)
    )
    assert len(got) < 60
    # last N spans rotated files
    n = len(path.read_text().splitlines()) + 2
    assert [a.subject.id for a in h.load(n)] == [str(i) for i in range(60 - n, 60)]


def test_malformed_lines_are_skipped(tmp_path):
    path = tmp_path / "alerts.jsonl"
    h = AlertHistory(path)
    h.append(alerts(1))
    with path.open("a") as fh:
        fh.write('{"torn": \n')
        fh.write(json.dumps({"rule": "x"}) + "\n")
    h.append(alerts(1, 1))
    assert [a.subject.id for a in h.load()] == ["0", "1"] and h.skipped == 2


def test_missing_file_is_empty(tmp_path):
    assert AlertHistory(tmp_path / "none.jsonl").load() == []


def test_credentials_quoted_in_an_alert_never_reach_the_history_file(tmp_path):
    path = tmp_path / "alerts.jsonl"
    leaked = Alert(
        T0,
        "job_failed",
        "critical",
        Subject("job", "hpc", "9"),
        "job 9 FAILED: export HUAWEICLOUD_SDK_SK=abcd1234secretvalue",
        None,
        "hpc",
        "alice",
    )
    AlertHistory(path).append([leaked])
    text = path.read_text()
    assert "abcd1234secretvalue" not in text
    assert AlertHistory(path).load()[0].subject.id == "9"  # still a readable alert
