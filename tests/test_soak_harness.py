"""The soak harness measures what it says (bench/soak.py): job churn and missed polls."""

from __future__ import annotations

from bench.soak import CHURN_LIFE_S, PollLog, churn


def test_churn_gives_every_job_a_new_id_within_one_life_and_keeps_the_row():
    rows = b"".join(f"{4200000 + i}\x1fcpu\x1fjob{i}\n".encode() for i in range(200))
    before = churn(rows, 0.0).splitlines()
    after = churn(rows, float(CHURN_LIFE_S)).splitlines()
    assert len(before) == len(after) == 200
    # one life later every job is another job; the rest of each row is untouched
    assert all(
        a.split(b"\x1f")[0] != b.split(b"\x1f")[0] for a, b in zip(after, before, strict=True)
    )
    assert [r.split(b"\x1f")[1:] for r in after] == [r.split(b"\x1f")[1:] for r in before]
    # staggered: half a life later only part of the queue has turned over
    half = churn(rows, CHURN_LIFE_S / 2).splitlines()
    changed = sum(h != b for h, b in zip(half, before, strict=True))
    assert 0 < changed < 200


def test_a_poll_late_by_more_than_half_an_interval_counts_the_intervals_skipped():
    log = PollLog(interval=10.0)
    log.starts = [0.0, 11.0, 24.0, 61.0]  # due at 10, 21, 34 (each poll took 1 s)
    log.due = [10.0, 21.0, 34.0]
    assert log.late() == [1.0, 3.0, 27.0]
    assert log.missed() == 3  # 27 s late: 2 whole intervals skipped and this one late
    assert PollLog(10.0, [0.0, 14.9], [10.0]).missed() == 0
