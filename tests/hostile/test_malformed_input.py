"""Malformed data: truncated JSON, squeue with missing columns or another Slurm version's
layout, sacct '16?'/empty fields, non-UTF-8/GBK bytes, 10 MB lines, empty and binary
files. Parsers raise only ParseError; sources turn it into a SourceError or a warning;
the rest of the snapshot keeps working."""

from __future__ import annotations

import json
import os

import pytest

from cockpit.diagnosis import logscan
from cockpit.errors import ParseError
from cockpit.ingest import bundle
from cockpit.model import Subject
from cockpit.slurm import parse as slurm
from cockpit.slurm.commands import SEP, SQUEUE_FIELDS
from cockpit.slurm.parse_json import parse_sacct_json, parse_sinfo_json, parse_squeue_json
from cockpit.slurm.source import SlurmSource
from cockpit.slurm.squeue import parse_squeue
from cockpit.transport import CommandResult
from tests.hostile.site import hostile_sources


def row(**over) -> str:
    base = {
        "job_id": "7",
        "partition": "gpu",
        "name": "train",
        "user": "u",
        "state": "RUNNING",
        "reason": "None",
        "cpus": "4",
        "node_count": "1",
        "node_list": "cn01",
        "min_memory": "4G",
        "time_limit": "1:00:00",
        "elapsed": "5:00",
        "submit_time": "2024-05-01T10:00:00",
        "start_time": "2024-05-01T10:00:01",
        "end_time": "N/A",
        "work_dir": "/home/u",
        "account": "a",
        "qos": "normal",
        "dependency": "(null)",
        "priority": "100",
        "comment": "(null)",
        "command": "/home/u/run.sh",
        "gres": "N/A",
    }
    base.update(over)
    return SEP.join(base[f] for _, f in SQUEUE_FIELDS)


@pytest.mark.parametrize(
    "text",
    [
        '{"jobs": [',
        '{"jobs": [{"job_id": 1,',
        "null",
        "[]",
        '{"jobs": 5}',
        "\x00\x01",
        # the only entry is unusable: nothing to show, so the whole output is an error
        '{"jobs": [{"job_id": {"number": "x"}}], "nodes": [{"name": null}]}',
    ],
)
@pytest.mark.parametrize(
    ("fn", "command"),
    [
        (parse_squeue_json, "squeue --json"),
        (parse_sinfo_json, "sinfo --json"),
        (parse_sacct_json, "sacct --json"),
    ],
)
def test_truncated_or_invalid_json_is_a_parse_error(text, fn, command):
    with pytest.raises(ParseError) as ei:
        fn(text)
    assert command in str(ei.value)  # the status line says which command's output was bad


def test_a_json_entry_with_a_garbage_job_id_or_node_name_is_skipped_with_a_warning():
    good_job = {"job_id": 7, "job_state": "RUNNING", "name": "ok", "user_name": "u"}
    jobs, warnings = parse_squeue_json(
        json.dumps({"jobs": [{"job_id": {"number": "x"}}, good_job]})
    )
    assert [j.job_id for j in jobs] == ["7"]
    assert len(warnings) == 1 and "entry 0" in warnings[0]
    nodes, warnings = parse_sinfo_json(
        json.dumps({"nodes": [{"name": None}, {"name": "cn01", "state": "IDLE"}]})
    )
    assert [n.name for n in nodes] == ["cn01"]
    assert len(warnings) == 1 and "entry 0" in warnings[0]


def test_squeue_rows_with_missing_columns_are_skipped_with_a_warning_naming_them():
    text = (
        "\n".join([row(job_id="1"), SEP.join(["2", "gpu", "short"]), row(job_id="3", name="ok")])
        + "\n"
    )
    jobs, warnings = parse_squeue(text)
    assert [j.job_id for j in jobs] == ["1", "3"]
    assert len(warnings) == 1 and "row 2" in warnings[0] and "3 fields" in warnings[0]
    with pytest.raises(ParseError):
        parse_squeue(SEP.join(["2", "gpu"]) + "\n")


def test_squeue_from_another_slurm_version_with_a_header_maps_columns_by_name():
    text = (
        "JOBID|PARTITION|NAME|USER|STATE|TIME|NODES|NODELIST|EXTRA_24_COLUMN\n"
        "42|gpu|train|u|PENDING|0:00|1||something new\n"
    )
    jobs, _ = parse_squeue(text)
    assert jobs[0].job_id == "42" and jobs[0].state == "PENDING" and jobs[0].name == "train"


def test_sacct_rows_with_16_question_mark_and_empty_fields():
    fields = [
        "JobID",
        "JobName",
        "Partition",
        "User",
        "State",
        "ExitCode",
        "ReqMem",
        "MaxRSS",
        "Elapsed",
        "Timelimit",
        "NodeList",
        "Reason",
        "Start",
        "End",
    ]
    rows = [
        ["9", "x", "gpu", "u", "FAILED", "16?", "", "", "", "", "", "", "Unknown", ""],
        [
            "9.batch",
            "batch",
            "",
            "",
            "CANCELLED by 0",
            "0:9",
            "4G",
            "?",
            "00:00:01",
            "",
            "cn01",
            "",
            "",
            "",
        ],
        ["9.0", "", "", "", "", "", "", "", "", "", "", "", "", ""],
    ]
    text = "\n".join(SEP.join(r) for r in rows) + "\n"
    recs, warnings = slurm.parse_sacct(text)
    assert recs and recs[0].job_id == "9"
    assert len(fields) == len(rows[0])


