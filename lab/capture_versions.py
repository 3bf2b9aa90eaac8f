"""Capture what each Slurm version prints for the same situations, as test fixtures.

Run as root with the labs up (``lab/slurm-up.sh``, ``lab/version-up.sh 24|26``)::

    python3 lab/capture_versions.py /tmp/slurmlab/env.sh /tmp/slurmv24/env.sh /tmp/slurmv26/env.sh

For each lab it submits the same jobs (running with a ``%x-%j.out`` output pattern, an array
with ``%A_%a``, a too-wide pending job, exit 127, TIMEOUT, over its memory, killed by
signal 9), drains a node with a long reason (not on the shared host lab: its drained
fixture exists), waits for the ends, then writes the outputs of the cockpit's commands, of
``--json`` and of slurmrestd to ``tests/fixtures/slurm-versions/<version>/``, and cleans up.
``jobs.json`` maps each situation to its job id (ids differ per lab).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cockpit.slurm.commands import (  # noqa: E402
    NODES_ARGV,
    PARTITIONS_ARGV,
    SQUEUE_ARGV,
    SQUEUE_STATES_ARGV,
    VERSION_ARGV,
    sacct_argv,
    scontrol_job_argv,
    squeue_argv,
)
from cockpit.slurm.versions import has_only_job_state  # noqa: E402

DRAIN_REASON = "cockpit capture: ECC errors on DIMM B2, replace before resume (ticket 4711)"
JOBS: dict[str, list[str]] = {
    "running": ["-p", "batch", "-w", "c3", "-J", "cap-run", "-o", "%x-%j.out",
                "--wrap", "echo started; sleep 600"],
    "array": ["-p", "debug", "-a", "1-2", "-J", "cap-arr", "-o", "%A_%a.out",
              "--wrap", "sleep 600"],
    "pending_partition": ["-p", "debug", "-c", "8", "-J", "cap-wide", "--wrap", "true"],
    "exit127": ["-p", "batch", "-J", "cap-127", "--wrap", "no-such-command-cockpit"],
    "signal9": ["-p", "batch", "-J", "cap-sig9", "--wrap", "kill -9 $$"],
    "exit137": ["-p", "batch", "-J", "cap-137", "--wrap", "exit 137"],
    "exit9": ["-p", "batch", "-J", "cap-9", "--wrap", "exit 9"],
    "timeout": ["-p", "tiny", "-t", "1", "-J", "cap-slow", "--wrap", "sleep 600"],
    "oom": ["-p", "batch", "-w", "c3", "--mem=100M", "-t", "2", "-J", "cap-mem",
            "--wrap", "echo allocating; perl -e '$x = \"x\" x (400*1024*1024); sleep 20'"],
}  # fmt: skip
ENDED = {"TIMEOUT", "FAILED", "OUT_OF_MEMORY", "COMPLETED", "CANCELLED"}


def env_of(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"\s*export\s+([A-Z_][A-Z0-9_]*)=(.*)$", line)
        if m:
            out[m.group(1)] = os.path.expandvars(m.group(2).strip().strip('"'))
    return {**os.environ, **out}


def run(env: dict[str, str], *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, check=check, timeout=60,
        cwd=env.get("SLURM_LAB_JOBS_DIR", "/"),
    )  # fmt: skip


def rest(env: dict[str, str], path: str) -> bytes:
    token = Path(env["SLURM_LAB_REST_TOKEN_FILE"]).read_text().strip()
    req = urllib.request.Request(
        env["SLURM_LAB_REST_URL"] + path, headers={"X-SLURM-USER-TOKEN": token}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.read()


def capture(env_file: str) -> None:
    env = env_of(env_file)
    version = run(env, "sinfo", "--version").stdout.split()[-1]
    short = ".".join(version.split(".")[:2])
    out = REPO / "tests" / "fixtures" / "slurm-versions" / short
    out.mkdir(parents=True, exist_ok=True)
    host_lab = "SLURM_LAB_BIN" not in env
    ids: dict[str, str] = {}
    rejected: dict[str, str] = {}
    for name, args in JOBS.items():
        res = run(env, "sbatch", "--parsable", "-D", env["SLURM_LAB_JOBS_DIR"], *args, check=False)
        if res.returncode:  # 24.11 refuses a job no node of the partition could ever run
            rejected[name] = res.stderr.strip()
        else:
            ids[name] = res.stdout.strip().split(";")[0]
    if not host_lab:
        run(env, "scontrol", "update", "NodeName=c2", "State=DRAIN", f"Reason={DRAIN_REASON}")
    try:
        deadline = time.monotonic() + 240
        waiting = {"timeout", "exit127", "signal9", "exit137", "exit9", "oom"} & set(ids)
        while waiting and time.monotonic() < deadline:
            for name in list(waiting):
                st = run(env, "squeue", "-h", "-t", "all", "-j", ids[name], "-o", "%T").stdout
                if st.strip() in ENDED:
                    waiting.discard(name)
            time.sleep(2)
        print(f"{short}: not ended in time: {sorted(waiting)}" if waiting else f"{short}: ended")
        write = lambda fname, text: (out / fname).write_text(text)  # noqa: E731
        write("version.txt", version + "\n")
        write("jobs.json", json.dumps(ids, indent=1) + "\n")
        write("rejected.json", json.dumps(rejected, indent=1) + "\n")
        write("squeue_o.txt", run(env, *SQUEUE_ARGV).stdout)
        write("scontrol_nodes.txt", run(env, *NODES_ARGV).stdout)
        write("scontrol_partitions.txt", run(env, *PARTITIONS_ARGV).stdout)
        write("squeue_json.txt", run(env, "squeue", "--json").stdout)
        write("sinfo_json.txt", run(env, "sinfo", "--json").stdout)
        for name in ("running", "array", "exit127", "timeout", "oom", "pending_partition"):
            if name not in ids:
                continue
            write(
                f"scontrol_job_{name}.txt",
                run(env, "scontrol", "show", "job", "-o", ids[name]).stdout,
            )
        sacct = run(env, "sacct", "-P", "-n", "-j", ids["exit127"], check=False)
        write("sacct_rc_stdout_stderr.txt", f"{sacct.returncode}\n{sacct.stdout}\n{sacct.stderr}")
        if short >= "26.05":
            write("squeue_sluid.txt", run(env, "squeue", "-h", "-t", "all", "-o", "%i|%s").stdout)
        # the release as the cockpit asks it, its own squeue format for it (%b, %s on 26.05)
        # and, 23.11+, what --only-job-state prints for the same queue
        release = run(env, *VERSION_ARGV).stdout
        write("scontrol_version.txt", release)
        write("squeue_o_v2.txt", run(env, *squeue_argv(release)).stdout)
        if has_only_job_state(release):
            write("squeue_only_job_state.txt", run(env, *SQUEUE_STATES_ARGV).stdout)
        # exit codes above 128 (sacct folds them before 25.11): needs accounting
        # (SLURMV_ACCOUNTING=1 version-up.sh); the rows once slurmdbd has the final state
        exits = {k: ids[k] for k in ("exit137", "signal9", "exit9") if k in ids}
        time.sleep(6)
        sacct = run(env, *sacct_argv(list(exits.values())), check=False)
        if sacct.returncode == 0 and exits:
            write("exit_jobs.json", json.dumps(exits) + "\n")
            write("sacct_exit_codes.txt", sacct.stdout)
            write(
                "scontrol_job_exit_codes.txt",
                "".join(run(env, *scontrol_job_argv(i)).stdout for i in exits.values()),
            )
        ctld = Path(env["SLURM_LAB_CTLD_LOG"]).read_text(errors="replace").splitlines()
        wanted = [f"JobId={i}" for i in ids.values()] + ["c2"]
        lines = [ln for ln in ctld if any(w in ln for w in wanted)]
        write("slurmctld_log.txt", "\n".join(lines[-400:]) + "\n")
        if "SLURM_LAB_REST_URL" in env:
            paths = json.loads(rest(env, "/openapi/v3"))["paths"]
            write("rest_openapi_paths.json", json.dumps(sorted(paths), indent=0) + "\n")
            newest = max(re.findall(r"/slurm/(v0\.0\.\d+)/", " ".join(paths)))
            for kind in ("jobs", "nodes", "partitions"):
                write(f"rest_{kind}.json", rest(env, f"/slurm/{newest}/{kind}").decode())
    finally:
        run(env, "scancel", *ids.values(), check=False)
        if not host_lab:
            run(env, "scontrol", "update", "NodeName=c2", "State=RESUME", check=False)
    print(f"{short}: wrote {out}")


if __name__ == "__main__":
    for f in sys.argv[1:]:
        capture(f)
