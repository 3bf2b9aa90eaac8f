"""Breaker: the level_error pattern (a line logged at error level is critical) must not make
ordinary logs red: metric tables, error counts and prose that name ERROR as a word."""

from __future__ import annotations

import pytest

from cockpit.diagnosis.logscan import iter_errors

QUIET = (
    b"  Mean ERROR: 0.031\n",
    b"RMS ERROR 0.002\n",
    b"Validation ERROR: 0.12\n",
    b"Step 100 | ERROR 0.53\n",
    b"epoch 3 ERROR 0.0012\n",
    b"NAME   STATUS  ERROR  TIME\nsampleA  ok   0  1s\n",
    b"Total ERROR count: 0\n",
    b"Found 0 ERROR lines\n",
    b"No ERROR found\n",
    b"2026-12-05 08:00:01 INFO ERROR count 0\n",
    b"ERROR: 0\n",
)


@pytest.mark.parametrize("text", QUIET, ids=lambda t: t.decode().split("\n")[0].strip())
def test_a_metric_or_count_named_error_is_not_a_critical_line(text):
    assert all(h.severity != "critical" for h in iter_errors(text)), text


@pytest.mark.parametrize(
    "text",
    (
        b"ERROR: input file /data/missing.csv not found\n",
        b"[2026-12-05 08:00:01] ERROR: checkpoint unreadable\n",
        b"myapp: ERROR: cannot open /scratch/x\n",
        b"12:00:01 [ERROR] worker 3 lost\n",
        b"ERROR:root:bad config\n",
        b"ERROR: 404 Not Found\n",
    ),
)
def test_a_line_logged_at_error_level_stays_critical(text):
    assert [h.severity for h in iter_errors(text)] == ["critical"], text


def test_the_error_patterns_stay_one_re2_scan():
    """A lookaround in a pattern made RE2 refuse the combined scan ('invalid perl operator'
    on the terminal at each diagnose) and the stdlib engine read every log instead."""
    re2 = pytest.importorskip("re2")
    from cockpit.diagnosis.logscan import _combined

    for kind in ("job", "node", "training_job", ""):
        for strong in (None, True, False):
            rx = _combined(kind, strong)
            assert rx is None or isinstance(rx, re2._Regexp), (kind, strong, type(rx))
