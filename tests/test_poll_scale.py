"""The poll's fast paths at scale give what the plain paths give (bench/bench_poll.py).

parse_squeue takes rows ~4k at a time column by column and falls back to row by row for
a chunk with a malformed row; these tests force small chunks so every kind of row lands
in both paths, and compare with one row parsed at a time (the reference).
"""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError, fields
from datetime import UTC

import pytest

from cockpit.diagnosis.engine import sort_findings, sort_key
from cockpit.diagnosis.verdict import verdicts
from cockpit.errors import ParseError
from cockpit.model import Evidence, Finding, SlurmJob, Subject, positional_constructor
from cockpit.slurm import squeue as slurm
from cockpit.slurm.commands import SEP, SQUEUE_FIELDS
from cockpit.slurm.squeue import parse_squeue


def _row(**over: str) -> str:
    vals = {name: "" for _, name in SQUEUE_FIELDS}
    vals.update(
        job_id="42",
        partition="debug",
        name="train",
        user="alice",
        state="PENDING",
        reason="Priority",
        cpus="2",
        node_count="1",
        node_list="",
        min_memory="2G",
        time_limit="1-00:00:00",
        elapsed="0:00",
        submit_time="2026-11-29T20:00:00",
        start_time="2026-11-30T02:00:00",
        end_time="N/A",
        work_dir="/home/a",
        account="proj",
        qos="normal",
        dependency="(null)",
        priority="1000",
        comment="(null)",
        command="/home/a/run.sh",
    )
    vals.update(over)
    return SEP.join(vals[name] for _, name in SQUEUE_FIELDS)


_VARIANTS = [
    {},
    {"state": "RUNNING", "reason": "None", "node_list": "c[1-3]", "elapsed": "1:02:03"},
    {
        "state": "failed ",
        "reason": "NonZeroExitCode",
        "node_list": "gpu07",
        "end_time": "2026-11-29T21:00:00",
    },
    {"job_id": " 77_3 ", "min_memory": "500Mc", "time_limit": "UNLIMITED", "priority": "4294967.5"},
    {
        "user": " bob ",
        "account": "(null)",
        "qos": "N/A",
        "dependency": "afterok:41",
        "comment": "a note",
    },
    {"work_dir": "/data/with space ", "command": "(null)", "submit_time": "Unknown", "cpus": "N/A"},
    # malformed: bad job id, bad state, bad hostlist, wrong field count, blank line
    {"job_id": "x9"},
    {"state": "RUN-NING"},
    {"node_list": "c[1-"},
    "short\x1frow",
    "   ",
]


def _text(n: int, seed: int, bad: bool = True) -> str:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        v = rnd.choice(_VARIANTS if bad else _VARIANTS[:6])
        if isinstance(v, str):
            out.append(v)
        else:
            over = {"job_id": str(1000 + i), **v} if "job_id" not in v else dict(v)
            out.append(_row(**over))
    return "\n".join(out) + "\n"


def _row_by_row(text: str) -> tuple[list[SlurmJob], int]:
    """The reference: each row through the per-row path (jobs, number of rejected rows)."""
    ix = {name: i for i, (_, name) in enumerate(SQUEUE_FIELDS)}
    memo = {k: slurm._Memo(fn) for k, fn in slurm._sq_columns(UTC).items()}
    jobs, rejected = [], 0
    for line in text.split("\n"):
        if not line.strip():
            continue
        fields = line.split(SEP)
        try:
            if len(fields) != len(SQUEUE_FIELDS):
                raise ValueError("field count")
            jobs.append(slurm._job_from_fields([*fields, ""], ix, memo, None))
        except (ValueError, ParseError):
            rejected += 1
    return jobs, rejected


