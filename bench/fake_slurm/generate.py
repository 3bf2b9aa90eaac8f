"""Generate a big Slurm site and the fake executables that serve it.

    python -m bench.fake_slurm.generate DIR --jobs 100000 --nodes 10000

Rows are printed by the demo's simulator (``cockpit.demo.slurm``), so the
bytes are Slurm 22.05's formats exactly as the cockpit's parsers already read them.
Per-job detail (``scontrol show job -o ID``, ``sacct -j ID``) is generated for a
sample of jobs (``detail`` first ones in squeue order, default 2000): drill-down only
ever asks for a handful, and 100k ``scontrol show job`` lines would be 120 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import stat
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cockpit.demo.slurm import (  # noqa: E402
    MIN_JOB_AGE,
    DemoJob,
    DemoNode,
    DemoPartition,
    NodeChange,
    SlurmCluster,
)
from cockpit.demo.slurm_output import SLURM_VERSION  # noqa: E402
from cockpit.slurm.commands import (  # noqa: E402
    NODES_ARGV,
    PARTITIONS_ARGV,
    SACCT_FIELDS,
    SEP,
    SQUEUE_ARGV,
)

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)  # the site's "now" (t = 0)
FORMAT_VERSION = 2  # bump when the generated site changes (cached dirs are regenerated)


@dataclass(frozen=True, slots=True)
class Site:
    """A generated site: ``bin`` goes first on PATH; ``calls`` counts invocations."""

    root: Path
    jobs: int
    nodes: int
    detail_ids: tuple[str, ...]  # jobs with scontrol/sacct detail, squeue order
    failed_ids: tuple[str, ...]  # finished-with-error jobs among them (drill-down targets)

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def calls(self) -> Path:
        return self.root / "calls.log"

    @property
    def slurmctld_log(self) -> Path:
        return self.root / "slurmctld.log"

    def env(self) -> dict[str, str]:
        """os.environ with the fakes first on PATH."""
        return {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"}

    def output(self, name: str) -> bytes:
        """Raw bytes of one generated command output: squeue, nodes, partitions, jobs, sacct."""
        return (self.root / f"{name}.out").read_bytes()


def count_calls(site: Site) -> dict[str, int]:
    """Invocations so far per command label (``squeue``, ``scontrol show node`` ...)."""
    counts: dict[str, int] = {}
    if site.calls.exists():
        for line in site.calls.read_text().splitlines():
            counts[line] = counts.get(line, 0) + 1
    return counts


# --------------------------------------------------------------------------- the site


def _build(n_jobs: int, n_nodes: int, root: Path, seed: int) -> SlurmCluster:
    rnd = random.Random(seed)
    names = [f"cn{i:05d}" for i in range(1, n_nodes + 1)]
    cut1, cut2 = int(n_nodes * 0.70), int(n_nodes * 0.95)
    pools = {"cpu": names[:cut1], "gpu": names[cut1:cut2], "debug": names[cut2:] or names[-1:]}
    partitions = [
        DemoPartition("cpu", tuple(pools["cpu"]), 7 * 86400, default=True),
        DemoPartition("gpu", tuple(pools["gpu"]), 3 * 86400, max_cpus_per_node=48),
        DemoPartition("debug", tuple(pools["debug"]), 3600, max_nodes=2),
    ]
    part_of = {n: p for p, ns in pools.items() for n in ns}
    nodes = []
    for i, n in enumerate(names):
        changes: tuple[NodeChange, ...] = ()
        if i % 97 == 5:
            changes = (NodeChange(-3600 - i, "DRAIN", "Kill task failed", "root"),)
        elif i % 331 == 7:
            changes = (NodeChange(-1800 - i, "DOWN", "Not responding"),)
        gpu = part_of[n] == "gpu"
        nodes.append(
            DemoNode(
                n,
                64,
                257000,
                (part_of[n],),
                gpus=8 if gpu else 0,
                gpu_type="a100" if gpu else "",
                changes=changes,
            )
        )
    jobs: list[DemoJob] = []
    part_names = ["cpu"] * 14 + ["gpu"] * 5 + ["debug"]
    for k in range(n_jobs):
        jid = 1_000_000 + k
        part = part_names[rnd.randrange(len(part_names))]
        u = rnd.randrange(200)
        user, uid = f"user{u:03d}", 10_000 + u
        work = f"{root}/work/{user}"
        base = dict(
            job_id=jid,
            name=rnd.choice(["train", "eval", "prep", "sim", "llm-pretrain", "bench"])
            + f"-{k % 97}",
            user=user,
            uid=uid,
            account=f"proj{u % 17}",
            partition=part,
            cpus=rnd.choice([4, 8, 16, 16, 32]),
            mem_mib=rnd.choice([8000, 16000, 32000, 64000]),
            time_limit_s=3600 if part == "debug" else rnd.choice([4 * 3600, 86400, 2 * 86400]),
            work_dir=work,
            command=f"{work}/run.sh",
            priority=10_000 + rnd.randrange(5000),
            gpus=8 if part == "gpu" else 0,
        )
        roll = rnd.random()
        pool = pools[part]
        node = (pool[k % len(pool)],)
        if roll < 0.10:  # finished within MinJobAge
            start = -rnd.randrange(900, MIN_JOB_AGE - 600)
            which = rnd.random()
            run = rnd.randrange(60, -start - 30)
            extra: dict = {}
            if which < 0.5:
                final, code = "COMPLETED", (0, 0)
            elif which < 0.7:
                final, code = "FAILED", (1, 0)
            elif which < 0.8:
                final, code, extra = (
                    "OUT_OF_MEMORY",
                    (0, 125),
                    {"max_rss_kib": base["mem_mib"] * 1024},
                )
            elif which < 0.9:
                final, code, run = "TIMEOUT", (0, 0), base["time_limit_s"]
                start = min(start, -run - 60)
            else:
                final, code, extra = "CANCELLED", (0, 15), {"cancelled_by": uid}
            jobs.append(
                DemoJob(
                    **base,
                    submit=start - rnd.randrange(1, 600),
                    start=start,
                    run_s=run,
                    nodes=node,
                    final_state=final,
                    exit_code=code,
                    **extra,
                )
            )
        elif roll < 0.50:  # running
            start = -rnd.randrange(60, 20_000)
            jobs.append(
                DemoJob(
                    **base,
                    submit=start - rnd.randrange(1, 3600),
                    start=start,
                    run_s=-start + 10 * 86400,
                    nodes=node,
                )
            )
        else:  # pending
            reason, dep = "", ""
            if roll > 0.95:
                reason, dep = "Dependency", f"afterok:{jid - 1}(unfulfilled)"
            elif roll > 0.92:
                reason = "QOSMaxJobsPerUserLimit"
            jobs.append(
                DemoJob(
                    **base,
                    submit=-rnd.randrange(30, 3 * 86400),
                    pending_reason=reason,
                    dependency=dep,
                )
            )
    return SlurmCluster(NOW, nodes, partitions, jobs, [], [], _job_log)


def _job_log(j: DemoJob, t: int) -> list[tuple[float, str]]:
    """stdout of a generated job: a few progress lines, the error for the ones that failed."""
    start = j.start or 0
    lines = [(start + 1.0, f"[rank0]: starting {j.name} on {','.join(j.nodes)}")]
    lines += [(start + 10.0 * i, f"step {i} loss {2.0 / (i + 1):.4f}") for i in range(1, 20)]
    end = j.end if j.end is not None else start
    if j.final == "FAILED":
        lines += [
            (end - 0.5, "Traceback (most recent call last):"),
            (end - 0.4, '  File "train.py", line 42, in <module>'),
            (
                end - 0.3,
                "FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0042.bin'",
            ),
        ]
    elif j.final == "OUT_OF_MEMORY":
        lines.append(
            (
                end,
                f"slurmstepd: error: Detected 1 oom-kill event(s) in StepId={j.job_id}.batch. "
                "Some of your processes may have been killed by the cgroup out-of-memory handler.",
            )
        )
    return lines


# --------------------------------------------------------------------------- the fakes

_CALL = 'printf "%s\\n" "$LABEL" >> "$ROOT/calls.log"'

_SQUEUE = """#!/bin/sh
# fake squeue (bench/fake_slurm): prints the generated site, counts itself
ROOT={root}; LABEL=squeue
# the at-risk sampler's `squeue -O JobID,UserID,GroupID,StdOut` and `squeue -O JobID,tres-alloc`
# of a few running jobs: the generated site keeps no output files and names no TRES, so no
# paths (nothing to stat) and squeue's MIN_MEMORY stays each job's request
case " $* " in *" -O "*tres-alloc*) LABEL="squeue -O tres-alloc"; {call}; exit 0 ;; esac
case " $* " in *" -O "*) LABEL="squeue -O"; {call}; exit 0 ;; esac
{call}
if [ "$*" != {expected} ]; then echo "fake squeue: unexpected arguments: $*" >&2; exit 1; fi
exec cat "$ROOT/squeue.out"
"""

_SCONTROL = """#!/bin/sh
# fake scontrol (bench/fake_slurm); --version asks no controller: not counted
[ "$*" = "--version" ] && {{ echo "slurm {version}"; exit 0; }}
ROOT={root}; LABEL="scontrol show $2"; {call}
case "$1 $2 $3" in
  "show node -o") exec cat "$ROOT/nodes.out" ;;
  "show partition -o") exec cat "$ROOT/partitions.out" ;;
  "show job -o")
    grep -F -A1 "JobId=$4 " "$ROOT/jobs.out" && exit 0
    echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1 ;;
