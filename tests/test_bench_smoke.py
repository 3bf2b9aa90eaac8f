"""The benchmark harness cannot rot: the fake site parses cleanly through the real SlurmSource."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fake_slurm import NOW, count_calls, generate  # noqa: E402
from cockpit.slurm.source import SlurmSource  # noqa: E402
from cockpit.transport import LocalTransport  # noqa: E402


@pytest.fixture()
def fake_path(tmp_path, monkeypatch):
    site = generate(tmp_path / "site", jobs=1000, nodes=200, detail=50)
    monkeypatch.setenv("PATH", f"{site.bin}{os.pathsep}{os.environ['PATH']}")
    return site


async def test_fake_site_polls_without_warnings(fake_path):
    source = SlurmSource("fake", LocalTransport(), clock=lambda: NOW)
    snap = await source.poll()
    assert snap.error is None, snap.error
    assert snap.warnings == ()
    assert len(snap.jobs) == 1000 and len(snap.nodes) == 200
    states = {j.state for j in snap.jobs}
    assert {"PENDING", "RUNNING", "FAILED"} <= states
    assert any(n.is_drain for n in snap.nodes)
    # one poll: squeue, the node and partition tables, one backfill sacct (jobs that failed
    # since the last poll), and the at-risk sampler's one sstat and one `squeue -O` for the
    # running jobs it samples (within its budget, never one per job), with one `squeue -O
    # tres-alloc` for the memory they hold
    assert count_calls(fake_path) == {
        "squeue": 1,
        "scontrol show node": 1,
        "scontrol show partition": 1,
        "sacct": 1,
        "sstat": 1,
        "squeue -O": 1,
        "squeue -O tres-alloc": 1,
    }


async def test_fake_drill_down_answers_sacct_and_scontrol(fake_path):
    source = SlurmSource("fake", LocalTransport(), clock=lambda: NOW)
    job_id = fake_path.failed_ids[0]
    rows = await source.acct([job_id])
    assert rows and rows[0].job_id == job_id
    res = await LocalTransport().run(["scontrol", "show", "job", "-o", job_id])
    assert res.exit_status == 0 and f"JobId={job_id} " in res.stdout.decode()


async def test_fake_rejects_a_changed_squeue_format(fake_path):
    res = await LocalTransport().run(["squeue", "--noheader", "-o", "%i"])
    assert res.exit_status == 1 and b"unexpected arguments" in res.stderr


async def test_a_cockpit_on_screen_shows_its_first_queue_before_sampling_risks(fake_path):
    """Queue first: a poller's first poll (``show_queue_first``) runs no sstat and no stdout
    check (they took longer than parsing a 10k queue, and held the first rows back); the
    next poll samples the running jobs, and a one-shot command's single poll still does."""
    source = SlurmSource("fake", LocalTransport(), clock=lambda: NOW)
    source.show_queue_first()
    first = await source.poll()
    assert first.ok and len(first.jobs) == 1000
    calls = count_calls(fake_path)
    assert not {"sstat", "squeue -O", "squeue -O tres-alloc"} & set(calls), calls
    assert first.risk is None
    second = await source.poll()
    calls = count_calls(fake_path)
    assert calls["sstat"] == 1 and calls["squeue -O"] == 1, calls
    assert calls["squeue -O tres-alloc"] == 1, calls
    assert second.risk is not None
