"""Job-controlled text on its way out of the alerting: no terminal escapes, no bidi, no line
breaks in one alert's title, and a history that reads back whatever a job was named."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from cockpit.model import Finding, Subject
from cockpit.text import json_line, lines
from cockpit.watch.alerts import Alert
from cockpit.watch.history import AlertHistory
from cockpit.watch.watcher import redacted

T = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
HOSTILE = (
    "train\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\x1bPtmux;\x1b\x1b]8;;http://x\x07"
    "\u202eexe.txt\u2028next line\x85\x9b31m done"
)


def _alert(text: str) -> Alert:
    f = Finding("application_error", "critical", Subject("job", "hpc", "7", text), text,
                explanation=text, remedy=text)  # fmt: skip
    return Alert(T, "job_failed", "critical", Subject("job", "hpc", "7", text), text, f, "hpc")


def test_every_text_of_an_alert_is_clean_for_its_channels():
    a = redacted(_alert(HOSTILE))
    texts = [a.title, a.subject.name, a.finding.title, a.finding.explanation, a.finding.remedy]
    for t in texts:
        assert not any(c in t for c in "\x1b\x07\x9b\x85\u202e\u2028"), repr(t)
        assert "train" in t and "done" in t  # the words stay
    body = json.dumps(a.to_json())  # what a webhook posts and `jq -r .title` prints
    assert "\\u001b" not in body and "\\u2028" not in body


def test_the_history_reads_back_an_alert_whatever_the_job_was_named(tmp_path):
    """Written raw, U+2028 and U+0085 cut a line in two for str.splitlines(): the alert pane
    and `cockpit alerts` lost it."""
    hist = AlertHistory(tmp_path / "alerts.jsonl")
    raw = Alert(T, "job_failed", "critical", Subject("job", "hpc", "8"), "a\u2028b\x85c")
    hist.append([raw])
    text = (tmp_path / "alerts.jsonl").read_text(encoding="utf-8")
    assert len(text.splitlines()) == 1  # escaped: one line for every reader
    (back,) = hist.load()
    assert back.title == "a\u2028b\x85c"
    assert lines('{"a": 1}\n{"b": "x\u2028y"}\n') == ['{"a": 1}', '{"b": "x\u2028y"}', ""]
    assert "\u2028" not in json_line({"n": "x\u2028y"})
