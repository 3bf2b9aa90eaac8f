from datetime import UTC, datetime

import pytest

from cockpit.model import TrainingJob
from cockpit.watch.baseline import (
    Baseline,
    BaselineStore,
    diff_against_baseline,
    line_time,
    normalise,
)

GOOD = """\
[Modelarts Service Log]2024-04-30 09:00:00,120 - INFO - Training start at 2024-04-30-09:00:00
[Modelarts Service Log]2024-04-30 09:00:02,010 - INFO - Download code from obs://bucket-a/code/ \
to /home/ma-user/modelarts/user-job-dir
[Modelarts Service Log]2024-04-30 09:00:40,500 - INFO - Download code finished, 312 files
[Modelarts Service Log]2024-04-30 09:00:41,000 - INFO - Mounting obs://bucket-a/data/ to /cache/data
[Modelarts Service Log]2024-04-30 09:01:30,000 - INFO - Mount finished
[Modelarts Service Log]2024-04-30 09:01:31,000 - INFO - Running boot command: bash run.sh
"""

STUCK = """\
[Modelarts Service Log]2024-05-01 12:00:00,500 - INFO - Training start at 2024-05-01-12:00:00
[Modelarts Service Log]2024-05-01 12:00:01,900 - INFO - Download code from obs://bucket-a/code/ \
to /home/ma-user/modelarts/user-job-dir
[Modelarts Service Log]2024-05-01 12:00:44,000 - INFO - Download code finished, 318 files
[Modelarts Service Log]2024-05-01 12:00:45,000 - INFO - Mounting obs://bucket-a/data/ to /cache/data
[Modelarts Service Log]2024-05-01 12:00:46,000 - WARNING - obsfs: connect timeout, retry 1
"""


def job(
    jid="good1", phase="Running", log=GOOD, pool="pool-a", image="swr.cn-north-4/team/pt:2.1", **kw
):
    return TrainingJob(
        job_id=jid, name=jid, phase=phase, pool_name=pool, image=image, log_preview=log, **kw
    )


def test_timestamps_and_normalising():
    assert line_time(GOOD.splitlines()[2]) == datetime(2024, 4, 30, 9, 0, 40, 500000, tzinfo=UTC)
    assert line_time("2024-05-01T12:00:00.5+08:00 x").utcoffset().total_seconds() == 8 * 3600
    assert line_time("no time here") is None
    a, b = GOOD.splitlines()[2], STUCK.splitlines()[2]
    assert normalise(a) == normalise(b)  # counts and times differ, the step is the same


def test_diff_shows_where_the_stuck_job_stopped_and_step_times():
    base = Baseline(
        "good1", "good1", "pool-a", "img", "2024-04-30T09:05:00+00:00", tuple(GOOD.splitlines())
    )
    now = datetime(2024, 5, 1, 12, 10, 46, tzinfo=UTC)
    d = diff_against_baseline(STUCK.splitlines(), base, now=now)
    assert (d.passed, d.total) == (4, 6)
    assert d.last_passed.endswith("Mounting obs://bucket-a/data/ to /cache/data")
    assert d.next_expected[0].endswith("Mount finished")
    assert d.then_next_s == 49.0  # the good run mounted in 49 s
    assert d.stalled_s == 600.0  # the stuck one has been silent 10 minutes
    statuses = [(s.status, s.text.rsplit(" - ", 1)[-1]) for s in d.steps]
    assert statuses[3:] == [
        ("passed", "Mounting obs://bucket-a/data/ to /cache/data"),
        ("extra", "obsfs: connect timeout, retry 1"),
        ("missing", "Mount finished"),
        ("missing", "Running boot command: bash run.sh"),
    ]
    dl = d.steps[2]  # download took 38.5 s then, 42.1 s now
    assert (dl.then_s, dl.now_s) == (pytest.approx(38.49), pytest.approx(42.1))
    assert "stopped after" in d.summary and "step 4/6" in d.summary and "49s then" in d.summary


def test_store_records_good_runs_and_finds_the_closest(tmp_path):
    path = tmp_path / "b.json"
    st = BaselineStore(path)
    assert st.record(job("init", phase="Creating")) is None  # never reached Running
    assert st.record(job("empty", log="")) is None
    b = st.record(job(), now=datetime(2024, 4, 30, 9, 5, tzinfo=UTC))
    assert b is not None and len(b.lines) == 6 and st.record(job()) is None  # once per job
    st.record(job("other-image", image="swr/other:1"), now=datetime(2024, 4, 30, 10, tzinfo=UTC))
    again = BaselineStore(path)  # survives a restart
    stuck = job("stuck", phase="Creating", log=STUCK)
    assert again.closest_baseline(stuck).job_id == "good1"
    assert (
        again.closest_baseline(job("x", pool="pool-b", image="swr/other:1")).job_id == "other-image"
    )
    assert again.closest_baseline(job("y", pool="pool-z", image="none")) is None


def test_store_keeps_fifty_lines_and_few_per_key(tmp_path):
    st = BaselineStore(tmp_path / "b.json", per_key=2)
    long_log = "\n".join(f"2024-04-30 09:00:{i % 60:02d} step {i}" for i in range(80))
    for i in range(4):
        st.record(job(f"g{i}", log=long_log), now=datetime(2024, 4, 30, 9, i, tzinfo=UTC))
    assert [b.job_id for b in st.baselines] == ["g2", "g3"]
    assert len(st.baselines[0].lines) == 50


def test_corrupt_file_is_an_empty_store(tmp_path):
    path = tmp_path / "b.json"
    path.write_text("{not json")
    assert BaselineStore(path).baselines == ()
