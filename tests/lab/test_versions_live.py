"""The foundation situations on every Slurm version the labs run (22.05 host lab; 24.11 and 26.05
roots of lab/version-up.sh), through the local transport, SSH and slurmrestd.

Each test takes ``slurm_version`` (tests/lab/conftest.py): a version whose lab is not up is
skipped with the reason. Versions differ where Slurm differs, and the assertions say so:
without cgroups (the 24.11/26.05 roots) a memory overrun is FAILED/RaisedSignal:9 instead of
OUT_OF_MEMORY; 24.11 refuses a too-wide job at sbatch; the roots have no accounting.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cockpit.model import ExitCode, Subject
from tests.conftest import await_for
from tests.lab.conftest import VersionLab, make_version_source

pytestmark = pytest.mark.lab

LONG_REASON = "cockpit version test: ECC errors on DIMM B2, replace before resume (ticket 4711)"


def _accounting(lab) -> bool:
    """Whether the lab runs slurmdbd (the host lab does; a root with SLURMV_ACCOUNTING=1)."""
    return lab.env.get("SLURM_LAB_ACCOUNTING", "1" if lab.host_lab else "0") == "1"


def _job(snap, job_id):
    return next((j for j in snap.jobs if j.job_id == job_id), None)


async def _poll_until(src, pred, timeout, what):
    async def check():
        snap = await src.poll()
        assert snap.error is None, snap.error
        return snap if pred(snap) else None

    return await await_for(check, timeout, what)


@pytest.fixture(params=["local", "ssh", "rest"])
async def version_source(request, slurm_version: VersionLab):
    """Each version's cluster over each transport (rest: 24.11+ only)."""
    if request.param == "rest" and slurm_version.host_lab:
        pytest.skip("the 22.05 host lab runs no slurmrestd (Debian 12 has no JWT plugin)")
    src = make_version_source(slurm_version, request.param)
    yield src
    await src.close()


async def test_running_job(slurm_version, version_source):
    lab = slurm_version
    jid = lab.sbatch("-p", "batch", "-J", "cockpit-v-run", "--wrap", "echo v-started; sleep 120")
    try:
        snap = await _poll_until(
            version_source, lambda s: (j := _job(s, jid)) and j.state == "RUNNING", 30, "RUNNING"
        )
        job = _job(snap, jid)
        assert (job.name, job.user, job.partition) == ("cockpit-v-run", "root", "batch")
        assert job.nodes and job.nodes[0] in ("c3", "c4") and job.min_memory_mib == 100
        assert snap.slurm_version == lab.release
        if lab.series >= "26.05":  # from squeue's %s, or the JSON's sluid
            assert job.sluid.startswith("s") and len(job.sluid) == 14
        if "rest" in version_source.name:
            art = await version_source.artifacts(Subject("job", version_source.name, jid), snap)
            assert "no log files" in art.commands["error: logs"]
            return

        async def stdout_has_line():
            version_source._cache.clear()
            art = await version_source.artifacts(Subject("job", version_source.name, jid), snap)
            out = [log for log in art.logs if log.kind == "stdout"]
            return art if out and b"v-started" in out[0].data else None

        art = await await_for(stdout_has_line, 20, "stdout of the running job")
        assert next(lg for lg in art.logs if lg.kind == "stdout").path == (
            f"{lab.jobs_dir}/slurm-{jid}.out"
        )
        ctld = next(lg for lg in art.logs if lg.kind == "slurmctld")
        assert f"JobId={jid}".encode() in ctld.data
        if lab.series >= "26.05":
            assert b"SLUID=" in ctld.data
    finally:
        lab.scancel(jid)


