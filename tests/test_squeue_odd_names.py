"""A job's name is whatever its owner typed (``sbatch -J``, ``scontrol update JobName``):
squeue prints newlines, CRs and even its field separator ``\\x1f`` raw inside it. Such a job
must stay in the queue with its name, and it must never take other jobs out of it."""

from __future__ import annotations

import pytest

from cockpit.slurm import squeue as sq
from cockpit.slurm.commands import SEP
from cockpit.slurm.squeue import SqueueCarry, parse_squeue

# `squeue --noheader --states=all -o <SQUEUE_FORMAT>` of Slurm 22.05.8 (the lab) with two held
# jobs: 27 named $'train\nFAKE\x1fROW\rx', 28 named ok-next. Bytes as squeue printed them.
REAL = (
    "28\x1fdebug\x1fok-next\x1froot\x1fPENDING\x1fJobHeldUser\x1f1\x1f1\x1f\x1f100M\x1f10:00"
    "\x1f0:00\x1f2026-12-04T22:05:34\x1fN/A\x1fN/A\x1f/tmp/cpw\x1froot\x1fnormal\x1f(null)\x1f0"
    "\x1f(null)\x1f(null)\x1fN/A\n"
    "27\x1fdebug\x1ftrain\nFAKE\x1fROW\rx\x1froot\x1fPENDING\x1fJobHeldUser\x1f1\x1f1\x1f\x1f"
    "100M\x1f10:00\x1f0:00\x1f2026-12-04T22:05:34\x1fN/A\x1fN/A\x1f/tmp/cpw\x1froot\x1fnormal"
    "\x1f(null)\x1f0\x1f(null)\x1f(null)\x1fN/A\n"
)
ODD = "train\nFAKE\x1fROW\rx"


def _row(job_id: str, name: str, state: str = "PENDING", sluid: bool = False) -> str:
    fields = [job_id, "debug", name, "alice", state, "None", "1", "1", "", "100M", "10:00"]
    fields += ["0:00", "2026-12-04T22:05:34", "N/A", "N/A", "/home/alice", "proj", "normal"]
    fields += ["(null)", "10", "(null)", "/home/alice/run.sh", "N/A"]
    if sluid:
        fields.append("s83SM8SACRPA00")
    return SEP.join(fields) + "\n"


def _names(jobs) -> dict[str, str]:
    return {j.job_id: j.name for j in jobs}


def test_the_real_capture_keeps_both_jobs_and_the_odd_name():
    jobs, warnings = parse_squeue(REAL)
    assert _names(jobs) == {"28": "ok-next", "27": ODD}
    assert warnings == []
    odd = next(j for j in jobs if j.job_id == "27")
    assert (odd.user, odd.state, odd.reason) == ("root", "PENDING", "JobHeldUser")


@pytest.mark.parametrize("sluid", [False, True])
def test_an_odd_name_on_the_first_row_does_not_empty_the_queue(sluid):
    # the first row used to decide the layout: a piece of a row has fewer columns, and with
    # 26.05's extra SLUID column every other job was then "the wrong width" and dropped
    text = _row("1", "a\nb", sluid=sluid) + "".join(
        _row(str(i), f"j{i}", sluid=sluid) for i in (2, 3)
    )
    jobs, warnings = parse_squeue(text)
    assert _names(jobs) == {"1": "a\nb", "2": "j2", "3": "j3"}
    assert warnings == []
    if sluid:
        assert {j.sluid for j in jobs} == {"s83SM8SACRPA00"}


@pytest.mark.parametrize(
    "name",
    ["two\nlines", "cr\rinside", "ends with newline\n", "\nstarts", "sep\x1finside", "x\n\x1fy"],
)
def test_each_odd_name_comes_back_as_typed(name):
    text = _row("10", "before") + _row("11", name) + _row("12", "after")
    jobs, warnings = parse_squeue(text)
    assert set(_names(jobs)) == {"10", "11", "12"}, warnings
    assert _names(jobs)["12"] == "after" and _names(jobs)["10"] == "before"
    assert _names(jobs)["11"].strip("\n") == name.strip("\n")  # a blank line is not kept


def test_a_name_that_forges_a_whole_row_does_not_add_a_job():
    fake = _row("999", "FAKE", state="FAILED").rstrip("\n")
    text = _row("20", f"x\n{fake}\n") + _row("21", "next")
    jobs, _ = parse_squeue(text)
    assert "999" not in _names(jobs) and "21" in _names(jobs)


def test_rows_split_across_chunks_and_carried_polls_agree(monkeypatch):
    text = "".join(
        _row(str(100 + i), f"job{i}\nline2" if i % 7 == 0 else f"job{i}") for i in range(300)
    )
    whole, w = parse_squeue(text)
    assert len(whole) == 300 and w == []
    monkeypatch.setattr(sq, "_CHUNK_CHARS", 333)  # a chunk ends inside many of the odd rows
    carry = SqueueCarry()
    for _ in range(2):  # the second poll reads unchanged rows from the carry
        chunked, w = parse_squeue(text, carry=carry)
        assert w == [] and _names(chunked) == _names(whole)


def test_a_row_that_cannot_be_put_back_costs_only_itself():
    # a separator in the comment, not the name: no reading of it names a state and a user
    # where they go; and a last row cut short
    comment = _row("31", "ok").replace("(null)\x1f/home", "a\x1fb\x1f/home")
    text = _row("30", "ok") + comment + _row("32", "fine") + "33\x1fdebug\x1fcut\n"
    jobs, warnings = parse_squeue(text)
    assert set(_names(jobs)) == {"30", "32"}
    assert len(warnings) == 2 and "'31" in warnings[0] and "'33" in warnings[1]
