"""Sending alerts out: a webhook (generic JSON or a chat robot's shape) and a command hook.

The terminal bell / tmux activity flag is the TUI's job. Everything here blocks
(``urllib.request``, ``subprocess``) with a timeout, so the app calls
:meth:`Notifier.dispatch`, which runs in a daemon thread. Failures are *returned*
as :class:`NotifyResult` and appended to a log file; nothing is raised to the UI and
nothing is written to stderr (Textual owns it).

Evidence quotes log lines, and log lines carry passwords and keys: everything that leaves
through a channel (webhook body, command stdin and environment, the failure log) goes
through :func:`cockpit.safety.redact` right where it is sent, so no caller can forget it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

from cockpit.i18n import N_, _
from cockpit.model import SEVERITY_RANK
from cockpit.safety import redact
from cockpit.watch.alerts import Alert, NotifyConfig

USER_AGENT = "cockpit-alerts/1"
_MAX_TEXT = 3500  # chat robots cap message length (WeCom 2048 bytes for markdown, 4096 text)


@dataclass(frozen=True, slots=True)
class NotifyResult:
    """One delivery: ``channel`` is ``webhook`` or ``command``; ``error`` is empty on success."""

    channel: str
    ok: bool
    error: str = ""
    status: int | None = None  # HTTP status or the command's exit status


# the severity that heads a chat message, in the language spoken
_SEVERITY = {"critical": N_("CRITICAL"), "warning": N_("WARNING"), "info": N_("INFO")}


def alert_text(alert: Alert) -> str:
    """Plain text for chat robots: severity, title, subject, then the finding's remedy (in
    the language spoken; the rule and the facts as they are)."""
    sev = _(_SEVERITY.get(alert.severity, alert.severity.upper()))
    lines = [
        f"[{sev}] {alert.title}",
        f"{alert.subject.label()} · {alert.rule} · {alert.time:%Y-%m-%d %H:%M:%S %Z}",
    ]
    f = alert.finding
    if f is not None:
        if f.explanation:
            lines.append(f.explanation)
        if f.remedy:
            lines.append(_("Do: ") + f.remedy)
        lines += [f"  {e.shown_where()}: {e.text}" for e in f.evidence[:3]]
    # redacted before the cut: a key cut in half no longer looks like one
    text = redact("\n".join(lines))
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def render_webhook(alert: Alert, template: str = "generic") -> dict[str, Any]:
    """The JSON body for ``template``.

    * generic: :meth:`Alert.to_json`
    * slack (and Mattermost, Rocket.Chat, Teams' Slack-compatible hooks): ``{"text": ...}``
    * wecom (WeCom group robot) and dingtalk (DingTalk custom robot):
      ``{"msgtype": "text", "text": {"content": ...}}``
    * feishu (Feishu / Lark custom bot): ``{"msg_type": "text", "content": {"text": ...}}``

    Raises ValueError for an unknown template. The body is redacted.
    """
    if template == "generic":
        return redact(alert.to_json())
    text = alert_text(alert)
    if template == "slack":
        return {"text": text}
    if template in ("wecom", "dingtalk"):
        return {"msgtype": "text", "text": {"content": text}}
    if template == "feishu":
        return {"msg_type": "text", "content": {"text": text}}
    raise ValueError(f"unknown webhook template {template!r}")


def _robot_error(body: bytes) -> str:
    """Chat robots answer HTTP 200 with an error code in the body (errcode / code != 0)."""
    try:
        d = json.loads(body or b"{}")
    except ValueError:
        return ""
    if not isinstance(d, dict):
        return ""
    for key, msg in (("errcode", "errmsg"), ("code", "msg"), ("StatusCode", "StatusMessage")):
        v = d.get(key)
        if isinstance(v, int) and v != 0:
            return f"{key} {v}: {d.get(msg, '')}".strip()
    return ""


def post_webhook(
    url: str, alert: Alert, template: str = "generic", timeout: float = 10.0
) -> NotifyResult:
    """POST the rendered body as JSON to ``url``. Never raises: errors come back in the result."""
    # here, not at module top: urllib.request pulls http.client and email (~10 ms) into the
    # TUI's start-up, and most sessions never send a webhook
    import urllib.error
    import urllib.request

    try:
        body = json.dumps(redact(render_webhook(alert, template)), ensure_ascii=False).encode()
        req = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (URL from the operator's config)
            status = resp.status
            answer = resp.read(65536)
        err = _robot_error(answer)
        return NotifyResult("webhook", not err, err, status)
    except urllib.error.HTTPError as exc:
        return NotifyResult("webhook", False, f"HTTP {exc.code} {exc.reason}", exc.code)
    except urllib.error.URLError as exc:
        reason = exc.reason
        kind = "timeout" if isinstance(reason, TimeoutError) else "unreachable"
        return NotifyResult("webhook", False, f"{kind}: {reason}")
    except TimeoutError as exc:
        return NotifyResult("webhook", False, f"timeout after {timeout:g}s: {exc}")
    except (OSError, ValueError) as exc:
        return NotifyResult("webhook", False, f"{type(exc).__name__}: {exc}")


def run_command(command: str, alert: Alert, timeout: float = 10.0) -> NotifyResult:
    """Run ``command`` (split with ``shlex``, no shell) with the alert JSON on stdin.

    The environment gets ``COCKPIT_ALERT_RULE``, ``COCKPIT_ALERT_SEVERITY`` and
    ``COCKPIT_ALERT_TITLE`` for one-liners. The argv is the operator's own (config), stdin and
    the alert's variables are redacted. Never raises.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return NotifyResult("command", False, f"cannot split command: {exc}")
    if not argv:
        return NotifyResult("command", False, "empty command")
    env = {
        **os.environ,
        **redact(
            {
                "COCKPIT_ALERT_RULE": alert.rule,
                "COCKPIT_ALERT_SEVERITY": alert.severity,
                "COCKPIT_ALERT_TITLE": alert.title,
            }
        ),
    }
    try:
        proc = subprocess.run(
            argv,
            input=json.dumps(redact(alert.to_json()), ensure_ascii=False).encode(),
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
            close_fds=True,
        )
    except subprocess.TimeoutExpired:
        return NotifyResult("command", False, f"timeout after {timeout:g}s: {argv[0]}")
    except OSError as exc:
        return NotifyResult("command", False, f"{argv[0]}: {exc.strerror or exc}")
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return NotifyResult(
            "command", False, f"exit {proc.returncode}: {tail[0][:200]}", proc.returncode
        )
    return NotifyResult("command", True, "", 0)


def default_notify_log() -> Path:
    return Path(platformdirs.user_state_dir("cockpit")) / "notify.log"


class Notifier:
    """Delivers alerts to the configured channels; failures go to ``log_path``.

    ``send`` blocks (up to the timeout per channel and alert); ``dispatch`` runs it
    in a daemon thread and returns the thread (tests join it). Alerts below
    ``config.min_severity`` are not sent.
    """

    def __init__(
        self, config: NotifyConfig, log_path: str | os.PathLike[str] | None = None
    ) -> None:
        self.config = config
        self.log_path = Path(log_path) if log_path is not None else default_notify_log()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        # told of every delivery (cockpit watch's /metrics counts them); must not raise
        self.on_result: Callable[[NotifyResult], None] | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.config.webhook or self.config.notify_command)

    def wanted(self, alert: Alert) -> bool:
        return SEVERITY_RANK[alert.severity] <= SEVERITY_RANK[self.config.min_severity]

    def send(self, alerts: Sequence[Alert]) -> list[NotifyResult]:
        results: list[NotifyResult] = []
        c = self.config
        for a in alerts:
            if not self.wanted(a):
                continue
            if c.webhook:
                results.append(post_webhook(c.webhook, a, c.webhook_template, c.timeout_s))
            if c.notify_command:
                results.append(run_command(c.notify_command, a, c.timeout_s))
        if self.on_result is not None:
            for r in results:
                self.on_result(r)
        self._log([r for r in results if not r.ok])
        return results

    def dispatch(self, alerts: Sequence[Alert]) -> threading.Thread | None:
        """Send in a background daemon thread; None when there is nothing to do."""
        todo = [a for a in alerts if self.wanted(a)]
        if not todo or not self.enabled:
            return None
        t = threading.Thread(target=self.send, args=(todo,), name="cockpit-notify", daemon=True)
        t.start()
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        return t

    def join(self, timeout: float | None = None) -> None:
        """Wait for deliveries still in flight (``cockpit watch --once`` before it exits)."""
        for t in list(self._threads):
            t.join(timeout)

    def _log(self, failures: Sequence[NotifyResult]) -> None:
        if not failures:
            return
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        # webhook URLs carry robot tokens, and errors quote them
        text = redact("".join(f"{stamp} {r.channel}: {r.error}\n" for r in failures))
        try:
            with self._lock:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(text)
        except OSError:
            pass  # nowhere left to report it without touching stderr; the results still say it
