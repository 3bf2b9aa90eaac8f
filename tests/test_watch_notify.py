import json
import sys
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cockpit.model import Finding, Subject
from cockpit.watch.alerts import Alert, NotifyConfig
from cockpit.watch.notify import Notifier, post_webhook, render_webhook, run_command

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
FINDING = Finding(
    "oom_killed",
    "critical",
    Subject("job", "hpc", "42"),
    "killed for memory",
    remedy="resubmit with --mem=20G",
)
ALERT = Alert(
    T0,
    "job_failed",
    "critical",
    Subject("job", "hpc", "42"),
    "job 42 (train, alice) OUT_OF_MEMORY",
    FINDING,
    "hpc",
    "alice",
)


class Server:
    """A local HTTP server on an ephemeral port recording POST bodies."""

    def __init__(self, status=200, answer=b'{"errcode": 0, "errmsg": "ok"}', hang=None):
        self.bodies, self.headers = [], []
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                n = int(self.headers["Content-Length"])
                outer.bodies.append(json.loads(self.rfile.read(n)))
                outer.headers.append(dict(self.headers))
                if hang is not None:
                    hang.wait(5)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/hook?key=abc"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize(
    ("template", "check"),
    [
        (
            "generic",
            lambda b: (
                b["rule"] == "job_failed"
                and b["subject"] == {"kind": "job", "source": "hpc", "id": "42"}
                and b["finding"]["root_cause"] == "oom_killed"
            ),
        ),
        ("slack", lambda b: set(b) == {"text"} and b["text"].startswith("[CRITICAL] job 42")),
        ("wecom", lambda b: b["msgtype"] == "text" and "--mem=20G" in b["text"]["content"]),
        ("dingtalk", lambda b: b["msgtype"] == "text" and "OUT_OF_MEMORY" in b["text"]["content"]),
        ("feishu", lambda b: b["msg_type"] == "text" and "OUT_OF_MEMORY" in b["content"]["text"]),
    ],
)
def test_webhook_body_per_template(template, check):
    with Server() as srv:
        res = post_webhook(srv.url, ALERT, template, timeout=5)
    assert res.ok and res.status == 200, res
    assert len(srv.bodies) == 1 and check(srv.bodies[0])
    assert srv.headers[0]["Content-Type"].startswith("application/json")
    assert srv.bodies[0] == render_webhook(ALERT, template)


def test_http_error_and_robot_error_are_returned():
    with Server(status=500, answer=b"boom") as srv:
        res = post_webhook(srv.url, ALERT, timeout=5)
    assert not res.ok and res.error.startswith("HTTP 500")
    with Server(answer=b'{"errcode": 93000, "errmsg": "invalid webhook url"}') as srv:
        res = post_webhook(srv.url, ALERT, "wecom", timeout=5)
    assert not res.ok and "93000" in res.error and "invalid webhook url" in res.error


def test_hanging_server_times_out_without_raising():
    release = threading.Event()
    with Server(hang=release) as srv:
        res = post_webhook(srv.url, ALERT, timeout=0.5)
        release.set()
    assert not res.ok and ("timed out" in res.error or "timeout" in res.error), res


def test_unreachable_is_returned():
    with Server() as srv:
        url = srv.url
    res = post_webhook(url, ALERT, timeout=2)  # server closed: connection refused
    assert not res.ok and res.error.startswith("unreachable")


def test_command_hook_gets_the_alert_json_on_stdin(tmp_path):
    out = tmp_path / "alert.json"
    res = run_command(f"sh -c 'cat > {out}'", ALERT, timeout=5)
    assert res.ok, res
    assert Alert.from_json(json.loads(out.read_text())) == ALERT


def test_command_hook_failures_are_results(tmp_path):
    res = run_command("sh -c 'echo nope >&2; exit 3'", ALERT, timeout=5)
    assert not res.ok and res.status == 3 and "nope" in res.error
    res = run_command("/no/such/hook", ALERT, timeout=5)
    assert not res.ok and "/no/such/hook" in res.error
    res = run_command(f"{sys.executable} -c 'import time; time.sleep(5)'", ALERT, timeout=0.3)
    assert not res.ok and "timeout" in res.error


def test_notifier_dispatches_in_a_thread_and_logs_failures(tmp_path, capsys):
    out = tmp_path / "got.jsonl"
    log = tmp_path / "notify.log"
    cfg = NotifyConfig(
        webhook="http://127.0.0.1:9/unused",
        notify_command=f"sh -c 'cat >> {out}; echo >> {out}'",
        timeout_s=2,
    )
    n = Notifier(cfg, log_path=log)
    info = Alert(
        T0,
        "source_recovered",
        "info",
        Subject("cluster", "hpc", "hpc"),
        "hpc answers again",
        None,
        "hpc",
    )
    t = n.dispatch([ALERT, info])
    assert t is not None and t.daemon
    t.join(10)
    lines = out.read_text().splitlines()
    assert (
        len(lines) == 1 and json.loads(lines[0])["rule"] == "job_failed"
    )  # info is below min_severity
    assert "webhook: unreachable" in log.read_text()  # port 9 refuses
    assert capsys.readouterr().err == ""
    assert Notifier(NotifyConfig(), log_path=log).dispatch([ALERT]) is None  # nothing configured