async def test_pending_partition_config(slurm_version, version_source):
    lab = slurm_version
    res = lab.run(
        "sbatch", "--parsable", "-D", lab.jobs_dir, "-p", "debug", "-c", "8",
        "-J", "cockpit-v-wide", "--wrap", "true", check=False,
    )  # fmt: skip
    if lab.series == "24.11":
        # 24.11 refuses at submission what 22.05/26.05 keep pending, and records it FAILED
        assert res.returncode != 0 and "Requested node configuration is not available" in (
            res.stderr
        )
        snap = await _poll_until(
            version_source,
            lambda s: any(j.name == "cockpit-v-wide" for j in s.jobs),
            20,
            "the refused job's record",
        )
        refused = [j for j in snap.jobs if j.name == "cockpit-v-wide"]
        if _accounting(lab):  # older runs' records come back from sacct (the backfill)
            queued = set(lab.run("squeue", "-h", "-t", "all", "-o", "%i").stdout.split())
            refused = [j for j in refused if j.job_id in queued]
        assert all((j.state, j.reason) == ("FAILED", "BadConstraints") for j in refused)
        return
    jid = res.stdout.strip().split(";")[0]
    try:
        snap = await _poll_until(
            version_source,
            lambda s: (j := _job(s, jid)) and j.reason == "PartitionConfig",
            30,
            "PartitionConfig",
        )
        job = _job(snap, jid)
        assert job.state == "PENDING" and job.cpus == 8 and job.nodes == ()
        debug = next(p for p in snap.partitions if p.name == "debug")
        assert debug.nodes == ("c1", "c2") and debug.max_time_s == 600
    finally:
        lab.scancel(jid)


async def test_memory_overrun(slurm_version, version_source):
    lab = slurm_version
    jid = lab.sbatch(
        "-p", "batch", "-w", "c3", "-t", "2", "--mem=100M", "-J", "cockpit-v-mem",
        "--wrap", "echo allocating; perl -e '$x = \"x\" x (400*1024*1024); sleep 20'",
    )  # fmt: skip
    final = {"OUT_OF_MEMORY", "FAILED", "CANCELLED", "COMPLETED"}
    snap = await _poll_until(
        version_source, lambda s: (j := _job(s, jid)) and j.state in final, 60, "job end"
    )
    job = _job(snap, jid)
    if lab.cgroup:
        assert (job.state, job.reason) == ("OUT_OF_MEMORY", "OutOfMemory")
    else:
        # no cgroups in the version roots: jobacct_gather's OverMemoryKill kills it (honestly
        # not an OOM-killer event, so not OUT_OF_MEMORY)
        assert (job.state, job.reason) == ("FAILED", "RaisedSignal:9(Killed)")


async def test_exit_127(slurm_version, version_source):
    lab = slurm_version
    jid = lab.sbatch("-p", "batch", "-J", "cockpit-v-127", "--wrap", "no_such_program_xyz")
    snap = await _poll_until(
        version_source, lambda s: (j := _job(s, jid)) and j.state == "FAILED", 30, "FAILED"
    )
    job = _job(snap, jid)
    assert job.reason == "NonZeroExitCode"
    if "rest" in version_source.name:
        assert job.exit_code == ExitCode(127, 0)
        return
    art = await version_source.artifacts(Subject("job", version_source.name, jid), snap)
    assert b"no_such_program_xyz" in next(lg for lg in art.logs if lg.kind == "stdout").data
    if not _accounting(lab):
        # no accounting in the roots: sacct says so in one line, the rest of the evidence is there
        assert not art.acct
        said = [v for k, v in art.commands.items() if k.startswith("error: sacct")]
        assert said and "accounting storage is disabled" in said[0] and "\n" not in said[0]


@pytest.mark.slow
async def test_timeout(slurm_version):
    """One job past its 1-minute limit, seen TIMEOUT through every transport the version has
    (a minute and more per version: not repeated per transport)."""
    lab = slurm_version
    transports = ["local", "ssh"] + ([] if lab.host_lab else ["rest"])
    sources = [make_version_source(lab, t) for t in transports]
    jid = lab.sbatch("-p", "debug", "-t", "1", "-J", "cockpit-v-slow", "--wrap", "sleep 300")
    try:
        for src in sources:
            snap = await _poll_until(
                src, lambda s: (j := _job(s, jid)) and j.state == "TIMEOUT", 150, "TIMEOUT"
            )
            job = _job(snap, jid)
            assert (job.reason, job.time_limit_s) == ("TimeLimit", 60), src.name
    finally:
        lab.scancel(jid)
        for src in sources:
            await src.close()


async def test_drained_node_long_reason(slurm_version, version_source):
    lab = slurm_version
    lab.run("scontrol", "update", "NodeName=c2", "State=DRAIN", f"Reason={LONG_REASON}")
    try:
        snap = await _poll_until(
            version_source,
            lambda s: any(n.name == "c2" and n.is_drain and not n.is_down for n in s.nodes),
            20,
            "drain",
        )
        c2 = next(n for n in snap.nodes if n.name == "c2")
        assert (c2.reason, c2.reason_user) == (LONG_REASON, "root") and c2.reason_time
        assert c2.state_label in ("IDLE+DRAIN", "MIXED+DRAIN", "ALLOCATED+DRAIN")
    finally:
        lab.run("scontrol", "update", "NodeName=c2", "State=RESUME", check=False)


