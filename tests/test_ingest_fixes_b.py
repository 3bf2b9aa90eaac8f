"""`cockpit diagnose PATH`: what an operator's paste, folder or archive gets, at scale and
when it is odd (damaged or cut compressed data, pipes and links in a folder, NUL-led or
UTF-16 logs). One test per defect; each asserts what the operator sees."""

from __future__ import annotations

import gzip
import io
import os
import random
import tarfile
import threading
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from cockpit.ingest import locate, sources
from cockpit.ingest.bundle import diagnose_bundle

OOM = b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.batch cgroup.\n"
HEADER = "JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"


def _row(i: int) -> str:
    return f"{100000 + i:>8}   gpu  train  user1 PD   0:00   1 (DependencyNeverSatisfied)\n"


def _noise(n: int, seed: int = 1) -> bytes:
    """Healthy training lines that compress only so much (numbers vary)."""
    rnd = random.Random(seed)
    return b"".join(
        b"2024-05-01 10:00:%02d [rank 3] step %d loss %.6f ok\n" % (i % 60, i, rnd.random())
        for i in range(n)
    )


def _ooms(report) -> list:
    return [f for f in report.findings if f.root_cause == "oom_killed"]


# ------------------------------------------------------------------ 1. locate is linear


@pytest.mark.parametrize("shape", ["one table", "one prompt per job"])
def test_thousands_of_pending_jobs_each_point_at_their_own_row(tmp_path, monkeypatch, shape):
    n = 1500
    if shape == "one table":
        text = "$ squeue\n" + HEADER + "".join(_row(i) for i in range(n))
        row_line = {str(100000 + i): 3 + i for i in range(n)}
    else:
        text = "".join(f"$ squeue -j {100000 + i}\n" + HEADER + _row(i) for i in range(n))
        row_line = {str(100000 + i): 3 + 3 * i for i in range(n)}
    (tmp_path / "paste.txt").write_text(text)
    calls = [0]
    real = locate._mentions

    def counting(*a):
        calls[0] += 1
        return real(*a)

    monkeypatch.setattr(locate, "_mentions", counting)
    report = diagnose_bundle(str(tmp_path / "paste.txt"))
    jobs = [f for f in report.findings if f.subject.kind == "job"]
    assert len(jobs) == n
    for f in jobs:
        lines = {e.line for e in f.evidence if e.where == "paste.txt"}
        assert row_line[f.subject.id] in lines, f.subject.id
    # each line is looked at about once, not once per finding (n * n = 2.25M before)
    assert calls[0] < 20 * n


# ------------------------------------------------------------------ 2. archive memory


