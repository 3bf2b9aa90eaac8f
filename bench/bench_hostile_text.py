"""Hostile text at size: ``redact`` and ``strip_ansi`` on one 10 MB line.

A regex that backtracks turns a 10 MB job log line into minutes on the UI or the alert path;
these were timing assertions in tests/hostile (moved here: no timing in tests).

    python bench/bench_hostile_text.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _best(fn, arg, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    from cockpit.safety import redact
    from cockpit.text import clean, strip_ansi

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cases = {
        "redact 10 MB of a_": (redact, "a_" * 5_000_000 + " password=hunter2"),
        "redact 10 MB of key=": (redact, "key=" * 2_500_000),
        "strip_ansi 10 MB of SGR+OSC": (
            strip_ansi,
            ("\x1b[31m" + "x" * 50 + "\x1b]8;;u\x07") * 160_000,
        ),
        "clean 10 MB (display cap)": (clean, "\x1b[31mx\u202e" * 2_000_000),
    }
    result = {name: round(_best(fn, arg), 3) for name, (fn, arg) in cases.items()}
    if args.json:
        print(json.dumps(result))
    else:
        for name, secs in result.items():
            print(f"{name:32} {secs:7.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
