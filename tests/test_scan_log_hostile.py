"""``cockpit scan-log`` on inputs that are not a plain log: a compression it does not open,
binary data through a named pipe, ``--json`` on binary data. Exit status as grep's (2: the
input cannot be read), one line on stderr, never a bare 'no error line found' as if the
input were a clean log."""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
import threading

LOG = b"step 1 ok\nRuntimeError: CUDA error: out of memory\n"


def scan_log(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [sys.executable, "-m", "cockpit", "scan-log", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=env,
    )


def zstd_frame(text: bytes) -> bytes:
    """A zstd frame of one stored block, by RFC 8878 (zstd -dc gives ``text`` back): its
    bytes are the text, so a scanner that does not know zstd 'finds' lines in it."""
    header = bytes([0x20, len(text)])  # single segment, a 1-byte content size
    block = (1 | len(text) << 3).to_bytes(3, "little")  # last block, raw
    return b"\x28\xb5\x2f\xfd" + header + block + text


def lz4_frame(text: bytes) -> bytes:
    """An lz4 frame of one stored block (high bit of the block size: not compressed)."""
    return (
        b"\x04\x22\x4d\x18\x60\x40\x82"
        + (len(text) | 1 << 31).to_bytes(4, "little")
        + text
        + b"\x00\x00\x00\x00"
    )


def test_a_zstd_log_is_named_with_the_tool_that_reads_it(tmp_path):
    path = tmp_path / "slurmctld.log.1.zst"
    path.write_bytes(zstd_frame(LOG))
    done = scan_log(str(path))
    assert done.returncode == 2, done
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "zstd-compressed" in err and f"zstdcat {path} | cockpit scan-log -" in err


def test_an_lz4_log_on_standard_input_is_named_as_standard_input(tmp_path):
    done = scan_log("-", stdin=lz4_frame(LOG))
    assert done.returncode == 2, done
    err = done.stderr.decode()
    assert err.startswith("cockpit: cannot read (standard input): lz4-compressed"), err
    assert "cockpit-stdin-" not in err  # the private spool file is no name of the user's


def test_binary_data_through_a_named_pipe_says_so(tmp_path):
    data = gzip.compress(random.Random(5).randbytes(100_000))
    fifo = tmp_path / "rotated.gz"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    done = scan_log(str(fifo))
    writer.join(10)
    assert done.returncode == 1, done
    # it said a bare 'no error line found', as of a clean log (the note re-read files only)
    assert done.stdout.decode() == f"{fifo}: binary data, 97.7 KiB: no error line found\n"


def test_json_on_binary_data_says_so_on_stderr(tmp_path):
    path = tmp_path / "core.gz"
    path.write_bytes(gzip.compress(random.Random(6).randbytes(50_000)))
    done = scan_log("--json", str(path))
    assert done.returncode == 1
    assert done.stdout.decode().strip() == "null"  # the JSON's shape is the same
    assert done.stderr.decode().startswith(f"cockpit: {path}: binary data, "), done.stderr


def test_all_on_a_cut_gzip_lists_what_came_before_and_says_it_was_cut(tmp_path):
    log = b"".join(
        b"step %d loss 0.5 %s\n" % (i, random.Random(i).randbytes(8).hex().encode())
        for i in range(5000)
    )
    log = b"RuntimeError: CUDA error: out of memory\n" + log
    data = gzip.compress(log)
    path = tmp_path / "train.log.1.gz"
    path.write_bytes(data[: len(data) // 2])  # copied while logrotate was writing it
    done = scan_log("--all", str(path))
    assert done.returncode == 0
    assert done.stdout.decode().startswith(f"{path}:1: [gpu_out_of_memory]"), done.stdout
    # the list is of the lines before the damage, not the whole log: it said nothing
    assert done.stderr.decode().startswith(f"cockpit: {path}: gzip data cut short"), done.stderr


def test_an_xz_log_with_a_bad_check_keeps_its_last_lines(tmp_path):
    """The block's check is verified after its last piece was decoded, and a read that fails
    loses what it decoded: the log's last 4 KiB (where its error is) were lost, 'no error
    line found', where ``xz -dc`` prints them before it complains."""
    import lzma

    log = b"".join(b"line %d ok\n" % i for i in range(100_000)) + LOG
    data = bytearray(lzma.compress(log, check=lzma.CHECK_CRC64))
    data[-20] ^= 0x55  # in the stream's index, after the block
    path = tmp_path / "train.log.1.xz"
    path.write_bytes(bytes(data))
    done = scan_log(str(path))
    assert done.returncode == 0, done
    assert done.stdout.decode() == (
        f"{path}:100002: [gpu_out_of_memory] RuntimeError: CUDA error: out of memory\n"
    )
    assert done.stderr.decode().startswith(f"cockpit: {path}: xz data cut short"), done.stderr