async def test_controller_stopped(slurm_version):
    """The version's own slurmctld (by its pid file) killed: every transport says the
    controller is unreachable, never an exception; restarted, they answer again."""
    lab = slurm_version
    if lab.host_lab:
        pytest.skip("22.05: tests/lab/test_slurm_lab.py::test_controller_stopped_then_killed")
    sources = [make_version_source(lab, t, **({} if t == "rest" else {"command_timeout": 25}))
               for t in ("local", "ssh", "rest")]  # fmt: skip
    os.kill(lab.ctld_pid(), signal.SIGTERM)
    seen: dict[str, str] = {}

    async def down(src):
        # each answer takes slurm's MessageTimeout (10 s here) of connect retries, and a
        # slurmctld still shutting down may first time out instead: the three transports are
        # waited for side by side, each with room for several such answers
        async def unreachable():
            snap = await src.poll()
            seen[src.name] = repr(snap.error) if snap.error else f"ok, {len(snap.jobs)} jobs"
            return snap if snap.error and snap.error.kind == "unreachable" else None

        try:
            return await await_for(unreachable, 90, f"{src.name}: controller unreachable")
        except pytest.fail.Exception:
            pytest.fail(f"{src.name} never said unreachable; its last answer: {seen[src.name]}")

    try:
        for snap in await asyncio.gather(*(down(src) for src in sources)):
            assert "Unable to contact slurm controller" in snap.error.message, snap.error
            assert snap.jobs == () and snap.nodes == ()
    finally:
        lab.slurm_up()
        for src in sources:

            async def back(src=src):
                snap = await src.poll()
                return snap if snap.ok and snap.nodes else None

            await await_for(back, 60, f"{src.name}: controller back")
            await src.close()


