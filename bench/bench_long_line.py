"""Benchmark: one very long line (issue #32 item 2), against the same bytes in normal lines.

A log that is one 2 GiB line (a progress bar that never printed a newline), then an OOM line;
beside it a log of the same size in 200-byte lines. Each is given to ``cockpit scan-log``,
``scan-log --all`` and ``diagnose`` in a fresh interpreter; the child's peak RSS (wait4's
``ru_maxrss``) and wall time are printed, with the ratio long / normal.

    python bench/bench_long_line.py [--mib 2048] [--src TREE] [--dir /tmp]

``--src`` runs another checkout's cockpit (``git archive REV | tar -x -C TREE``) for a before
and after. Target: the long line costs no more memory than normal lines (ratio <= 1.25).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OOM = (
    b"slurmstepd: error: Detected 1 oom_kill event in StepId=12.batch. "
    b"Some of the step tasks have been OOM Killed.\n"
)
PIECE = 64 << 20


def write_long(path: str, size: int) -> None:
    block = b"x" * PIECE
    with open(path, "wb") as fh:
        fh.write(b"epoch 1\n")
        for _ in range(size // PIECE):
            fh.write(block)
        fh.write(b"\n" + OOM)


def write_normal(path: str, size: int) -> None:
    block = (b"x" * 199 + b"\n") * (PIECE // 200)
    with open(path, "wb") as fh:
        fh.write(b"epoch 1\n")
        for _ in range(size // len(block)):
            fh.write(block)
        fh.write(OOM)


def measure(src: str, argv: list[str]) -> tuple[float, float, int]:
    """(peak RSS MiB, seconds, exit status) of ``python -m cockpit ARGV`` from ``src``."""
    env = dict(os.environ, PYTHONPATH=src)
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", *argv],
        cwd=src,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - t, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=2048, help="size of each log in MiB")
    ap.add_argument("--src", default=HERE, help="the source tree whose cockpit runs")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    size = a.mib << 20
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        long, normal = os.path.join(tmp, "long.log"), os.path.join(tmp, "normal.log")
        write_long(long, size)
        write_normal(normal, size)
        print(f"{a.mib} MiB logs, cockpit from {os.path.abspath(a.src)}, load {os.getloadavg()}")
        for argv in (["scan-log"], ["scan-log", "--all"], ["diagnose"]):
            (rl, tl, cl), (rn, tn, cn) = (measure(a.src, [*argv, p]) for p in (long, normal))
            print(
                f"{' '.join(argv):<14} one line {rl:7.1f} MiB {tl:5.1f} s (exit {cl})  "
                f"normal lines {rn:7.1f} MiB {tn:5.1f} s (exit {cn})  ratio {rl / rn:.2f}"
            )


if __name__ == "__main__":
    main()
