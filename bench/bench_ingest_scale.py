"""Benchmark: ``cockpit diagnose`` on pastes with thousands of pending jobs.

Two shapes of paste, each with one finding per job (``DependencyNeverSatisfied``):

* one ``$ squeue`` table of N rows;
* N ``$ squeue -j ID`` prompts, each with its header and one row.

Pointing each finding at its file line must be about linear in N.

    python bench/bench_ingest_scale.py [--rows 4000] [--prompts 4000 20000]

Targets (2 cores): 4000 rows < 2 s; 20000 prompts < 15 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from cockpit.ingest.bundle import diagnose_bundle  # noqa: E402

HEADER = "JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"


def row(i: int) -> str:
    reason = "(DependencyNeverSatisfied)"
    return f"{100000 + i:>8}       gpu    train    user1 PD       0:00      1 {reason}\n"


def one_table(n: int) -> str:
    return "$ squeue\n" + HEADER + "".join(row(i) for i in range(n))


def many_prompts(n: int) -> str:
    return "".join(f"$ squeue -j {100000 + i}\n" + HEADER + row(i) for i in range(n))


def run(text: str) -> tuple[float, int]:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write(text)
    try:
        t = time.perf_counter()
        rep = diagnose_bundle(fh.name)
        return time.perf_counter() - t, len(rep.findings)
    finally:
        os.unlink(fh.name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="*", default=[4000])
    ap.add_argument("--prompts", type=int, nargs="*", default=[4000, 20000])
    a = ap.parse_args()
    for n in a.rows:
        secs, found = run(one_table(n))
        print(f"one squeue table, {n} rows: {secs:.2f} s, {found} findings")
    for n in a.prompts:
        secs, found = run(many_prompts(n))
        print(f"{n} squeue -j prompts: {secs:.2f} s, {found} findings")


if __name__ == "__main__":
    main()
