"""The demo site's ordinary load: background jobs around the scenarios, and their stdout.

Arrivals are random (seeded) per partition and placed by a lane scheduler so nodes are never
oversubscribed; nodes the scenarios (:mod:`cockpit.demo.scenarios`) occupy are kept out of it.
"""

from __future__ import annotations

import math
import random

from cockpit.demo.scenarios import USER_INFO
from cockpit.demo.slurm import DemoJob, DemoNode, DemoPartition
from cockpit.slurm.hostlist import compress

HISTORY_S = 6 * 3600  # background load starts this long before the demo start
HORIZON_S = 48 * 3600  # and keeps arriving this long after it

_WORKLOADS = {
    "cpu": (
        ("vasp-relax", "alice"),
        ("gromacs-md", "hiro"),
        ("wrf-d02", "dmitri"),
        ("cp2k-opt", "jamal"),
        ("lammps-eq", "alice"),
        ("blast-shard", "lena"),
        ("star-align", "chen"),
        ("snakemake-rule", "gita"),
        ("openfoam-case", "jamal"),
        ("cesm-ens", "kim"),
    ),
    "debug": (("smoke-test", "bob"), ("mpi-hello", "bob"), ("check-env", "gita")),
    "gpu": (
        ("train-resnet50", "farid"),
        ("ft-llama-7b", "emma"),
        ("sd-finetune", "ines"),
        ("whisper-eval", "farid"),
        ("gnn-train", "emma"),
        ("ppo-agent", "ines"),
    ),
    "bigmem": (("spades-asm", "lena"), ("trinity-denovo", "chen"), ("genome-index", "lena")),
}
# partition -> (mean seconds between arrivals, mean run seconds, cpus choices, lanes per node)
_LOAD = {
    "cpu": (52, 7200, (4, 8, 12), 4),
    "debug": (900, 420, (2, 4), 0),
    "gpu": (330, 4 * 3600, (16,), 4),
    "bigmem": (1100, 4.5 * 3600, (24, 48), 2),
}
_EXCLUDED = {"cn013", "cn022", "cn031"} | {f"gpu{i:02d}" for i in range(1, 9)}


