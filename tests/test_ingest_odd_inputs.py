"""What an operator may hand ``diagnose`` and ``scan-log``: a log padded with NULs by a node
crash, a UTF-16 log and a UTF-8 log that only starts with the UTF-16 mark, a device, a named
pipe nobody writes to, a folder where a file was meant, archives of a great many entries, a
config nested thousands deep. Each is read, or refused at once with one clear line."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from cockpit.errors import UserError
from cockpit.ingest import sources
from cockpit.ingest.bundle import diagnose_bundle
from cockpit.ingest.logfile import scan_path

OOM = (
    "slurmstepd: error: Detected 1 oom_kill event in StepId=12.batch. "
    "Some of the step tasks have been OOM Killed.\n"
)
LOG = "epoch 3 step 120 loss=0.41\n" + OOM


def _cockpit(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *args], capture_output=True, text=True, timeout=timeout
    )


def _top(path: Path) -> str:
    return diagnose_bundle(str(path)).to_json()["findings"][0]["root_cause"]


@pytest.mark.parametrize(
    "content",
    [
        (LOG + "\x00" * 8192).encode(),  # a crash left the rest of the block as NULs
        (LOG + "\x00" * 300 + "restarted\n").encode(),  # NULs between two writes
        b"\xff\xfe" + LOG.encode(),  # two stray bytes that look like a UTF-16 mark
        LOG.encode("utf-16"),  # a real UTF-16 log (PowerShell's >)
    ],
    ids=["nul-tail", "nul-middle", "fffe-then-utf8", "utf16"],
)
def test_odd_but_real_logs_are_read_and_their_oom_found(tmp_path, content):
    log = tmp_path / "slurm-12.out"
    log.write_bytes(content)
    assert _top(log) == "oom_killed"
    hit = scan_path(str(log))
    assert hit is not None and "oom_kill event" in hit.text and hit.line == 2


@pytest.mark.parametrize("cmd", ["diagnose", "scan-log"])
def test_a_device_is_refused_at_once(cmd):
    t0 = time.monotonic()
    res = _cockpit(cmd, "/dev/zero")
    assert time.monotonic() - t0 < 15
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "/dev/zero: a device, not a file" in res.stderr


@pytest.mark.parametrize("cmd", ["diagnose", "scan-log"])
def test_a_named_pipe_nobody_writes_to_does_not_hang(tmp_path, cmd):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    res = _cockpit(cmd, str(fifo))  # the old open() waited for a writer forever
    assert "Traceback" not in res.stderr
    assert "empty" in res.stderr or "no error line" in res.stdout


def test_a_pipe_with_a_writer_is_read(tmp_path):
    log = tmp_path / "x.log"
    log.write_text(LOG)
    res = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m cockpit scan-log <(cat "{log}")'],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert res.returncode == 0 and "oom_kill event" in res.stdout


def test_a_folder_given_to_scan_log_is_one_clear_line(tmp_path):
    res = _cockpit("scan-log", str(tmp_path))
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "a folder, not a file" in res.stderr


def _tar(path: Path, n: int, oom_at: int) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for i in range(n):
            data = LOG.encode() if i == oom_at else b""
            ti = tarfile.TarInfo(f"bundle/f{i:05d}.txt" if i != oom_at else "bundle/slurm-12.out")
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))


def test_a_tar_of_very_many_entries_reads_the_first_ones_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_MEMBERS", 100)
    arch = tmp_path / "bundle.tar.gz"
    _tar(arch, 500, oom_at=7)
    report = diagnose_bundle(str(arch)).to_json()
    assert report["findings"][0]["root_cause"] == "oom_killed"
    assert any("more than 100 entries" in n for n in report["notes"])


def test_a_zip_of_very_many_entries_is_refused_before_its_directory_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_MEMBERS", 100)
    arch = tmp_path / "bundle.zip"
    with zipfile.ZipFile(arch, "w") as zf:
        zf.writestr("slurm-12.out", LOG)
        for i in range(300):
            zf.writestr(f"f{i}.txt", b"")
    with pytest.raises(UserError, match="a zip of 301 entries, more than the 100"):
        diagnose_bundle(str(arch))


def test_a_config_nested_thousands_deep_is_a_config_error_not_a_traceback(tmp_path):
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    res = _cockpit("--config", str(cfg), "check-config")
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr[-500:]
    assert "nested too deeply" in res.stderr + res.stdout


@pytest.mark.parametrize("suffix", ["gz", "bz2", "xz"])
def test_scan_log_reads_a_rotated_compressed_log(tmp_path, suffix):
    """logrotate leaves slurmctld.log.1.gz and the like: scan-log reads through the compression
    (it said 'no error line found' of the gzip bytes)."""
    import bz2
    import gzip
    import lzma

    pack = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[suffix]
    f = tmp_path / f"slurm-12.out.1.{suffix}"
    f.write_bytes(pack(LOG.encode()))
    r = _cockpit("scan-log", str(f))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith(f"{f}:2: [oom_killed]"), r.stdout


def test_scan_log_keeps_what_came_before_a_cut_gzip(tmp_path):
    """A rotated log copied while written ends mid-stream: the lines before the cut are read."""
    import gzip

    data = gzip.compress((LOG + "x" * 50 + "\n").encode() + os.urandom(20000))
    f = tmp_path / "slurmd.log.1.gz"
    f.write_bytes(data[: len(data) // 2])
    r = _cockpit("scan-log", str(f))
    assert r.returncode == 0 and ":2: [oom_killed]" in r.stdout, r.stdout + r.stderr
    fine = "".join(f"step {i} loss={i * 0.37 % 1:.4f}\n" for i in range(5000)).encode()
    f.write_bytes(gzip.compress(fine)[:2000])
    r = _cockpit("scan-log", str(f))
    assert r.returncode == 1 and "gzip data cut short" in r.stdout, r.stdout + r.stderr


def test_scan_log_says_binary_data_is_not_a_log(tmp_path):
    """Random bytes give no error line; the operator is told the file is not text, with its
    size, instead of a bare 'no error line found' that reads as a clean log."""
    f = tmp_path / "core.1234"
    f.write_bytes(bytes(range(256)) * 400)
    r = _cockpit("scan-log", str(f))
    assert r.returncode == 1
    assert r.stdout.strip() == f"{f}: binary data, 100.0 KiB: no error line found", r.stdout


@pytest.mark.parametrize("suffix", ["gz", "bz2", "xz"])
def test_diagnose_reads_a_lone_compressed_log(tmp_path, suffix):
    """`cockpit diagnose slurm-12.out.xz`: a bzip2 or xz log was a TypeError traceback (their
    openers take the file first, not as fileobj=)."""
    import bz2
    import gzip
    import lzma

    pack = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[suffix]
    f = tmp_path / f"slurm-12.out.{suffix}"
    f.write_bytes(pack(LOG.encode()))
    assert _top(f) == "oom_killed"
    r = _cockpit("diagnose", str(f))
    assert "Traceback" not in r.stderr and "it ran out of memory" in r.stdout, r.stdout + r.stderr
