"""Live: running jobs named at risk before they fail, by every head: one near its time limit
(the warning gives way to the TIMEOUT once it is killed), one holding ~280 MB under --mem=300M
(sstat), one silent after its first line (its stdout's mtime); a local webhook gets each
alert once, and the warnings resolve when the jobs end.

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.am_support import Webhook
from tests.conftest import LabEnv, wait_for

pytestmark = pytest.mark.lab


def _snapshot_verdict(lab_env: LabEnv, cfg: str, env: dict, jid: str) -> dict:
    res = subprocess.run(
        [sys.executable, "-m", "cockpit", "snapshot", "--json", "--config", cfg],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    verdicts = {v["subject"]["id"]: v for s in json.loads(res.stdout) for v in s["verdicts"]}
    return verdicts.get(jid, {})


def _verdict_of(lab_env: LabEnv, cfg: str, env: dict, jid: str, cause: str, what: str) -> dict:
    """The job's verdict once ``snapshot`` names ``cause`` for it (within 60 s)."""
    return wait_for(
        lambda: (
            v
            if (v := _snapshot_verdict(lab_env, cfg, env, jid)).get("root_cause") == cause
            else None
        ),
        60,
        what,
    )


def test_a_job_near_its_time_limit_is_at_risk_then_timed_out(lab_env, tmp_path):
    cfg = tmp_path / "lab.toml"
    cfg.write_text(
        '[clusters.lab]\ntransport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\nslurmd_log = "{lab_env.slurmd_log_pattern}"\n'
    )
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    jid = lab_env.sbatch("-p", "debug", "-t", "1", "-J", "h-near-limit", "--wrap", "sleep 600")
    try:
        lab_env.wait_state(jid, {"RUNNING"}, 60)
        # past 90 % of its minute, before Slurm's kill at 60 s or later
        time.sleep(54.5)
        at_risk = _snapshot_verdict(lab_env, str(cfg), env, jid)
        assert at_risk.get("root_cause") == "time_limit_near", at_risk
        assert "killed at" in at_risk["title"]
        lab_env.wait_state(jid, {"TIMEOUT"}, 150)
        wait_for(
            lambda: (
                _snapshot_verdict(lab_env, str(cfg), env, jid).get("root_cause") == "time_limit"
            ),
            60,
            "the TIMEOUT verdict",
        )
    finally:
        lab_env.scancel(jid)


INTERVAL = 5  # the config's floor: "within two polls" is then within ~10 s plus the polls


def _hook_alerts(hook: Webhook) -> list[dict]:
    return list(hook.bodies)  # the generic template posts one alert's JSON per request


def test_memory_near_and_silent_output_are_at_risk_alerted_once_and_resolve(lab_env, tmp_path):
    hook = Webhook()
    cfg = tmp_path / "lab.toml"
    cfg.write_text(
        f'[clusters.lab]\ntransport = "local"\ninterval = {INTERVAL}\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\nslurmd_log = "{lab_env.slurmd_log_pattern}"\n'
        # silent after 12 s in the test (30 min by default)
        "[risk]\nlog_silent_s = 12\n"
        f'[alerts.notify]\nwebhook = "{hook.url}"\n'
    )
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    out = open(tmp_path / "watch.out", "wb")  # noqa: SIM115 - closed below
    watch = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "watch", "--config", str(cfg), "--json"],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=env,
    )
    mem = quiet = ""
    try:
        mem = lab_env.sbatch(
            "-p", "debug", "-t", "5", "--mem=300M", "-J", "h-mem-near", "--wrap",
            'python3 -c "b=bytearray(280*2**20); import time; time.sleep(600)"',
        )  # fmt: skip
        quiet = lab_env.sbatch(
            "-p", "debug", "-t", "5", "--mem=100M", "-J", "h-silent", "--wrap",
            "echo started, now waiting; sleep 600",
        )  # fmt: skip
        lab_env.wait_state(mem, {"RUNNING"}, 60)
        lab_env.wait_state(quiet, {"RUNNING"}, 60)
        running_at = time.monotonic()

        def alert(rule: str, jid: str) -> dict | None:
            return next(
                (a for a in _hook_alerts(hook) if a["rule"] == rule and a["subject"]["id"] == jid),
                None,
            )

        # memory: named with its figures within two polls of running (plus their own time)
        got = wait_for(lambda: alert("memory_near", mem), 2 * INTERVAL + 20, "memory alert")
        assert time.monotonic() - running_at <= 2 * INTERVAL + 20
        assert got["severity"] in ("warning", "critical")
        assert "MaxRSS" in got["title"] and "--mem 300M" in got["title"], got["title"]
        assert got["finding"]["root_cause"] == "memory_near_request"
        assert "--mem=" in got["finding"]["remedy"]
        verdict = _snapshot_verdict(lab_env, str(cfg), env, mem)
        assert verdict.get("root_cause") == "memory_near_request", verdict
        pct = int(verdict["title"].rsplit("(", 1)[1].split(" %")[0])
        assert 90 <= pct <= 100, verdict["title"]

        # silent: past the 12 s threshold, with its one line
        got = wait_for(lambda: alert("output_silent", quiet), 12 + 3 * INTERVAL + 20, "silence")
        assert "started, now waiting" in got["title"], got["title"]
        verdict = _snapshot_verdict(lab_env, str(cfg), env, quiet)
        assert verdict.get("root_cause") == "job_output_silent", verdict

        # the jobs end: their warnings resolve in every head
        lab_env.scancel(mem, quiet)
        for jid in (mem, quiet):
            wait_for(
                lambda jid=jid: (
                    _snapshot_verdict(lab_env, str(cfg), env, jid).get("root_cause")
                    not in ("memory_near_request", "job_output_silent")
                ),
                60,
                f"job {jid}'s warning to resolve",
            )
        time.sleep(2 * INTERVAL)  # more polls: nothing fires again
        fired = Counter(
            (a["rule"], a["subject"]["id"])
            for a in _hook_alerts(hook)
            if a["subject"]["id"] in (mem, quiet) and a["rule"] in ("memory_near", "output_silent")
        )
        assert fired == {("memory_near", mem): 1, ("output_silent", quiet): 1}, fired
    finally:
        lab_env.scancel(*(j for j in (mem, quiet) if j))
        watch.terminate()
        try:
            watch.wait(20)
        except subprocess.TimeoutExpired:
            watch.kill()
        out.close()
        hook.close()


