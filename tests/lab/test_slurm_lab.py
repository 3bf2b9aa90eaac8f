"""The Slurm source against the real Slurm 22.05 lab, over LocalTransport and SshTransport."""

from __future__ import annotations

import os
import signal

import pytest

from cockpit.model import Subject
from tests.conftest import await_for, make_lab_source

pytestmark = pytest.mark.lab


def _job(snap, job_id):
    return next((j for j in snap.jobs if j.job_id == job_id), None)


async def _poll_until(src, pred, timeout, what):
    async def check():
        snap = await src.poll()
        assert snap.error is None, snap.error
        return snap if pred(snap) else None

    return await await_for(check, timeout, what)


async def test_running_job_with_stdout(lab_env, lab_source):
    jid = lab_env.sbatch(
        "-p",
        "batch",
        "-J",
        "cockpit-run",
        "--wrap",
        "echo cockpit-started on $SLURMD_NODENAME; sleep 120",
    )
    try:
        snap = await _poll_until(
            lab_source, lambda s: (j := _job(s, jid)) and j.state == "RUNNING", 30, "RUNNING"
        )
        job = _job(snap, jid)
        assert job.name == "cockpit-run" and job.user == "root" and job.partition == "batch"
        assert job.nodes and job.nodes[0] in ("c3", "c4") and job.min_memory_mib == 100
        assert job.start_time is not None and job.start_time.tzinfo is not None

        async def stdout_has_line():
            lab_source._cache.clear()  # artifacts are cached until the next poll
            art = await lab_source.artifacts(Subject("job", lab_source.name, jid), snap)
            out = [log for log in art.logs if log.kind == "stdout"]
            return art if out and b"cockpit-started" in out[0].data else None

        art = await await_for(stdout_has_line, 20, "stdout of the running job")
        out = next(log for log in art.logs if log.kind == "stdout")
        assert (
            out.path == f"{lab_env.jobs_dir}/slurm-{jid}.out"
            and out.base_offset == 0
            and out.base_line == 1
        )
        ctld = next(log for log in art.logs if log.kind == "slurmctld")
        assert f"JobId={jid}".encode() in ctld.data and ctld.base_line is None
        assert any(
            log.kind == "slurmd" and b"Launching batch job " + jid.encode() in log.data
            for log in art.logs
        )
        assert any(r.job_id == jid for r in art.acct)
        names = [n for n, _ in lab_source.log_locations(Subject("job", lab_source.name, jid), snap)]
        assert names[0] == "stdout" and "slurmctld.log" in names
    finally:
        lab_env.scancel(jid)


async def test_pending_partition_config(lab_env, lab_source):
    jid = lab_env.sbatch("-p", "debug", "-c", "8", "-J", "cockpit-too-wide", "--wrap", "true")
    try:
        snap = await _poll_until(
            lab_source,
            lambda s: (j := _job(s, jid)) and j.reason == "PartitionConfig",
            30,
            "PartitionConfig",
        )
        job = _job(snap, jid)
        assert job.state == "PENDING" and job.cpus == 8 and job.nodes == ()
        debug = next(p for p in snap.partitions if p.name == "debug")
        assert debug.nodes == ("c1", "c2") and debug.max_time_s == 600
    finally:
        lab_env.scancel(jid)


async def test_out_of_memory(lab_env, lab_source):
    jid = lab_env.sbatch(
        "-p",
        "batch",
        "-w",
        "c3",
        "-t",
        "2",
        "--mem=100M",
        "-J",
        "cockpit-mem-hog",
        "--wrap",
        'echo allocating; perl -e \'$x = "x" x (400*1024*1024); sleep 5; print "survived\\n"\'',
    )
    final = {"OUT_OF_MEMORY", "FAILED", "CANCELLED", "COMPLETED"}
    snap = await _poll_until(
        lab_source, lambda s: (j := _job(s, jid)) and j.state in final, 60, "job end"
    )
    job = _job(snap, jid)
    expected = "OUT_OF_MEMORY" if lab_env.cgroup else "FAILED"
    assert job.state == expected
    if lab_env.cgroup:
        assert job.reason == "OutOfMemory"

    async def settled_acct():
        lab_source._cache.clear()
        art = await lab_source.artifacts(Subject("job", lab_source.name, jid), snap)
        rows = [r for r in art.acct if r.step == ""]
        return art if rows and not rows[0].placeholder else None

    art = await await_for(settled_acct, 30, "sacct row to settle")
    row = next(r for r in art.acct if r.step == "")
    assert row.state == expected and row.req_mem_mib == 100 and row.job_name == "cockpit-mem-hog"
    out = next(log for log in art.logs if log.kind == "stdout")
    assert b"allocating" in out.data and b"survived" not in out.data
    if lab_env.cgroup:
        assert b"oom-kill" in out.data and row.exit_code.signal == 125 or row.exit_code.code == 0


