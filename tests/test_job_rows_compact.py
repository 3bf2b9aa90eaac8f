"""The queue's rows are made from their jobs when read (#33: one object a job, not a row plus
its cells and sort tuples). What the operator sees does not depend on that: sorting by a
column orders the rows by what that column shows (numbers as numbers), the filter finds a
job by any cell, and a row read twice shows the same text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.widgets.table import _sort_value

from cockpit.model import ExitCode, Finding, SlurmJob, Snapshot, Subject
from cockpit.views import JOB_COLUMNS, job_rows

NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _jobs() -> tuple[SlurmJob, ...]:
    out = []
    for i, (state, gpus) in enumerate(
        [
            ("RUNNING", 8),
            ("PENDING", None),
            ("OUT_OF_MEMORY", 16),
            ("COMPLETED", 2),
            ("RUNNING", None),
        ]
    ):
        out.append(
            SlurmJob(
                job_id=("9", "10", "100_3", "11", "12")[i],
                name=f"train-{5 - i}",
                user=("zoe", "amy", "bob", "amy", "carl")[i],
                partition="gpu",
                state=state,
                reason="Priority" if state == "PENDING" else "None",
                cpus=(64, 8, 128, 4, 16)[i],
                node_count=1,
                submit_time=NOW - timedelta(minutes=10 * (i + 1)),
                elapsed_s=(600, 0, 7200, 59, 3600)[i],
                elapsed_at=NOW.timestamp() if state == "RUNNING" else None,
                gpus_per_node=gpus,
            )
        )
    return tuple(out)


def _rows():
    jobs = _jobs()
    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, jobs=jobs)
    failed = Finding(
        root_cause="oom",
        severity="critical",
        subject=Subject("job", "lab", "100_3"),
        title="OUT_OF_MEMORY: MaxRSS 64.1G of ReqMem 64G",
    )
    verdicts = {("job", "lab", "100_3"): failed}
    return job_rows(snap, verdicts, NOW, exits={"100_3": ExitCode(0, 9)})


def test_sorting_by_each_column_orders_by_what_it_shows():
    rows = _rows()
    for col, column in enumerate(JOB_COLUMNS):
        as_of = rows.as_of if column.clock else None
        by_value = [r.key for r in sorted(rows, key=lambda r: _sort_value(r, col, as_of))]
        shown = [r.cells[col] for r in sorted(rows, key=lambda r: _sort_value(r, col, as_of))]
        assert len(by_value) == 5, column.label
        if column.label == "USER":
            assert shown == ["amy", "amy", "bob", "carl", "zoe"]
        if column.label == "JOBID":  # numbers as numbers: 9 before 10, the array task after 12
            assert shown == ["9", "10", "11", "12", "100_3"]
        if column.label == "GPUS":  # 16 after 8, not before it as text
            assert shown[:3] == ["2", "8", "16"]
        if column.label == "N/CPU":
            assert shown == ["1/4", "1/8", "1/16", "1/64", "1/128"]


def test_rows_show_the_verdict_exit_and_find_by_any_cell():
    rows = _rows()
    failed = rows[rows.key_index["lab\x1f100_3"]]
    # the verdict first (critical), its lead that repeats the state dropped, the sacct exit
    assert rows[0] is failed
    assert failed.cells[8] == "MaxRSS 64.1G of ReqMem 64G" and failed.cells[9] == "0:9"
    assert failed.cells == failed.cells  # read twice: the same text
    for cell in ("carl", "train-1", "priority", "0:9"):
        assert sum(cell.lower() in h for h in rows.haystack) >= 1, cell
    # a running job's TIME ticks (drawn by the table), a finished one's is fixed
    running = rows[rows.key_index["lab\x1f9"]]
    done = rows[rows.key_index["lab\x1f11"]]
    assert running.tick is not None and running.cells[5] == ""
    assert done.tick is None and done.cells[5] == "0:59"
