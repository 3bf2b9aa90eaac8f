"""Every way out redacts: a finding whose evidence quotes each kind of credential goes through
each channel (a real webhook server, a real notify command, the history file, the watcher,
the reports and ``cockpit incidents``, the cockpit's log records) and no secret value arrives,
while the rest of each line still does."""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from cockpit.model import Evidence, Finding, Incident, Subject
from cockpit.report import incidents_json, incidents_markdown
from cockpit.safety import install_log_redaction, redact
from cockpit.watch.alerts import Alert, AlertConfig, NotifyConfig
from cockpit.watch.history import AlertHistory
from cockpit.watch.notify import Notifier
from cockpit.watch.watcher import Watcher

NOW = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)

# (evidence line, the secret in it, a useful part of the line that must still arrive)
CASES = [
    ("db connect failed password=hunter2 at step 5", "hunter2", "db connect failed"),
    ("ldap bind passwd: Sup3rS3cretPw for uid=7", "Sup3rS3cretPw", "ldap bind"),
    ("pull refused token=tok_9a8b7c6d5e4f3a2b expired", "tok_9a8b7c6d5e4f3a2b", "pull refused"),
    (
        "curl -H Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.c2lnbmF0dXJl -> 401",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.c2lnbmF0dXJl",
        "-> 401",
    ),
    ("obs client init with HPUAK7Z3Q9W2LX5M8N4R failed", "HPUAK7Z3Q9W2LX5M8N4R", "obs client init"),
    (
        "sk Xk3mP9qL2vB7nR4tY8wZ1cF6hJ0sD5gA2eU7iO3p rejected by IAM",
        "Xk3mP9qL2vB7nR4tY8wZ1cF6hJ0sD5gA2eU7iO3p",
        "rejected by IAM",
    ),
    ("env HUAWEICLOUD_SDK_AK=QWERTY1234ASDFGH5678 set", "QWERTY1234ASDFGH5678", "env"),
    (
        "env HUAWEICLOUD_SDK_SK=plainlowercasesecretvalue99 set",
        "plainlowercasesecretvalue99",
        "env",
    ),
    (
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY in prolog",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "in prolog",
    ),
    (
        "git clone https://bob:pa55w0rdX@git.example.com/team/repo.git failed",
        "pa55w0rdX",
        "git.example.com/team/repo.git failed",
    ),
    (
        "ding https://oapi.dingtalk.com/robot/send?access_token=9f8e7d6c5b4a3928170 returned 31",
        "9f8e7d6c5b4a3928170",
        "returned 31",
    ),
    (
        "post https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7a3c-4b1e-9f2d-0123 ok",
        "693a91f6-7a3c-4b1e-9f2d-0123",
        "qyapi.weixin.qq.com",
    ),
    (
        "slack https://hooks.slack.com/services/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 down",
        "cccc3333dddd4444eeee5555",
        "hooks.slack.com",
    ),
]
SECRETS = [secret for _, secret, _ in CASES]
USEFUL = [rest for _, _, rest in CASES]


def _finding() -> Finding:
    subject = Subject("job", "hpc", "4242")
    return Finding(
        "app_error",
        "critical",
        subject,
        "job 4242 failed: password=hunter2",
        explanation="the application quit; its log says HUAWEICLOUD_SDK_AK=QWERTY1234ASDFGH5678",
        remedy="rotate the key Xk3mP9qL2vB7nR4tY8wZ1cF6hJ0sD5gA2eU7iO3p, then resubmit",
        evidence=tuple(
            Evidence("slurm-4242.out", text, line=i) for i, (text, _, _) in enumerate(CASES, 1)
        ),
        first_seen=NOW,
    )


def _alert() -> Alert:
    f = _finding()
    return Alert(NOW, "job_failed", "critical", f.subject, f.title, finding=f, source="hpc")


def assert_clean(received: str, *, all_lines: bool = True) -> None:
    """No secret in ``received``; the useful rest of every evidence line is still there."""
    leaked = [s for s in SECRETS if s in received]
    assert not leaked, f"leaked {leaked} in: {received[:2000]}"
    assert "<redacted>" in received
    if all_lines:
        missing = [u for u in USEFUL if u not in received]
        assert not missing, f"lost {missing}"


def test_every_case_is_a_secret_redact_finds():
    for line, secret, useful in CASES:
        out = redact(line)
        assert secret not in out and useful in out, (line, out)


# --------------------------------------------------------------------------- webhook


class _Hook(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        n = int(self.headers.get("Content-Length", "0"))
        type(self).bodies.append(self.rfile.read(n))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"errcode": 0}')

    def log_message(self, *args) -> None:  # keep the test's stderr clean
        pass


@pytest.fixture
def hook_server():
    _Hook.bodies = []
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", _Hook.bodies
    finally:
        server.shutdown()
        server.server_close()
        t.join(5)


