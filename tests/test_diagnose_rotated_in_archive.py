"""``cockpit diagnose`` on a bundle archive that holds a rotated log compressed on its own
(``slurm-4242.out.1.gz`` inside ``bundle.tar.gz``, as logrotate leaves it and ``tar czf``
packs it): the error in it is found as it is in the same bundle given as a folder. It was
a note 'binary, not text, skipped' and 'nothing looks wrong', exit 0."""

from __future__ import annotations

import bz2
import gzip
import io
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

LOG = b"".join(b"step %d loss 0.5\n" % i for i in range(200))
LOG += b"RuntimeError: CUDA error: out of memory\n"


def diagnose(path) -> subprocess.CompletedProcess:
    env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.pop("COCKPIT_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "cockpit", "diagnose", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(
    "suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress)], ids=["gz", "bz2"]
)
def test_a_rotated_log_inside_a_tar_gz_bundle_is_read_through(tmp_path, suffix, compress):
    bundle = tmp_path / "bundle.tar.gz"
    with tarfile.open(bundle, "w:gz") as tf:
        add(tf, "slurm-4242.out", b"srun: job 4242 queued\n")
        add(tf, "slurm-4242.out.1" + suffix, compress(LOG))
    done = diagnose(bundle)
    assert "Traceback" not in done.stderr
    assert "first red error: slurm-4242.out.1:201: RuntimeError: CUDA error: out of memory" in (
        done.stdout
    ), done.stdout + done.stderr
    assert done.returncode == 1  # something to act on


def test_a_rotated_log_inside_a_zip_bundle_is_read_through(tmp_path):
    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("slurm-4242.out.1.gz", gzip.compress(LOG))
    done = diagnose(bundle)
    assert "slurm-4242.out.1:201" in done.stdout, done.stdout + done.stderr


def test_an_archive_inside_an_archive_is_named_not_called_binary(tmp_path):
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w:gz") as tf:
        add(tf, "slurm-1.out", LOG)
    bundle = tmp_path / "outer.tar"
    with tarfile.open(bundle, "w") as tf:
        add(tf, "logs.tar.gz", inner.getvalue())
        add(tf, "twice.log.gz.gz", gzip.compress(gzip.compress(LOG)))
    done = diagnose(bundle)
    assert "logs.tar.gz: a tar archive inside an archive, not read" in done.stderr, done.stderr
    assert "twice.log.gz: compressed twice, not read" in done.stderr, done.stderr
    assert "binary" not in done.stderr


def test_a_lone_xz_log_with_a_bad_check_keeps_its_last_lines(tmp_path):
    """As scan-log: the failing read at the xz stream's end lost the log's last ~4 KiB, its
    CUDA OOM line, and diagnose said 'nothing looks wrong', exit 0."""
    import lzma

    log = b"".join(b"line %d ok\n" % i for i in range(100_000)) + LOG
    data = bytearray(lzma.compress(log, check=lzma.CHECK_CRC64))
    data[-20] ^= 0x55
    path = tmp_path / "train.log.1.xz"
    path.write_bytes(bytes(data))
    done = diagnose(path)
    assert "first red error: train.log.1:100201: RuntimeError: CUDA error" in done.stdout, (
        done.stdout + done.stderr
    )
    assert done.returncode == 1