async def test_drained_node_full_reason(lab_env, lab_source):
    reason = "cockpit test: ECC errors on DIMM B2, replace before resume (ticket 4711)"
    lab_env.run("scontrol", "update", "NodeName=c2", "State=DRAIN", f"Reason={reason}")
    try:
        snap = await _poll_until(
            lab_source,
            lambda s: any(n.name == "c2" and n.is_drain and not n.is_down for n in s.nodes),
            15,
            "drain",
        )
        # (right after a RESUME the node is briefly idle* "not responding": poll past it)
        c2 = next(n for n in snap.nodes if n.name == "c2")
        assert c2.reason == reason and c2.reason_user == "root" and c2.reason_time is not None
        assert c2.state_label in ("IDLE+DRAIN", "MIXED+DRAIN", "ALLOCATED+DRAIN")
        art = await lab_source.artifacts(Subject("node", lab_source.name, "c2"), snap)
        assert any(log.kind == "slurmd" and log.path.endswith("slurmd-c2.log") for log in art.logs)
    finally:
        lab_env.run("scontrol", "update", "NodeName=c2", "State=RESUME", check=False)


async def test_controller_stopped_then_killed(lab_env):
    """SIGSTOP: polls time out; killed: 'Unable to contact slurm controller'. Never an exception."""
    sources = [make_lab_source(lab_env, "local", command_timeout=3)]
    if lab_env.ssh_key and os.path.exists(lab_env.ssh_key):
        sources.append(make_lab_source(lab_env, "ssh", command_timeout=3))
    pid = lab_env.ctld_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        for src in sources:
            snap = await src.poll()
            assert snap.error is not None and snap.error.kind in ("timeout", "unreachable"), (
                snap.error
            )
            assert snap.jobs == () and snap.nodes == ()
    finally:
        os.kill(pid, signal.SIGCONT)
        for src in sources:
            await src.close()
    os.kill(pid, signal.SIGTERM)
    # squeue retries for ~9 s before "Unable to contact slurm controller": allow it.
    sources = [make_lab_source(lab_env, "local", command_timeout=20)]
    if lab_env.ssh_key and os.path.exists(lab_env.ssh_key):
        sources.append(make_lab_source(lab_env, "ssh", command_timeout=20))
    try:
        for src in sources:

            async def down(src=src):
                snap = await src.poll()
                return snap if snap.error and snap.error.kind == "unreachable" else None

            snap = await await_for(down, 30, "controller to be unreachable")
            assert "Unable to contact slurm controller" in snap.error.message
    finally:
        lab_env.slurm_up()
        for src in sources:
            snap = await await_for(lambda src=src: _ok(src), 60, "controller back")
            assert snap.nodes
            await src.close()


async def _ok(src):
    snap = await src.poll()
    return snap if snap.ok and snap.nodes else None


@pytest.mark.slow
async def test_timeout_job(lab_env, ssh_lab_source, local_lab_source):
    jid = lab_env.sbatch("-p", "debug", "-t", "1", "-J", "cockpit-too-slow", "--wrap", "sleep 300")
    try:
        snap = await _poll_until(
            local_lab_source, lambda s: (j := _job(s, jid)) and j.state == "TIMEOUT", 150, "TIMEOUT"
        )
        assert _job(snap, jid).reason == "TimeLimit" and _job(snap, jid).time_limit_s == 60
        snap = await ssh_lab_source.poll()
        assert _job(snap, jid).state == "TIMEOUT"
    finally:
        lab_env.scancel(jid)