def background_jobs(
    seed: int, partitions: list[DemoPartition], nodes: list[DemoNode], first_id: int = 49000
) -> tuple[list[DemoJob], dict[int, int]]:
    """Ordinary load, placed by a simple lane scheduler so nodes are never oversubscribed.

    Each node is cut into lanes (a quarter of a CPU node, one GPU pair...); a job takes the
    lane that frees first. Returns the jobs and the planned start of every job (what
    squeue shows as the expected START_TIME of a PENDING job).
    """
    rng = random.Random(seed)
    node_by = {n.name: n for n in nodes}
    lanes: list[list] = []  # [free_at, node, until, lane cpus]
    for n in nodes:
        if n.name in _EXCLUDED:
            continue
        part = n.partitions[0]
        count = _LOAD[part][3]
        drain = n.changes[0].at if n.changes and n.changes[0].flag == "DRAIN" else None
        for _ in range(count):
            lanes.append(
                [-HISTORY_S, n.name, drain if drain is not None else 10**9, n.cpus // count]
            )
    arrivals: list[tuple[int, str]] = []
    for p in partitions:
        gap = _LOAD[p.name][0]
        t = -HISTORY_S + rng.random() * gap
        while t < HORIZON_S:
            arrivals.append((int(t), p.name))
            t += rng.expovariate(1 / gap)
    arrivals.sort()
    jobs: list[DemoJob] = []
    planned: dict[int, int] = {}
    part_nodes = {p.name: set(p.nodes) for p in partitions}
    for idx, (submit, part) in enumerate(arrivals):
        jid = first_id + idx
        name, user = rng.choice(_WORKLOADS[part])
        mean_run, cpus_choices = _LOAD[part][1], _LOAD[part][2]
        cpus = rng.choice(cpus_choices)
        limit = {"cpu": 24 * 3600, "debug": 30 * 60, "gpu": 12 * 3600, "bigmem": 48 * 3600}[part]
        run = int(min(limit - 60, max(60, rng.lognormvariate(math.log(mean_run), 0.6))))
        cancel = rng.random() < 0.04
        if cancel:
            run = max(30, run // 3)
        candidates = [ln for ln in lanes if ln[1] in part_nodes[part]]
        best = min(candidates, key=lambda ln: (max(ln[0], submit), ln[1]))
        start = max(best[0], submit)
        if start >= best[2]:  # node drains before this lane frees: look elsewhere
            ok = [ln for ln in candidates if max(ln[0], submit) < ln[2]]
            if not ok:
                continue
            best = min(ok, key=lambda ln: (max(ln[0], submit), ln[1]))
            start = max(best[0], submit)
        start += 1 + rng.randrange(3)
        best[0] = start + run + 2
        node = node_by[best[1]]
        gpus = 2 if node.gpus else 0
        mem_mib = (
            rng.choice((4, 8, 16, 32)) * 1024 * (4 if part == "bigmem" else 1) * (4 if gpus else 1)
        )
        uid, acct, proj = USER_INFO[user]
        suffix = f"{name}-{rng.randrange(1, 400):03d}"
        jobs.append(
            DemoJob(
                jid,
                suffix,
                user,
                uid,
                acct,
                part,
                cpus if not gpus else 16,
                mem_mib,
                limit,
                submit,
                start=start,
                run_s=run,
                nodes=(node.name,),
                final_state="CANCELLED" if cancel else "COMPLETED",
                cancelled_by=uid if cancel else None,
                gpus=gpus,
                priority=10000 + rng.randrange(0, 900),
                work_dir=f"/home/{user}/{proj}",
                command=f"/home/{user}/{proj}/{name}.sbatch",
                kind="gpu" if gpus else part,
                max_rss_kib=None,
            )
        )
        planned[jid] = start
    return jobs, planned


def job_log(seed: int):
    """Generated stdout of a background job at time t: (seconds, line) pairs."""

    def make(j: DemoJob, t: int) -> list[tuple[float, str]]:
        assert j.start is not None
        node = compress(j.nodes)
        lines: list[tuple[float, str]] = [
            (j.start, f"job {j.job_id} ({j.name}) on {node}, {j.cpus} CPUs"),
            (
                j.start + 1,
                "modules: "
                f"{'cuda/12.2 nccl/2.19 python/3.11' if j.gpus else 'gcc/12.2 openmpi/4.1.6'}",
            ),
        ]
        end = j.end if j.end is not None else t
        upto = min(t, end)
        step = 60 if j.gpus else 120
        k = 0
        for k, at in enumerate(range(j.start + step, upto + 1, step), start=1):
            if j.gpus:
                loss = 2.4 / (1 + k / 30) + 0.25 + (j.job_id * 31 + k * 7) % 100 / 2000
                lines.append(
                    (
                        at,
                        f"Epoch {1 + k // 50:3d} [{(k % 50) * 100:5d}/5000]  "
                        f"loss={loss:.4f}  lr=1.0e-03  {310 + (k * 13) % 40:.1f} img/s",
                    )
                )
            else:
                lines.append(
                    (at, f"step {k * 1000:9d}  t={k * 0.5:8.1f}  residual={10 ** -(1 + k % 6):.1e}")
                )
        if j.end is not None and j.end <= t:
            if j.final == "COMPLETED":
                lines.append((j.end, f"finished after {k} checkpoints, exit 0"))
            elif j.final == "CANCELLED":
                lines.append(
                    (
                        j.end,
                        f"slurmstepd: error: *** JOB {j.job_id} ON "
                        f"{node} CANCELLED AT {{ts:{j.end}}} ***",
                    )
                )
        return lines

    return make