esac
echo "fake scontrol: unexpected arguments: $*" >&2; exit 1
"""

_SACCT = """#!/bin/sh
# fake sacct (bench/fake_slurm): -j IDS, or -u USER --name NAME (history)
ROOT={root}; LABEL=sacct; {call}
ids=""; user=""; name=""; fields=""; backfill=""
while [ $# -gt 0 ]; do
  case "$1" in
    -j) ids="$2"; shift ;;
    -u) user="$2"; shift ;;
    --name) name="$2"; shift ;;
    -o) fields="$2"; shift ;;
    -S|-E) shift ;;
    --state=*) backfill=1 ;;
  esac
  shift
done
# the poll's backfill (jobs that failed since the last poll): none ended on this static site
if [ -n "$backfill" ]; then exit 0; fi
if [ "$fields" != {fields} ]; then echo "fake sacct: unexpected -o $fields" >&2; exit 1; fi
exec awk -F "$(printf '\\037')" -v ids="$ids" -v user="$user" -v name="$name" '
  BEGIN {{ n = split(ids, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1 }}
  {{ split($1, p, ".") }}
  (ids != "" && (p[1] in want)) || (ids == "" && $4 == user && $2 == name && p[2] == "")
' "$ROOT/sacct.out"
"""

_SSTAT = """#!/bin/sh
# fake sstat (bench/fake_slurm): the at-risk sampler's one call per poll; each asked job's
# batch step at a steady share of nothing recorded yet (steps that have not reported)
ROOT={root}; LABEL=sstat; {call}
exit 0
"""

_SINFO = """#!/bin/sh
# fake sinfo (bench/fake_slurm): the cockpit reads nodes with scontrol;
# counted in case anything calls it
ROOT={root}; LABEL=sinfo; {call}
echo "fake sinfo: not generated" >&2; exit 1
"""


def _write_exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def generate(
    root: str | Path,
    jobs: int = 1000,
    nodes: int = 10_000,
    *,
    detail: int = 2000,
    seed: int = 42,
    force: bool = False,
) -> Site:
    """Build (or reuse, when ``meta.json`` matches) the site in ``root``; returns a :class:`Site`.

    Files: ``squeue.out``, ``nodes.out``, ``partitions.out`` (every poll), ``jobs.out`` and
    ``sacct.out`` (the ``detail`` sample), ``slurmctld.log``, stdout of the sampled
    finished jobs under ``work/``, ``bin/`` fakes, ``calls.log`` (emptied on generation).
    """
    root = Path(root).resolve()
    meta_path = root / "meta.json"
    want = {"jobs": jobs, "nodes": nodes, "detail": detail, "seed": seed, "version": FORMAT_VERSION}
    if not force and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if {k: meta.get(k) for k in want} == want:
            site = Site(root, jobs, nodes, tuple(meta["detail_ids"]), tuple(meta["failed_ids"]))
            site.calls.write_text("")
            return site
    (root / "bin").mkdir(parents=True, exist_ok=True)
    cluster = _build(jobs, nodes, root, seed)
    t = 0
    squeue, err, rc = cluster.squeue(list(SQUEUE_ARGV[1:]), t)
    assert rc == 0, err
    (root / "squeue.out").write_bytes(squeue)
    for name, argv in (("nodes", NODES_ARGV), ("partitions", PARTITIONS_ARGV)):
        out, err, rc = cluster.scontrol(list(argv[1:]), t)
        assert rc == 0, err
        (root / f"{name}.out").write_bytes(out)
    # the detail sample, in squeue order (what an operator sees first)
    first = [line.split(SEP.encode(), 1)[0].decode() for line in squeue.splitlines()[:detail]]
    visible = dict(cluster.visible_jobs(t))
    pending = cluster.pending_reasons(t, list(visible.items()))
    by_id = {str(j.job_id): j for j in visible}
    with open(root / "jobs.out", "w") as fh:
        for jid in first:
            j = by_id[jid]
            fh.write(cluster._job_line(j, visible[j], t, pending) + "\n\n")
    sacct, err, rc = cluster.sacct(
        ["-P", f"--delimiter={SEP}", "-n", "-j", ",".join(first), "-o", ",".join(SACCT_FIELDS)], t
    )
    assert rc == 0, err
    (root / "sacct.out").write_bytes(sacct)
    ctld = cluster.file("/var/log/slurm/slurmctld.log", t)
    assert ctld is not None
    (root / "slurmctld.log").write_bytes(ctld.read(0, ctld.size))
    failed = [jid for jid in first if visible[by_id[jid]] in ("FAILED", "OUT_OF_MEMORY", "TIMEOUT")]
    for jid in failed[:50]:
        j = by_id[jid]
        f = cluster.file(j.stdout_path, t)
        if f is not None:
            Path(j.stdout_path).parent.mkdir(parents=True, exist_ok=True)
            Path(j.stdout_path).write_bytes(f.read(0, f.size))
    q = shlex.quote
    fmt = {"root": q(str(root)), "call": _CALL}
    _write_exe(
        root / "bin" / "squeue", _SQUEUE.format(expected=q(" ".join(SQUEUE_ARGV[1:])), **fmt)
    )
    _write_exe(root / "bin" / "scontrol", _SCONTROL.format(version=SLURM_VERSION, **fmt))
    _write_exe(root / "bin" / "sacct", _SACCT.format(fields=q(",".join(SACCT_FIELDS)), **fmt))
    _write_exe(root / "bin" / "sinfo", _SINFO.format(**fmt))
    _write_exe(root / "bin" / "sstat", _SSTAT.format(**fmt))
    (root / "calls.log").write_text("")
    meta_path.write_text(json.dumps({**want, "detail_ids": first, "failed_ids": failed[:50]}))
    return Site(root, jobs, nodes, tuple(first), tuple(failed[:50]))


def main() -> int:
    ap = argparse.ArgumentParser(description="generate a fake Slurm site for the benchmarks")
    ap.add_argument("dir")
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--detail", type=int, default=2000)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    site = generate(args.dir, args.jobs, args.nodes, detail=args.detail, force=args.force)
    print(
        f"{site.root}: {args.jobs} jobs, {args.nodes} nodes in {time.perf_counter() - t0:.1f} s; "
        f"PATH={site.bin}:$PATH"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
