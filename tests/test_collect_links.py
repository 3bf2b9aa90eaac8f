"""`cockpit collect --out DIR` never writes through a link planted in DIR (or as DIR)."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime

import pytest

from cockpit.commands.collect import write_bundle
from cockpit.errors import UserError
from cockpit.model import Artifacts, LogText, Snapshot

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
ARTS = Artifacts(logs=(LogText("slurm-7.out", "stdout", b"Killed\n", path="/home/u/slurm-7.out"),))
SNAP = Snapshot("lab", "slurm", NOW)


def test_a_planted_link_is_replaced_not_written_through(tmp_path):
    victim = tmp_path / "passwd"
    victim.write_text("root:x:0:0\n")
    out = tmp_path / "ticket-9"
    out.mkdir()
    (out / "slurm-7.out").symlink_to(victim)
    written = write_bundle(str(out), "7", SNAP, ARTS)
    assert "slurm-7.out" in written
    assert victim.read_text() == "root:x:0:0\n"  # untouched
    made = out / "slurm-7.out"
    assert not made.is_symlink() and made.read_bytes() == b"Killed\n"
    assert stat.S_IMODE(made.stat().st_mode) == 0o600  # it quotes a user's job output


def test_out_itself_a_link_is_refused(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    link = tmp_path / "ticket-10"
    link.symlink_to(real)
    with pytest.raises(UserError, match="not a folder"):
        write_bundle(str(link), "7", SNAP, ARTS)
    assert os.listdir(real) == []


def test_out_with_a_trailing_slash_is_still_not_followed(tmp_path):
    real = tmp_path / "dot-ssh"
    real.mkdir()
    link = tmp_path / "ticket-42"
    link.symlink_to(real)
    with pytest.raises(UserError, match="not a folder"):
        write_bundle(f"{link}/", "7", SNAP, ARTS)
    assert os.listdir(real) == []


def test_a_jobs_output_name_never_takes_a_bundle_files_place(tmp_path):
    logs = (
        LogText("x", "stdout", b"forged\n", path="/home/ana/.squeue.txt"),
        LogText("y", "stderr", b"forged ctld\n", path="/home/ana/slurmctld.log"),
        LogText("z", "stdout", b"a\n", path="/home/ana/.."),
        LogText("w", "stdout", b"b\n", path="/home/ana/..."),
    )
    job_snap = Snapshot("lab", "slurm", NOW)
    written = write_bundle(str(tmp_path), "7", job_snap, Artifacts(logs=logs))
    assert len(written) == len(set(written)) == 4  # none lost, none twice
    assert "squeue.txt" not in written and "slurmctld.log" not in written
    assert all((tmp_path / n).exists() for n in written)