@pytest.mark.parametrize("template", ["generic", "slack", "wecom", "dingtalk", "feishu"])
def test_webhook_bodies_are_redacted(hook_server, template, tmp_path):
    url, bodies = hook_server
    cfg = NotifyConfig(webhook=url, webhook_template=template, timeout_s=5, min_severity="info")
    results = Notifier(cfg, log_path=tmp_path / "notify.log").send([_alert()])
    assert [r.ok for r in results] == [True], results
    assert len(bodies) == 1
    body = json.loads(bodies[0])  # still valid JSON after redaction
    text = json.dumps(body, ensure_ascii=False)
    # chat templates quote the first evidence lines only (a message size cap)
    assert_clean(text, all_lines=template == "generic")
    assert "db connect failed" in text and "job 4242 failed" in text


# --------------------------------------------------------------------------- notify command

_HOOK_SCRIPT = """
import json, os, sys
out = {"argv": sys.argv[1:], "stdin": sys.stdin.read(),
       "env": {k: v for k, v in os.environ.items() if k.startswith("COCKPIT_ALERT_")}}
open(sys.argv[1], "w").write(json.dumps(out))
"""


def test_notify_command_gets_redacted_stdin_and_environment(tmp_path):
    script = tmp_path / "hook.py"
    script.write_text(_HOOK_SCRIPT)
    got = tmp_path / "got.json"
    cfg = NotifyConfig(
        notify_command=f"{sys.executable} {script} {got}", timeout_s=20, min_severity="info"
    )
    results = Notifier(cfg, log_path=tmp_path / "notify.log").send([_alert()])
    assert [r.ok for r in results] == [True], results
    received = got.read_text()
    assert_clean(received)
    doc = json.loads(received)
    assert json.loads(doc["stdin"])["finding"]["evidence"][0]["text"].startswith(
        "db connect failed password="
    )
    assert doc["env"]["COCKPIT_ALERT_TITLE"] == "job 4242 failed: password=<redacted>"


# --------------------------------------------------------------------------- memory and files


def test_history_file_is_redacted_and_still_loads(tmp_path):
    history = AlertHistory(tmp_path / "alerts.jsonl")
    history.append([_alert()])
    assert_clean((tmp_path / "alerts.jsonl").read_text())
    (loaded,) = history.load()
    assert loaded.finding is not None and len(loaded.finding.evidence) == len(CASES)


def test_alerts_leave_the_watcher_redacted(tmp_path):
    """What ``cockpit watch`` prints and the alert pane shows come from the watcher."""
    history = AlertHistory(tmp_path / "alerts.jsonl")
    watcher = Watcher(AlertConfig(), history=history)
    fired = watcher.record([_alert()], NOW)
    assert len(fired) == 1
    for a in (*fired, *watcher.alerts):
        assert_clean(json.dumps(a.to_json(), ensure_ascii=False))
    assert fired[0].subject == Subject("job", "hpc", "4242")  # the rate-limit key is kept


def _incident() -> Incident:
    f = _finding()
    return Incident(f.key, f.root_cause, f.severity, f.subject, f.title, (f,), (), NOW)


def test_reports_are_redacted():
    assert_clean(json.dumps(incidents_json([_incident()], NOW), ensure_ascii=False))
    assert_clean(incidents_markdown([_incident()], NOW))


@pytest.mark.parametrize("flag", ["json", "markdown"])
def test_incidents_command_output_is_redacted(flag, monkeypatch, capsys):
    from types import SimpleNamespace

    from cockpit.commands import incidents as cmd
    from cockpit.store import open_store

    async def collect(sources, store=None):
        # what the core leaves after a poll: the incident in the store, the source answered
        store.sync_incidents(["hpc"], [_incident()], NOW)
        st = SimpleNamespace(
            error=None, snapshot=SimpleNamespace(taken_at=NOW), evidence=SimpleNamespace(errors=[])
        )
        return SimpleNamespace(states={"hpc": st})

    monkeypatch.setattr(cmd, "collect", collect)
    monkeypatch.setattr(cmd, "_select", lambda args: [SimpleNamespace(name="hpc", kind="slurm")])
    monkeypatch.setattr(cmd, "store_for", lambda args: open_store("sqlite://"))
    args = argparse.Namespace(json=flag == "json", markdown=flag == "markdown")
    assert cmd.run(args) in (0, 1)  # 1: a critical incident is open
    assert_clean(capsys.readouterr().out)


def test_the_cockpits_log_records_are_redacted():
    before = logging.getLogRecordFactory()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("cockpit.test_redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        install_log_redaction()
        install_log_redaction()  # idempotent
        for line, _, _ in CASES:
            log.warning("evidence: %s", line)
        try:
            raise RuntimeError("login failed password=hunter2")
        except RuntimeError:
            log.exception("fetch failed for %s", "https://bob:pa55w0rdX@git.example.com/x")
    finally:
        logging.setLogRecordFactory(before)
        log.removeHandler(handler)
    assert_clean(stream.getvalue())
    assert "RuntimeError: login failed password=<redacted>" in stream.getvalue()