def _snapshot_json(lab: VersionLab, config: str, cluster: str) -> dict:
    res = subprocess.run(
        [sys.executable, "-m", "cockpit", "snapshot", "--config", config, "--cluster", cluster,
         "--json"],
        capture_output=True, text=True, timeout=120, env={**os.environ, **lab.env},
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    (snap,) = json.loads(res.stdout)
    assert snap["error"] is None, snap["error"]
    return snap


def test_snapshot_json_same_over_rest_and_local(slurm_version, tmp_path):
    """``cockpit snapshot --json`` through slurmrestd gives the jobs, nodes and reasons the
    local transport (squeue/scontrol) gives."""
    lab = slurm_version
    if lab.host_lab:
        pytest.skip("the 22.05 host lab runs no slurmrestd")
    pend = lab.sbatch("-p", "batch", "-w", "c4", "-c", "1", "-J", "cockpit-v-hold", "-H",
                      "--wrap", "true")  # fmt: skip
    lab.run("scontrol", "update", "NodeName=c2", "State=DRAIN", f"Reason={LONG_REASON}")
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(
        f'[clusters.rest]\ntransport = "rest"\nurl = "{lab.rest_url}"\n'
        f'token_file = "{lab.rest_token_file}"\n\n[clusters.local]\ntransport = "local"\n'
    )
    try:
        for _ in range(3):  # a job may end between the two snapshots: compare again
            local = _snapshot_json(lab, str(cfg), "local")
            rest = _snapshot_json(lab, str(cfg), "rest")
            jkeys = ("job_id", "state", "reason", "partition", "name", "user", "nodes", "cpus",
                     "time_limit_s", "min_memory_mib")  # fmt: skip
            jobs = [{j["job_id"]: tuple(j[k] for k in jkeys) for j in s["jobs"]}
                    for s in (local, rest)]  # fmt: skip
            if _accounting(lab):  # local also lists failed jobs only sacct still knows
                queued = set(lab.run("squeue", "-h", "-t", "all", "-o", "%i").stdout.split())
                jobs[0] = {k: v for k, v in jobs[0].items() if k in queued or k in jobs[1]}
            nkeys = ("name", "state", "flags", "reason", "reason_user", "partitions", "cpus_total")
            nodes = [{n["name"]: tuple(map(str, (n[k] for k in nkeys))) for n in s["nodes"]}
                     for s in (local, rest)]  # fmt: skip
            if jobs[0] == jobs[1] and nodes[0] == nodes[1]:
                break
            time.sleep(2)
        assert jobs[0] == jobs[1]
        assert jobs[1][pend][1:3] == ("PENDING", "JobHeldUser")
        assert nodes[0] == nodes[1] and LONG_REASON in nodes[1]["c2"][3]
        assert local["slurm_version"] == rest["slurm_version"] == lab.release
    finally:
        lab.scancel(pend)
        lab.run("scontrol", "update", "NodeName=c2", "State=RESUME", check=False)


async def test_exit_137_and_sigkill_get_the_same_verdict(slurm_version):
    """``exit 137`` and ``kill -9 $$``: sacct before 25.11 prints the first as 9:0, from 25.11
    as 137:0; the verdict is the same on every version (cockpit.slurm.versions)."""
    from cockpit.diagnosis.engine import diagnose

    lab = slurm_version
    if not _accounting(lab):
        pytest.skip(f"Slurm {lab.series} lab runs no slurmdbd (SLURMV_ACCOUNTING=1 version-up.sh)")
    src = make_version_source(lab, "local")
    ids = {
        "exit137": lab.sbatch("-p", "batch", "-J", "cockpit-v-137", "--wrap", "exit 137"),
        "signal9": lab.sbatch("-p", "batch", "-J", "cockpit-v-sig9", "--wrap", "kill -9 $$"),
    }
    try:
        snap = await _poll_until(
            src,
            lambda s: all((j := _job(s, i)) and j.state == "FAILED" for i in ids.values()),
            40,
            "both FAILED",
        )
        titles = {}
        for name, jid in ids.items():
            subject = Subject("job", src.name, jid)

            async def settled(subject=subject):
                src._cache.clear()  # slurmdbd records the end a moment after squeue shows it
                art = await src.artifacts(subject, snap)
                row = next((r for r in art.acct if not r.step and not r.placeholder), None)
                return art if row is not None and row.state == "FAILED" else None

            art = await await_for(settled, 40, f"sacct's final row of {name}")
            titles[name] = diagnose(snap, art, snap.taken_at, focus=subject)[0].title
        assert titles["exit137"].startswith("exit 137 (SIGKILL)"), titles
        assert titles["signal9"].startswith("SIGKILL (signal 9)"), titles
    finally:
        await src.close()


@pytest.mark.parametrize("transport", ["local", "ssh"])
async def test_an_unchanged_queue_costs_the_controller_little(slurm_version, transport):
    """23.11+: a poll where no job changed state asks ``squeue --only-job-state`` only;
    before 23.11 every poll reads the queue in full."""
    lab = slurm_version
    src = make_version_source(lab, transport)
    jid = lab.sbatch("-p", "batch", "-J", "cockpit-v-still", "--wrap", "sleep 120")
    try:
        snap = await _poll_until(
            src, lambda s: (j := _job(s, jid)) and j.state == "RUNNING", 30, "RUNNING"
        )
        start = _job(snap, jid).elapsed_s
        before = dict(src.command_counts)
        polls = 4
        for _ in range(polls):
            time.sleep(1.1)
            snap = await src.poll()
            assert snap.error is None, snap.error
        full = src.command_counts["squeue"] - before.get("squeue", 0)
        cheap = src.command_counts["squeue --only-job-state"] - before.get(
            "squeue --only-job-state", 0
        )
        assert src.command_counts["scontrol --version"] == 1  # once per connection
        if lab.series >= "23.11":
            # another job of the lab ending meanwhile may cost one full read, not every poll
            assert cheap == polls and full <= 1, (cheap, full)
        else:
            assert (cheap, full) == (0, polls)
        # the running job's TIME still moves: carried on by the clock from the last read
        assert _job(snap, jid).elapsed_by(snap.taken_at) >= start + 4
    finally:
        lab.scancel(jid)
        await src.close()


async def test_the_daemons_logs_are_where_the_clusters_slurm_conf_says(slurm_version):
    """No slurmctld_log or slurmd_log in the config: the cluster's own SlurmctldLogFile and
    SlurmdLogFile (``scontrol show config``), not the packaged /var/log/slurm defaults (a
    site's slurmd-%n.log was never read, and every job's evidence said 'No such file')."""
    from cockpit.slurm.source import SlurmSource

    lab = slurm_version
    configured = make_version_source(lab, "local")
    src = SlurmSource("auto", configured.transport, interval=5)
    try:
        await src.resolve_log_paths()
        assert src.slurmctld_log == lab.ctld_log
        assert src.slurmd_log == lab.slurmd_log_pattern and "%n" in src.slurmd_log
    finally:
        await src.close()
