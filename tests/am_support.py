"""A real Prometheus Alertmanager for tests, with a local webhook receiver the test reads.

Debian's ``prometheus-alertmanager`` (``.ci/run`` installs it); tests skip with the reason when
the binary is missing. Waiting is by polling a condition with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

AM_BIN = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.1)


class Webhook:
    """An HTTP server keeping every JSON body POSTed to it (Alertmanager's webhook receiver)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        lock = self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with lock:
                    outer.raw.append(data)
                    outer.bodies.append(json.loads(data))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def alerts(self) -> list[dict[str, Any]]:
        """Every alert of every notification, in arrival order (with its ``status``)."""
        with self._lock:
            return [a for b in self.bodies for a in b.get("alerts", [])]

    def find(self, status: str, **labels: str) -> list[dict[str, Any]]:
        return [
            a
            for a in self.alerts()
            if a.get("status") == status and all(a["labels"].get(k) == v for k, v in labels.items())
        ]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


CONFIG = """\
route:
  receiver: hook
  group_by: [alertname, cluster, subject]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 24h
receivers:
  - name: hook
    webhook_configs:
      - url: {url}
        send_resolved: true
"""


class Alertmanager:
    """One Alertmanager process on 127.0.0.1:``port`` with a temp config and storage."""

    def __init__(self, tmp: Path, webhook_url: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.dir = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "am.yml").write_text(CONFIG.format(url=webhook_url))
        self.proc: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> Alertmanager:
        log = (self.dir / "am.log").open("ab")
        self.proc = subprocess.Popen(
            [
                AM_BIN,
                f"--config.file={self.dir / 'am.yml'}",
                f"--storage.path={self.dir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        if wait:
            self.wait_ready()
        return self

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r:
                return r.status == 200
        except OSError:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(
                    f"alertmanager exited {self.proc.returncode}: "
                    + (self.dir / "am.log").read_text()[-2000:]
                ) from None
            return False

    def wait_ready(self) -> None:
        wait_for(self.ready, 30, "alertmanager /-/ready")

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=5) as r:
            return json.loads(r.read())

    def post(self, path: str, body: Any) -> Any:
        req = urllib.request.Request(
            f"{self.url}{path}",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            data = r.read()
        return json.loads(data) if data else None

    def alerts(self) -> list[dict[str, Any]]:
        return self.get("/api/v2/alerts")

    def silence(self, minutes: int = 60, **labels: str) -> str:
        from datetime import UTC, datetime, timedelta

        now = datetime.now(UTC)
        body = {
            "matchers": [
                {"name": k, "value": v, "isRegex": False, "isEqual": True}
                for k, v in labels.items()
            ],
            "startsAt": now.isoformat(),
            "endsAt": (now + timedelta(minutes=minutes)).isoformat(),
            "createdBy": "test",
            "comment": "maintenance",
        }
        return self.post("/api/v2/silences", body)["silenceID"]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