def test_an_archive_of_many_big_members_costs_flat_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_HELD", 16 << 20, raising=False)
    line = b"2024-05-01 10:00:00 [rank 3] step 1200 loss 0.4211 lr 3e-4 ok " + b"x" * 40 + b"\n"
    member = line * ((20 << 20) // len(line))
    n = 10
    with zipfile.ZipFile(tmp_path / "ticket.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(n - 1):
            z.writestr(f"train-{i}.log", member)
        z.writestr("slurm-4242.out", member + OOM)  # the cause, in the last member
    expanded = n * len(member)
    del member
    tracemalloc.start()
    try:
        report = diagnose_bundle(str(tmp_path / "ticket.zip"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _ooms(report), [f.root_cause for f in report.findings]
    assert peak < expanded / 3, (peak, expanded)  # ~1.0x the expanded size before
    # what was only scanned is said
    streamed = [n for n in report.notes if "read streaming" in n and "held" in n]
    assert any(n.startswith("slurm-4242.out") for n in streamed), report.notes


# ------------------------------------------------------------------ 3. damaged zip member


def _damaged_zip(path: Path) -> str:
    """A zip whose first member's deflate data is damaged (zlib.error on read) beside an
    intact member holding the cause; returns the damaged member's name."""
    for pos in range(0, 4000, 7):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("train.log", _noise(3000))
            z.writestr("slurm-4242.out", OOM)
        data = bytearray(path.read_bytes())
        start = 30 + len("train.log")  # the first member's data follows its local header
        data[start + pos] ^= 0xFF
        path.write_bytes(bytes(data))
        try:
            with zipfile.ZipFile(path) as z:
                z.read("train.log")
        except zlib.error:
            return "train.log"
        except Exception:  # noqa: BLE001 - a CRC error: try another byte
            continue
    raise AssertionError("no byte to flip gives a zlib error")


def test_a_damaged_zip_member_is_a_note_and_the_rest_is_diagnosed(tmp_path):
    damaged = _damaged_zip(tmp_path / "ticket.zip")
    report = diagnose_bundle(str(tmp_path / "ticket.zip"))  # zlib.error before
    assert _ooms(report)
    assert any(n.startswith(damaged) and "damaged" in n for n in report.notes), report.notes


# ------------------------------------------------------------------ 4. pipes and links


def test_a_folder_with_a_pipe_and_links_is_read_without_hanging_or_leaving_it(tmp_path):
    folder = tmp_path / "ticket"
    folder.mkdir()
    (folder / "slurm-4242.out").write_bytes(OOM)
    os.mkfifo(folder / "live.log")
    (tmp_path / "secret.txt").write_text("root:x:0:0:SECRET_OUTSIDE:/root:/bin/bash\n")
    os.symlink(tmp_path / "secret.txt", folder / "outside.log")
    os.symlink("/etc/passwd", folder / "passwd")
    got: dict = {}

    def run() -> None:
        got["report"] = diagnose_bundle(str(folder))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(30)
    if t.is_alive():  # hung on the pipe: give it an end so the thread can finish
        fd = os.open(folder / "live.log", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("diagnose waited on a named pipe in the folder")
    report = got["report"]
    assert _ooms(report)
    names = {f.name for f in report.bundle.files}
    assert names == {"slurm-4242.out"}, names
    text = b"".join(f.data for f in report.bundle.files)
    assert b"SECRET_OUTSIDE" not in text and b"root:x:0:0" not in text
    notes = " | ".join(report.notes)
    assert "live.log: a named pipe" in notes
    assert "outside.log: symbolic link" in notes and "passwd: symbolic link" in notes


# ------------------------------------------------------------------ 5. NUL-led and UTF-16


LOG = _noise(50) + OOM + _noise(20, seed=2)


@pytest.mark.parametrize(
    "content, note",
    [
        (b"\x00" * 8192 + LOG, "NUL bytes"),  # logrotate copytruncate
        (b"\x00" * (3 << 20) + LOG, "NUL bytes"),  # more NULs than one look at the head
        (b"\xff\xfe" + LOG.decode().encode("utf-16-le"), "UTF-16"),  # PowerShell's >
        (b"\xfe\xff" + LOG.decode().encode("utf-16-be"), "UTF-16"),
    ],
    ids=["nul-8k", "nul-3m", "utf16le", "utf16be"],
)
def test_nul_led_and_utf16_logs_are_read_as_text(tmp_path, monkeypatch, content, note):
    monkeypatch.setattr(sources, "SMALL", 1 << 20)
    (tmp_path / "train.log").write_bytes(content)
    report = diagnose_bundle(str(tmp_path / "train.log"))  # "binary, not text" before
    assert _ooms(report), report.notes
    assert report.first_error is not None
    assert report.first_error.line == 51  # NULs hold no newline: line numbers as in the file
    assert "oom-kill" in report.first_error.text
    assert any(note in n for n in report.notes), report.notes
    assert not any("binary" in n for n in report.notes)


# ------------------------------------------------------------------ 6. cut compressed files


def test_a_cut_compressed_file_keeps_what_decompressed(tmp_path):
    log = OOM + _noise(20000)
    (tmp_path / "slurm-4242.out.gz").write_bytes(gzip.compress(log)[:3000])
    report = diagnose_bundle(str(tmp_path / "slurm-4242.out.gz"))  # nothing to diagnose before
    assert _ooms(report)
    assert report.first_error is not None and report.first_error.line == 1
    note = next(n for n in report.notes if "damaged" in n)
    assert "nothing readable" not in note and "before the damage is read" in note

    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as tf:
        for name, data in (("slurm-4242.out", OOM + _noise(5000)), ("other.log", _noise(5000))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (tmp_path / "ticket.tar.gz").write_bytes(bio.getvalue()[:20000])
    report = diagnose_bundle(str(tmp_path / "ticket.tar.gz"))
    assert _ooms(report)
    assert report.first_error is not None and report.first_error.file == "slurm-4242.out"
    assert any("slurm-4242.out: damaged" in n for n in report.notes), report.notes
