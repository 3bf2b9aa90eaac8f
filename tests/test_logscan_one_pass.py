"""The scanner's one-pass promise holds as the catalogue grows: every log kind's combined
pattern compiles in RE2 (the stdlib fallback is ~100x slower on a big log), and searching
lines of every catalogue template never runs RE2's DFA out of memory. Past that cliff (~160 kB
of pattern text at the default budget) RE2 prints "DFA out of memory" on the operator's
terminal and falls back to its NFA: a 1 GiB log takes minutes instead of seconds."""

from __future__ import annotations

import subprocess
import sys

import pytest

re2 = pytest.importorskip("re2")

_RUN = r"""
from cockpit.diagnosis import catalogue
from cockpit.diagnosis.catalogue import KIND, example_line, own_words, templates
from cockpit.diagnosis.logscan import _combined, first_error, iter_errors
import re2

kinds = {"app", "slurmctld", "slurmd", "events"} | set(KIND.values())
for kind in sorted(kinds):
    for strong in (True, False, None):
        rx = _combined(kind, strong)
        assert rx is None or isinstance(rx, re2._Regexp), (kind, strong, type(rx))
filler = b"epoch 3 step 120 loss=0.41\n" * 2000
for t in templates():
    kind = KIND.get(t.program, "app")
    for line in (example_line(t), own_words(t)):
        raw = filler + line.encode() + b"\n"
        first_error(raw, kind=kind)
        list(iter_errors(raw, kind=kind))
print("scanned")
"""


def test_every_kind_scans_in_one_re2_pass_without_running_out_of_memory():
    r = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "scanned" in r.stdout
    assert "out of memory" not in r.stderr, r.stderr[-2000:]
    assert "re2.cc" not in r.stderr, r.stderr[-2000:]