async def test_gbk_and_invalid_utf8_in_squeue_output_keep_the_job():
    slurm_src, _, transport, _ = hostile_sources("x")
    out = (
        row(job_id="5", name="训练").encode("gbk")
        + b"\n"
        + row(job_id="6", name="bad\xff\xfe").encode("latin-1")
        + b"\n"
    )

    async def run(argv, timeout=30.0):
        if argv[0] == "squeue":
            return CommandResult(tuple(argv), out, b"", 0)
        return await type(transport).run(transport, argv, timeout)

    transport.run = run
    snap = await slurm_src.poll()
    # (the snapshot may also hold jobs that sacct's backfill found ended since the last poll)
    ours = {j.job_id: j for j in snap.jobs if j.job_id in ("5", "6")}
    assert snap.ok and sorted(ours) == ["5", "6"]
    assert "\ufffd" in ours["5"].name
    assert ours["6"].name.startswith("bad") and "\ufffd" in ours["6"].name


async def test_garbage_from_the_controller_is_a_source_error_not_an_exception():
    slurm_src, _, transport, _ = hostile_sources("x")

    async def run(argv, timeout=30.0):
        return CommandResult(tuple(argv), os.urandom(2000).replace(b"\n", b"") + b"\n", b"", 0)

    transport.run = run
    snap = await slurm_src.poll()
    assert snap.error is not None and snap.error.kind == "parse" and snap.error.message


def test_log_scanner_on_empty_binary_and_10_mb_single_line():
    assert logscan.first_error(b"") is None
    logscan.first_error(os.urandom(1 << 20))  # binary: may or may not match, never raises
    big = b"x" * (10 << 20) + b" RuntimeError: CUDA error: out of memory\n"
    hit = logscan.first_error(big)
    assert hit is not None and hit.offset == 0 and len(hit.text) <= 1 << 16
    gbk = "错误: 显存不足\nRuntimeError: CUDA error: out of memory\n".encode("gbk")
    hit = logscan.first_error(gbk)  # 显存不足 (device memory exhausted) names the cause itself
    assert (hit.line, hit.label, hit.text) == (1, "gpu_out_of_memory", "错误: 显存不足")


def test_bundle_with_empty_binary_and_gbk_files_loads(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "core.bin").write_bytes(os.urandom(4096))
    (tmp_path / "slurm-7.out").write_bytes(
        "开始\nslurmstepd: error: Detected 1 oom_kill event in StepId=7.batch\n".encode("gbk")
    )
    (tmp_path / "squeue.txt").write_text("JOBID|PARTITION|NAME\n7|gpu\n")  # truncated row
    (tmp_path / "sacct.json").write_text('{"jobs": [')  # truncated JSON
    report = bundle.diagnose_bundle(str(tmp_path))
    assert report is not None


async def test_log_truncated_while_followed_then_read_again(tmp_path):
    from cockpit.transport import LocalTransport

    p = tmp_path / "slurm-8.out"
    p.write_bytes(b"line\n" * 1000)
    src = SlurmSource("c", LocalTransport())
    assert (await src.stat(str(p))).size == 5000
    p.write_bytes(b"rotated\n")  # truncated under our feet
    st = await src.stat(str(p))
    assert (
        st.size == 8 and await src.read_range(str(p), 4000, 100) == b""
    )  # old offset: empty, no error
    assert await src.read_range(str(p), 0, 100) == b"rotated\n"


async def test_artifacts_for_a_job_whose_logs_are_missing_report_errors_not_raise():
    slurm_src, *_ = hostile_sources("x", log_lines=[])
    snap = await slurm_src.poll()
    arts = await slurm_src.artifacts(Subject("job", slurm_src.name, "99999"), snap)
    assert any(k.startswith("error: ") for k in arts.commands)


@pytest.mark.parametrize(
    "field, value",
    [
        ("elapsed", "1:" + "9" * 400 + ".5"),
        ("priority", "9" * 400 + ".5"),
        ("min_memory", "9" * 400 + "G"),
    ],
)
def test_an_absurd_number_skips_its_row_not_the_whole_queue(field, value):
    """int(float('1e400')) raises OverflowError, not ValueError: one such row blanked every job."""
    text = "\n".join([row(job_id="1"), row(job_id="2", **{field: value}), row(job_id="3")]) + "\n"
    jobs, warnings = parse_squeue(text)
    assert [j.job_id for j in jobs] == ["1", "3"]
    assert len(warnings) == 1 and "row 2" in warnings[0]


@pytest.mark.parametrize("name", ["a\x0cb", "a\u2028b", "a\x85b", "a\x1eb", "a\x0bb", "x\x0c123"])
def test_batched_sacct_split_keeps_rows_whose_job_name_has_a_line_separator(name):
    """sbatch -J takes any character; str.splitlines() would cut such a row in two."""
    cols = ["JobID", "JobName", "State"]
    text = "".join(SEP.join([jid, name, "FAILED"]) + "\n" for jid in ("12", "12.batch", "123"))
    parts = slurm.split_sacct(text, ["12", "123"])
    rows12 = [ln.split(SEP) for ln in parts["12"].split("\n") if ln]
    assert [r[0] for r in rows12] == ["12", "12.batch"] and all(len(r) == len(cols) for r in rows12)
    assert [ln.split(SEP)[0] for ln in parts["123"].split("\n") if ln] == ["123"]