@pytest.mark.parametrize("chunk", [64, 700, 5000, 1 << 20])
def test_column_pass_equals_row_by_row(monkeypatch, chunk):
    text = _text(600, seed=chunk)
    monkeypatch.setattr(slurm, "_CHUNK_CHARS", chunk)
    jobs, warnings = parse_squeue(text)
    ref_jobs, rejected = _row_by_row(text)
    assert jobs == ref_jobs
    assert len(warnings) == rejected > 0
    assert all(isinstance(j, SlurmJob) for j in jobs)


@pytest.mark.parametrize("chunk", [700, 1 << 20])
def test_carry_across_polls_gives_what_a_fresh_parse_gives(monkeypatch, chunk):
    """A poller hands parse_squeue what it kept from its last poll: poll after poll (rows
    come, go, change and turn malformed, the header appears) the jobs and warnings equal a
    parse from scratch, and the carry keeps only what the latest output had."""
    monkeypatch.setattr(slurm, "_CHUNK_CHARS", chunk)
    carry = slurm.SqueueCarry()
    for seed in range(6):
        text = _text(300, seed=seed % 3)  # polls 3-5 see outputs 0-2 again: every row known
        assert parse_squeue(text, UTC, carry) == parse_squeue(text, UTC)
    again = parse_squeue(text, UTC, carry)[0]
    assert all(
        a is b for a, b in zip(again, parse_squeue(text, UTC, carry)[0], strict=True)
    )  # reused
    late = _row(job_id="9", submit_time="2026-11-29T23:59:59")
    parse_squeue(late + "\n", UTC, carry)
    assert set(carry.tables["submit_time"]) == {"2026-11-29T23:59:59", "2026-11-30T02:00:00", "N/A"}
    assert list(carry.rows) == [hash(late)]  # the text's hash, not the text (#33)
    # a value the last output rejected was not kept: the next poll warns about it again
    bad = _row(job_id="10", state="RUN-NING")
    for _ in range(2):
        assert parse_squeue(late + "\n" + bad + "\n", UTC, carry)[1] == [
            "squeue: row 2 skipped: bad state 'RUN-NING'"
        ]
    # the same row text under another column layout (another header) is parsed again, not reused
    row = "9|debug|n9|alice|RUNNING|1:00|c9|None"
    for cols in (["NAME", "USER"], ["USER", "NAME"]):
        header = "|".join(["JOBID", "PARTITION", *cols, "STATE", "TIME", "NODELIST", "REASON"])
        jobs, _ = parse_squeue(header + "\n" + row + "\n", UTC, carry)
        assert (jobs[0].name, jobs[0].user) == (
            ("n9", "alice") if cols[0] == "NAME" else ("alice", "n9")
        )


def test_warnings_name_the_row_across_chunks(monkeypatch):
    """Row numbers in warnings count data rows from the top, whichever chunk the row was in."""
    good = [_row(job_id=str(i)) for i in range(1, 40)]
    lines = [*good[:20], _row(job_id="bad!"), *good[20:30], "two\x1ffields", *good[30:]]
    text = "\n".join(lines) + "\n"
    for chunk in (100, 1000, 1 << 20):
        monkeypatch.setattr(slurm, "_CHUNK_CHARS", chunk)
        jobs, warnings = parse_squeue(text)
        assert [j.job_id for j in jobs] == [str(i) for i in range(1, 40)]
        assert warnings == [
            "squeue: row 21 skipped: bad job id 'bad!'",
            f"squeue: row 32 has 2 fields, expected {len(SQUEUE_FIELDS)}: 'two\\x1ffields'",
        ]


def test_header_only_in_first_chunk(monkeypatch):
    header = "|".join(["JOBID", "PARTITION", "NAME", "USER", "STATE", "TIME", "NODELIST", "REASON"])
    rows = [f"{i}|debug|n{i}|alice|RUNNING|1:00|c{i}|None" for i in range(1, 200)]
    monkeypatch.setattr(slurm, "_CHUNK_CHARS", 300)
    jobs, warnings = parse_squeue("\r\n".join([header, *rows]) + "\r\n")
    assert warnings == []
    assert [j.job_id for j in jobs] == [str(i) for i in range(1, 200)]
    assert jobs[5].nodes == ("c6",) and jobs[5].elapsed_s == 60 and jobs[5].cpus is None


