"""ModelArts at scale: requests and seconds per poll at 1k and 10k training jobs.

The real ``ModelArtsSource`` and ``SdkModelArtsApi`` (the Huawei SDK over HTTP) against the
tests' local v2 API server (``tests/modelarts_server.py``), which counts the requests it
answers. The project: 100 active jobs (10 trainings running since 20 days, 45 recent running,
30 queued, 15 booting with a startup log), the rest Completed or Failed 1 to 19 days ago
(``big_project``). Per size: the first poll, a poll 30 s later where nothing changed, the
steady state over 20 polls 30 s apart (waiting jobs' events and logs read again, spread), and
a poll after one job ended; and the Running jobs' log previews read for silent logs (at most
``running_log_reads`` a poll, 5 by default) with how many polls a round over every Running job
takes (``--running N`` adds N more Running jobs). The reference is the source as it was
before it listed by phase and kept what it read (``--before REV``, default ``cda9e80``), loaded
from git and run against the same server: it lists the 500 newest jobs and reads every waiting
or recently failed one again each poll.

    python3 bench/bench_modelarts.py [--jobs 1000,10000] [--running 0,1000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from modelarts_server import (  # noqa: E402
    AK,
    NOW,
    PROJECT_ID,
    SK,
    ModelArtsServer,
    big_project,
    job_json,
)

from cockpit.modelarts.api import SdkModelArtsApi, SdkSettings  # noqa: E402

BEFORE = "cda9e80"  # the last commit whose source listed max_jobs newest and re-read each poll
ACTIVE = {"Creating", "Pending", "Running", "Terminating"}


def _source_class(rev: str | None):
    if rev is None:
        from cockpit.modelarts.source import ModelArtsSource

        return ModelArtsSource
    text = subprocess.run(
        ["git", "show", f"{rev}:cockpit/modelarts/source.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "source_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("source_before", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ModelArtsSource


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):
        return self.now


def add_running(fx: dict, extra: int) -> set[str]:
    """``extra`` more Running jobs (started 1-2 days ago), and a log for every Running job: the
    ids of all of them."""
    for i in range(extra):
        jid = f"d0000000-0000-4000-8000-{i:012d}"
        fx["jobs"][jid] = job_json(
            jid, f"run-{i}", "Running", "Running", created_min_ago=1500 + i, started_min_ago=1490
        )
    running = {j for j, job in fx["jobs"].items() if job["status"]["phase"] == "Running"}
    for n, jid in enumerate(sorted(running)):
        fx["logs"][jid] = f"epoch 1 step {n} loss=2.0\n"
    return running


async def measure(jobs: int, rev: str | None, extra_running: int = 0) -> dict:
    fx = big_project(jobs=jobs)
    running = add_running(fx, extra_running)
    srv = ModelArtsServer(fx).start()
    clock = Clock()
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(3, 30))
    )
    src = _source_class(rev)("bench", api, clock=clock)
    want = {j for j, job in srv.fx["jobs"].items() if job["status"]["phase"] in ACTIVE}
    log_reads: list[int] = []  # per poll: Running jobs' log previews read
    read: set[str] = set()
    round_polls: int | None = None  # polls until every Running job's log was read once

    async def poll() -> tuple[int, float, set[str]]:
        nonlocal round_polls
        before = len(srv.requests)
        t = time.perf_counter()
        snap = await src.poll()
        took = time.perf_counter() - t
        assert snap.ok, snap.error
        logs = [p.split("/")[4] for _m, p in srv.requests[before:] if "/logs/" in p]
        logs = [j for j in logs if j in running]
        log_reads.append(len(logs))
        read.update(logs)
        if round_polls is None and read >= running:
            round_polls = len(log_reads)
        return len(srv.requests) - before, took, {j.job_id for j in snap.training_jobs}

    try:
        first_n, first_s, seen = await poll()
        clock.now += timedelta(seconds=30)
        same_n, same_s, _ = await poll()
        steady = []
        for _ in range(20):
            clock.now += timedelta(seconds=30)
            steady.append(await poll())
        # one booting job dies: it leaves the active listing and is read once
        jid = next(
            j for j, job in srv.fx["jobs"].items() if job["metadata"]["name"] == "booting-85"
        )
        status = srv.fx["jobs"][jid]["status"]
        status["phase"] = status["secondary_phase"] = "Failed"
        clock.now += timedelta(seconds=30)
        changed_n, changed_s, _ = await poll()
    finally:
        await src.close()
        srv.stop()
    return {
        "jobs": jobs,
        "running": len(running),
        "log_reads_max": max(log_reads),
        "round_polls": round_polls,
        "active": len(want),
        "active_seen": len(want & seen),
        "first": {"requests": first_n, "s": round(first_s, 3)},
        "unchanged": {"requests": same_n, "s": round(same_s, 3)},
        "steady_mean": {
            "requests": round(sum(n for n, _, _ in steady) / len(steady), 1),
            "s": round(sum(s for _, s, _ in steady) / len(steady), 3),
        },
        "steady_max_requests": max(n for n, _, _ in steady),
        "one_ended": {"requests": changed_n, "s": round(changed_s, 3)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="1000,10000")
    ap.add_argument(
        "--running", default="0", help="more Running jobs than the 55 (comma list: one run each)"
    )
    ap.add_argument("--before", default=BEFORE, help="git revision of the reference source")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        os.environ.pop(var, None)
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    out = []
    for n in (int(x) for x in args.jobs.split(",")):
        for extra in (int(x) for x in args.running.split(",")):
            now = asyncio.run(measure(n, None, extra))
            ref = asyncio.run(measure(n, args.before, extra)) if args.before else None
            out.append({"now": now, "before": ref})
    if args.json:
        print(json.dumps(out))
        return
    print("| jobs | poll | requests | seconds | before: requests | before: seconds |")
    print("|---:|---|---:|---:|---:|---:|")
    for row in out:
        now, ref = row["now"], row["before"] or {}
        n = f"{now['jobs']:,} ({now['running']:,} running)"
        for key, label in (
            ("first", "first"),
            ("unchanged", "nothing changed"),
            ("steady_mean", "steady, mean of 20 (30 s apart)"),
            ("one_ended", "one job ended"),
        ):
            r = ref.get(key, {})
            print(
                f"| {n} | {label} | {now[key]['requests']} | {now[key]['s']:.3f} | "
                f"{r.get('requests', '-')} | {r.get('s', '-')} |"
            )
        print(
            f"| {n} | steady, most requests in one poll | {now['steady_max_requests']} | | "
            f"{ref.get('steady_max_requests', '-')} | |"
        )
        print(
            f"| {n} | Running jobs' log previews, most in one poll | {now['log_reads_max']} | | "
            "- | |"
        )
        rounds = now["round_polls"]
        print(
            f"| {n} | polls until every Running job's log was read | "
            f"{rounds if rounds is not None else '> 23'} | | - | |"
        )
        print(
            f"| {n} | active jobs seen | {now['active_seen']} of {now['active']} | | "
            f"{ref.get('active_seen', '-')} of {ref.get('active', '-')} | |"
        )


if __name__ == "__main__":
    main()
