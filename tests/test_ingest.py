"""``cockpit diagnose`` on what an operator has: one file, a folder, an archive, a paste on
stdin, a log too big to hold; bad input gets one clear line, never a traceback; what is not
read is said; a log line is a finding about the job or node it names, not about the file."""

from __future__ import annotations

import io
import json
import os
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.ingest import sources
from cockpit.ingest.bundle import diagnose_bundle

OOM = b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.batch cgroup.\n"
SQUEUE_PASTE = (
    "$ squeue -u bob\n"
    " JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n"
    " 42 gpu train bob PD 0:00 1 (ReqNodeNotAvail, UnavailableNodes:gn01)\n"
)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("COCKPIT_STRICT_RULES", "1")


def run_json(argv: list[str], capsys) -> tuple[int, dict]:
    rc = main(["diagnose", *argv, "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def stdin_of(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))


# --------------------------------------------------------------------------- forms of input


def test_a_pasted_session_on_stdin(monkeypatch, capsys):
    stdin_of(monkeypatch, SQUEUE_PASTE.encode())
    rc, out = run_json(["-"], capsys)
    top = out["findings"][0]
    assert (top["root_cause"], top["subject"]) == ("pending_node_unavailable", "job 42")
    assert out["first_error"]["file"] == "stdin" and out["first_error"]["line"] == 3
    assert rc == 0  # waiting on a node is not a critical failure


def test_a_single_file_and_the_bundle_flag_agree(tmp_path, capsys):
    f = tmp_path / "slurm-4242.out"
    f.write_bytes(b"epoch 1\n" + OOM)
    rc, out = run_json([str(f)], capsys)
    assert rc == 1 and out["findings"][0]["root_cause"] == "oom_killed"
    assert out["first_error"] == {"file": "slurm-4242.out", "line": 2, "text": OOM.decode().strip()}
    assert run_json(["--bundle", str(f)], capsys)[1]["first_error"] == out["first_error"]


def _members() -> dict[str, bytes]:
    return {"case/slurm-4242.out": b"start\n" + OOM, "case/notes.md": b"nothing here\n"}


@pytest.mark.parametrize("suffix", ["tar", "tar.gz", "tgz", "zip"])
def test_archives_are_read_by_their_bytes(tmp_path, capsys, suffix):
    path = tmp_path / f"ticket.{suffix}"
    if suffix == "zip":
        with zipfile.ZipFile(path, "w") as z:
            for name, data in _members().items():
                z.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz" if "gz" in suffix else "w") as tf:
            for name, data in _members().items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    rc, out = run_json([str(path)], capsys)
    assert out["first_error"]["file"] == "case/slurm-4242.out" and out["first_error"]["line"] == 2


def test_an_archive_piped_on_stdin(tmp_path, monkeypatch, capsys):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("slurm-4242.out")
        info.size = len(OOM)
        tf.addfile(info, io.BytesIO(OOM))
    stdin_of(monkeypatch, buf.getvalue())
    assert run_json(["-"], capsys)[1]["first_error"]["file"] == "slurm-4242.out"


def test_archive_paths_outside_it_links_and_the_byte_cap_are_said(tmp_path, monkeypatch, capsys):
    path = tmp_path / "evil.tar"
    with tarfile.open(path, "w") as tf:
        for name, data in [
            ("../../etc/cron.d/x", OOM),
            ("a/slurm-1.out", b"x" * 300 + b"\n"),
            ("b/slurm-2.out", OOM),
        ]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("a/passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    monkeypatch.setattr(sources, "MAX_ARCHIVE_BYTES", 200)
    rc, out = run_json([str(path)], capsys)
    notes = "\n".join(out["notes"])
    assert "../../etc/cron.d/x: refused (path outside the archive)" in notes
    assert "a/passwd: not a regular file" in notes
    assert "a/slurm-1.out: cut at the archive's 200 B cap" in notes
    assert "1 member(s) past the 200 B cap not read: b/slurm-2.out" in notes
    assert not out["findings"] or out["findings"][0]["root_cause"] != "oom_killed"


def test_a_lone_gzip_log(tmp_path, capsys):
    import gzip

    path = tmp_path / "slurmd-cn01.log.gz"
    path.write_bytes(
        gzip.compress(
            b"[2024-05-01T10:00:00.000] [7.batch] error: Detected 1 "
            b"oom-kill event(s) in StepId=7.batch cgroup.\n"
        )
    )
    rc, out = run_json([str(path)], capsys)
    assert out["first_error"]["file"] == "slurmd-cn01.log"
    assert out["findings"][0]["root_cause"] == "oom_killed"


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("core.bin", bytes(range(256)) * 8, "core.bin: binary, not text (2.0 KiB), skipped"),
        ("empty.txt", b"", "empty.txt: empty"),
        ("blank.txt", b"\n\n  \n", "blank.txt: empty"),
    ],
)
def test_nothing_to_diagnose_is_one_clear_line(tmp_path, capsys, name, data, message):
    (tmp_path / name).write_bytes(data)
    assert main(["diagnose", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"cockpit: {message}: nothing to diagnose"


def test_a_missing_path_is_a_user_error(tmp_path, capsys):
    assert main(["diagnose", str(tmp_path / "nope.log")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_non_utf8_text_is_read_and_nothing_known_still_shows_the_first_red_error(tmp_path, capsys):
    (tmp_path / "gbk.log").write_bytes("开始\n运行 ERROR: 奇怪的故障\n".encode("gbk") + b"\xff\n")
    rc, out = run_json([str(tmp_path / "gbk.log")], capsys)
    assert out["first_error"]["line"] == 2
    # never "nothing wrong" while a log holds an error line: an honest unrecognised failure
    (top, *_) = out["findings"]
    assert top["root_cause"] == "unrecognised_failure" and "奇怪的故障" in top["title"]
    assert top["evidence"][0]["line"] == 2 and "no rule knows" in top["explanation"].lower()
    assert top["severity"] == "warning"  # no failed job or state in the input: not critical


def test_notes_are_printed_for_people_too(tmp_path, capsys):
    (tmp_path / "slurm-5.out").write_bytes(OOM)
    (tmp_path / "core.bin").write_bytes(b"\x00" * 100)
    main(["diagnose", str(tmp_path)])
    assert "note: core.bin: binary, not text (100 B), skipped" in capsys.readouterr().out


# --------------------------------------------------------------------------- attribution


def test_controller_log_lines_are_findings_about_their_job_and_node(tmp_path):
    (tmp_path / "slurmctld.log").write_text(
        "[2024-05-01T10:00:00.000] sched: Allocate JobId=42 NodeList=c05 #CPUs=4 Partition=gpu\n"
        "[2024-05-01T10:05:00.000] _job_complete: JobId=42 OOM failure\n"
        "[2024-05-01T10:06:00.000] error: Node c07 has low real_memory size (63000 < 64000)\n"
        "[2024-05-01T10:06:00.001] error: Setting node c07 state to DRAIN\n"
    )
    (tmp_path / "squeue.txt").write_text(
        "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n42 gpu t bob OOM 5:00 1 c05\n"
    )
    out = diagnose_bundle(str(tmp_path)).to_json()
    by = {(f["subject"], f["root_cause"]) for f in out["findings"]}
    assert ("job 42", "oom_killed") in by and ("node c07", "node_drain_low_memory") in by
    assert not [f for f in out["findings"] if f["subject"].startswith("file")]
    job = next(f for f in out["findings"] if f["subject"] == "job 42")
    assert ("slurmctld.log", 2) in {(e["file"], e["line"]) for e in job["evidence"]}


# --------------------------------------------------------------------------- large files


def _big_log(path: Path, size: int, tail: bytes) -> int:
    """``size`` bytes of healthy training lines, then ``tail``; the line number of ``tail``."""
    line = b"2024-05-01 10:00:00 [rank 3] step 1200 loss 0.4211 lr 3e-4 throughput 812/s ok\n"
    block = line * (1 << 20 // len(line))
    with open(path, "wb") as fh:
        n = 0
        while n + len(block) <= size:
            fh.write(block)
            n += len(block)
        fh.write(tail)
        fh.write(line * 3)
    return n // len(line) + 1


def test_a_150_mib_log_is_scanned_to_its_end_and_the_note_says_so(tmp_path):
    line = _big_log(tmp_path / "train.log", 150 << 20, OOM)
    (tmp_path / "squeue.txt").write_text(
        "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n4242 gpu t bob F 1:00 1 c1\n"
    )
    report = diagnose_bundle(str(tmp_path))
    assert report.first_error is not None
    assert (report.first_error.file, report.first_error.line) == ("train.log", line)
    top = report.findings[0]
    assert (top.root_cause, top.subject.id) == ("oom_killed", "4242")  # the line names its job
    note = next(n for n in report.notes if n.startswith("train.log"))
    assert "read streaming" in note and f"line {line:,}" in note


def test_streaming_memory_stays_flat_and_what_is_not_read_is_said(tmp_path, monkeypatch):
    from cockpit.ingest import logfile

    monkeypatch.setattr(sources, "SMALL", 1 << 20)
    monkeypatch.setattr(logfile, "CHUNK", 1 << 20)
    _big_log(tmp_path / "early.log", 64 << 20, b"")
    with open(tmp_path / "early.log", "r+b") as fh:
        fh.seek(2 << 20)
        fh.write(OOM.rjust(80, b" "))  # replaces bytes, not lines: still one line each
    tracemalloc.start()
    report = diagnose_bundle(str(tmp_path / "early.log"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert report.findings[0].root_cause == "oom_killed"
    assert peak < 16 << 20  # a few 1 MiB pieces, not the 64 MiB file
    note = report.notes[0]
    assert "not read" in note and "MiB" in note
    assert os.path.getsize(tmp_path / "early.log") > 60 << 20


SESSION_WITH_SACCT = """\
[alice@login01 ~]$ squeue -u alice
             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
            881234       gpu   llama7b    alice PD       0:00      4 (QOSMaxGRESPerUser)
[alice@login01 ~]$ sacct -j 881200
JobID           JobName  Partition    Account  AllocCPUS      State ExitCode
------------ ---------- ---------- ---------- ---------- ---------- --------
881200         finetune        gpu     lab-a         16 OUT_OF_MEMORY    0:125
881200.batch      batch                lab-a         16 OUT_OF_MEMORY    0:125
"""


def test_a_sacct_value_wider_than_its_ruler_is_not_lost(monkeypatch, capsys):
    """sacct prints OUT_OF_MEMORY under a 10-dash ruler when --format widths are small: the
    job must still be read (it was silently dropped, leaving only the pending job)."""
    stdin_of(monkeypatch, SESSION_WITH_SACCT.encode())
    rc, out = run_json(["-"], capsys)
    causes = {(f["subject"], f["root_cause"]) for f in out["findings"]}
    assert ("job 881200", "oom_killed") in causes
    assert ("job 881234", "pending_qos_limit") in causes
    assert out["findings"][0]["subject"] == "job 881200"  # the dead job before the waiting one
    assert rc == 1


def test_a_damaged_zip_beside_a_log_is_a_note_not_a_traceback(tmp_path, capsys):
    (tmp_path / "logs.zip").write_bytes(b"PK\x03\x04garbage")
    (tmp_path / "slurm-4242.out").write_bytes(b"start\n" + OOM)
    rc, out = run_json([str(tmp_path)], capsys)
    assert out["findings"][0]["root_cause"] == "oom_killed"
    assert any("logs.zip" in n and "damaged" in n for n in out["notes"])
    assert main(["diagnose", str(tmp_path / "logs.zip")]) == 2  # alone: nothing to diagnose
    assert "damaged archive" in capsys.readouterr().err


def test_an_uncaught_cxx_exception_alone_is_an_application_error_at_its_message(tmp_path):
    (tmp_path / "run.log").write_bytes(
        b"step 1 ok\n"
        b"terminate called after throwing an instance of 'std::runtime_error'\n"
        b"  what():  frobnicator state invalid\n"
        b"Aborted (core dumped)\n"
    )
    (f, *_) = diagnose_bundle(str(tmp_path)).to_json()["findings"]
    assert f["root_cause"] == "application_error"
    assert f["evidence"][0]["line"] == 3