def test_a_bad_value_is_rejected_in_every_chunk_it_appears_in(monkeypatch):
    """A rejected value is not memoised: its second appearance (a later chunk) is rejected too."""
    monkeypatch.setattr(slurm, "_CHUNK_CHARS", 200)
    text = "\n".join(
        _row(job_id=str(i), state="BAD-STATE" if i % 7 == 0 else "PENDING") for i in range(1, 50)
    )
    jobs, warnings = parse_squeue(text)
    assert len(jobs) == 42 and len(warnings) == 7
    assert all(j.state == "PENDING" for j in jobs)


def test_positional_builder_makes_the_same_frozen_job():
    vals = {f.name: f"v{i}" for i, f in enumerate(fields(SlurmJob))}  # all 27, declaration order
    built = slurm._make_job(*vals.values())
    assert built == SlurmJob(**vals) and hash(built) == hash(SlurmJob(**vals))
    with pytest.raises(FrozenInstanceError):
        built.state = "RUNNING"  # type: ignore[misc]


# --------------------------------------------------------------------------- engine orderings


def _findings(n: int, seed: int) -> list[Finding]:
    """Findings with many ties: few causes/severities/confidences, ids repeating across causes."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        cause = rnd.choice(
            [
                "pending_priority",
                "oom_killed",
                "application_error",
                "node_drain_admin",
                "no_failure",
            ]
        )
        kind = rnd.choice(["job", "job", "node", "cluster"])
        out.append(
            Finding(
                root_cause=cause,
                severity=rnd.choice(["critical", "warning", "info"]),
                subject=Subject(kind, rnd.choice(["a", "b"]), str(rnd.randint(1, n // 3))),
                title=f"t{i}",
                confidence=rnd.choice([0.6, 0.85, 0.9, 0.95, 0.8499999]),
            )
        )
    return out


@pytest.mark.parametrize("seed", range(5))
def test_sort_findings_is_sorted_by_sort_key(seed):
    fs = _findings(3000, seed)
    assert [id(f) for f in sort_findings(fs)] == [id(f) for f in sorted(fs, key=sort_key)]


@pytest.mark.parametrize("seed", range(5))
def test_verdicts_pick_the_top_finding_of_each_subject(seed):
    fs = _findings(3000, seed)
    expected: dict = {}
    for f in sorted(fs, key=sort_key):
        expected.setdefault((f.subject.kind, f.subject.source, f.subject.id), f)
    got = verdicts(fs)
    assert got.keys() == expected.keys()
    assert all(got[k] is expected[k] for k in expected)


def test_positional_constructor_of_findings():
    s = Subject("job", "c", "4")
    e = positional_constructor(Evidence)("squeue", "JobId=4", None, "", None, 0, False)
    f = positional_constructor(Finding)(
        "oom_killed", "critical", s, "t", "x", "r", (e,), 0.9, None, ()
    )
    assert e == Evidence("squeue", "JobId=4")
    assert f == Finding("oom_killed", "critical", s, "t", "x", "r", (e,), 0.9)
    assert positional_constructor(Subject)("job", "c", "4", "") == s


def test_a_kept_row_is_taken_only_for_its_own_job():
    """The carry knows a row by its text's hash: a hash that another job's row shares (forged
    here) does not put that job in this row's place; the row is parsed as printed."""
    carry = slurm.SqueueCarry()
    first, second = _row(job_id="41"), _row(job_id="42")
    parse_squeue(first + "\n", UTC, carry)
    job41 = carry.rows[hash(first)]
    carry.rows = {hash(second): job41}  # job 41's row under job 42's text
    jobs, warnings = parse_squeue(second + "\n", UTC, carry)
    assert [j.job_id for j in jobs] == ["42"] and not warnings
    assert jobs == parse_squeue(second + "\n", UTC)[0]
