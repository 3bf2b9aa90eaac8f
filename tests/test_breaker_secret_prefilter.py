"""Hostile tests of redact()'s RE2 prefilter (#33): what it must not do besides letting a
secret through."""

from __future__ import annotations

import random

from cockpit import safety


def _download_one_liner(n: int) -> str:
    # a job's command as sites write them: one `bash -c` fetching hundreds of shards
    rng = random.Random(3)
    parts = [
        f"curl -sS -o /data/shard_{rng.randint(0, 99999)}.tar "
        f"http://mirror{rng.randint(0, 9)}.example/{'x' * rng.randint(0, 30)}"
        for _ in range(n)
    ]
    return "bash -c '" + " && ".join(parts) + "'"


def test_a_long_command_line_writes_nothing_to_the_terminal(capfd):
    # RE2's DFA runs out of its budget on ~20 KB of such a line and falls back to its NFA;
    # RE2 then logged "re2.cc:783] DFA out of memory: pattern length 8415, ..." straight to
    # file descriptor 2 (C++ logging, not Python's), which is the terminal under the TUI
    text = _download_one_liner(300)
    assert safety.redact(text) == text  # nothing secret in it
    assert safety.redact(text + " password=hunter2").endswith("password=<redacted>")
    out, err = capfd.readouterr()
    assert "DFA out of memory" not in err and "re2.cc" not in err
    assert err == ""