def test_mem_per_cpu_request_is_the_memory_the_job_holds(lab_env, tmp_path):
    """squeue's MIN_MEMORY prints --mem-per-cpu's figure without saying it is per CPU: a job
    of 2 CPUs at 200M each holds 400M, so 280 MB resident is 70 %, not "past its request"."""
    cfg = tmp_path / "lab.toml"
    cfg.write_text('[clusters.lab]\ntransport = "local"\n')
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    hold = 'python3 -c "b=bytearray(280*2**20); import time; time.sleep(600)"'
    roomy = tight = ""
    try:
        roomy = lab_env.sbatch(
            "-p", "debug", "-t", "5", "-c", "2", "--mem-per-cpu=200M", "-J", "h-mpc-roomy",
            "--wrap", hold,
        )  # fmt: skip
        tight = lab_env.sbatch(
            "-p", "debug", "-t", "5", "-c", "2", "--mem-per-cpu=150M", "-J", "h-mpc-tight",
            "--wrap", hold,
        )  # fmt: skip
        lab_env.wait_state(roomy, {"RUNNING"}, 60)
        lab_env.wait_state(tight, {"RUNNING"}, 60)
        verdict = _verdict_of(
            lab_env, str(cfg), env, tight, "memory_near_request", "the tight job named at risk"
        )
        # 280 MB of the 300M it holds on its node: the figure it holds, named per CPU
        assert "300M per node" in verdict["title"], verdict["title"]
        assert "--mem-per-cpu 150M" in verdict["title"], verdict["title"]
        pct = int(verdict["title"].rsplit("(", 1)[1].split(" %")[0])
        assert 85 <= pct <= 100, verdict["title"]
        # the same resident size under 400M is not near it (~70 %, memory_near is 90 %)
        roomy_verdict = _snapshot_verdict(lab_env, str(cfg), env, roomy)
        assert roomy_verdict.get("root_cause") != "memory_near_request", roomy_verdict
    finally:
        lab_env.scancel(*(j for j in (roomy, tight) if j))


def test_an_array_task_is_measured_against_what_it_holds(lab_env, tmp_path):
    """sstat and squeue's JobID name an array task by its own job id, the queue by 28_0: the
    tight task of `-a 0-1 -c 2 --mem-per-cpu=110M` holding 200 MB is named at risk against
    the 220M it holds, not left unmeasured."""
    cfg = tmp_path / "lab.toml"
    cfg.write_text('[clusters.lab]\ntransport = "local"\n')
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    hold = 'python3 -c "b=bytearray(200*2**20); import time; time.sleep(600)"'
    arr = ""
    try:
        arr = lab_env.sbatch(
            "-p", "debug", "-t", "5", "-a", "0-1", "-c", "2", "--mem-per-cpu=110M",
            "-J", "h-array-mpc", "--wrap", hold,
        )  # fmt: skip
        task = f"{arr}_0"
        lab_env.wait_state(task, {"RUNNING"}, 60)
        verdict = _verdict_of(
            lab_env, str(cfg), env, task, "memory_near_request", "the array task named at risk"
        )
        assert "220M per node" in verdict["title"], verdict["title"]
        assert "--mem-per-cpu 110M" in verdict["title"], verdict["title"]
    finally:
        if arr:
            lab_env.scancel(arr)


def test_an_array_task_whose_output_stopped_is_silent(lab_env, tmp_path):
    """squeue's JobID names an array task by its own id: its StdOut (``%A_%a``) must still be
    found for 28_0, or a stalled array task is never named silent."""
    cfg = tmp_path / "lab.toml"
    cfg.write_text('[clusters.lab]\ntransport = "local"\n[risk]\nlog_silent_s = 6\n')
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    arr = ""
    try:
        arr = lab_env.sbatch(
            "-p", "debug", "-t", "5", "-a", "0-1", "-J", "h-array-silent",
            "-o", f"{lab_env.jobs_dir}/h-array-silent-%A_%a.out",
            "--wrap", "echo loading shards; sleep 600",
        )  # fmt: skip
        task = f"{arr}_0"
        lab_env.wait_state(task, {"RUNNING"}, 60)
        verdict = _verdict_of(
            lab_env, str(cfg), env, task, "job_output_silent", "the array task named silent"
        )
        assert "loading shards" in verdict["title"], verdict["title"]
    finally:
        if arr:
            lab_env.scancel(arr)
