"""Benchmark: the at-risk sampling at 10k RUNNING jobs holds its budget (calls and CPU per poll).

Runs the real ``SlurmSource`` over ``LocalTransport`` against the peer benchmarks' fake Slurm
(``bench/peer/fakebin``, first on PATH; its ``sstat`` answers each listed RUNNING job's steps,
its ``squeue -O`` the StdOut paths). The fake's queue of 40k jobs has ~10k RUNNING rows (array
tasks included). Each poll
is measured with the sampling on (``[risk] sample_budget``, default 50) and off (0): the
commands it ran (from the fake's call log: sstat, the StdOut squeue, stat), the job ids per
sstat, the cockpit's own CPU in the sampling (``time.process_time``: the fakes are other
processes) and the poll's wall time; then how many running jobs the rotation covered, and the
CPU of the two rules over the poll's snapshot. The fake's stdout paths do not exist here:
``stat`` answers for none of them, so the silent-output rule has nothing to say (its cost is
the one ``stat`` call per poll).

    python bench/bench_risk.py [--jobs 40000] [--polls 6] [--budget 50] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FAKEBIN = ROOT / "bench" / "peer" / "fakebin"


def _calls(log: Path, since: int) -> tuple[Counter, list[int], int]:
    """(commands by name, job ids per sstat, lines read) of the fake's call log after ``since``."""
    lines = log.read_text().splitlines()[since:]
    by: Counter = Counter()
    per_sstat = []
    for ln in lines:
        _, cmd, args = ln.split("\t", 2)
        name = cmd
        if cmd == "squeue" and "StdOut" in args:
            name = "squeue -O StdOut"
        by[name] += 1
        if cmd == "sstat":
            ids = args.split("-j ", 1)[1].split(" ", 1)[0]
            per_sstat.append(len(ids.split(",")))
    return by, per_sstat, len(lines)


async def _run(jobs: int, polls: int, budget: int) -> dict:
    from cockpit.diagnosis.context import build_context
    from cockpit.diagnosis.rules.slurm_risk import job_output_silent, memory_near_request
    from cockpit.model import Artifacts, RiskSettings
    from cockpit.slurm.source import SlurmSource
    from cockpit.transport import LocalTransport

    tmp = Path(tempfile.mkdtemp(prefix="bench-risk-"))
    log = tmp / "calls.log"
    log.touch()
    os.environ.update(
        PATH=f"{FAKEBIN}{os.pathsep}{os.environ.get('PATH', '')}",
        FAKE_SLURM_JOBS=str(jobs),
        FAKE_SLURM_LOG=str(log),
        FAKE_SLURM_EPOCH=str(int(time.time()) - 86400),  # rows stay still between polls
        FAKE_SLURM_NOW=str(int(time.time())),
    )
    src = SlurmSource("fake", LocalTransport(), background_evidence=False)
    src.use_risk(RiskSettings(sample_budget=budget, log_silent_s=1800))
    spent: list[float] = []
    real = src.risk.sample

    async def timed(*a, **k):
        t0 = time.process_time()
        try:
            return await real(*a, **k)
        finally:
            spent.append(time.process_time() - t0)

    src.risk.sample = timed  # type: ignore[method-assign]
    rows = []
    seen = stats = 0
    snap = None
    for _ in range(polls):
        t0 = time.perf_counter()
        snap = await src.poll()
        wall = time.perf_counter() - t0
        by, per_sstat, n = _calls(log, seen)
        seen += n
        # stat is the system's, not the fake's: counted by the source
        by["stat"] = src.command_counts["stat"] - stats
        stats = src.command_counts["stat"]
        rows.append(
            {
                "wall_ms": round(wall * 1000),
                "risk_cpu_ms": round(spent[-1] * 1000, 1) if spent else 0.0,
                "commands": dict(by),
                "ids_per_sstat": per_sstat,
            }
        )
    assert snap is not None and snap.ok, snap and snap.error
    running = sum(j.state == "RUNNING" for j in snap.jobs)
    probe = snap.risk
    ctx = build_context(snap, Artifacts(), snap.taken_at)
    t0 = time.process_time()
    near = list(memory_near_request(snap, ctx)) + list(job_output_silent(snap, ctx))
    rules_ms = (time.process_time() - t0) * 1000
    await src.close()
    return {
        "jobs": len(snap.jobs),
        "running": running,
        "budget": budget,
        "polls": rows,
        "sampled_jobs": len(probe.memory) if probe else 0,
        "named_at_risk": len(near),
        "rules_cpu_ms": round(rules_ms, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=40_000)
    ap.add_argument("--polls", type=int, default=6)
    ap.add_argument("--budget", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    on = asyncio.run(_run(a.jobs, a.polls, a.budget))
    off = asyncio.run(_run(a.jobs, a.polls, 0))
    if a.json:
        print(json.dumps({"on": on, "off": off}, indent=2))
        return
    for label, r in (("on", on), ("off", off)):
        print(f"sampling {label}: {r['jobs']} jobs, {r['running']} RUNNING, budget {r['budget']}")
        for i, p in enumerate(r["polls"], 1):
            print(
                f"  poll {i}: {p['wall_ms']} ms wall, sampling CPU {p['risk_cpu_ms']} ms, "
                f"commands {p['commands']}, ids per sstat {p['ids_per_sstat']}"
            )
        print(
            f"  jobs with a memory sample after {len(r['polls'])} polls: {r['sampled_jobs']}; "
            f"named at risk: {r['named_at_risk']}; the two rules: {r['rules_cpu_ms']} ms CPU"
        )


if __name__ == "__main__":
    main()
