"""The heads in Chinese, chosen the usual way: ``LANG=zh_CN.UTF-8`` in the environment and no
``--lang``. ``cockpit incidents``, ``diagnose``, ``snapshot``, ``watch --json`` and a webhook's
body (a real HTTP receiver on 127.0.0.1) speak Chinese and carry the same facts as the English
run (job ids, node names, Slurm states and reasons, limits, sizes, times); ``--json`` keeps its
English keys and cause ids.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from .cli_support import run_cockpit

CJK = re.compile(r"[\u4e00-\u9fff]")
# facts as the platform prints them: job ids, node names, Slurm states (with their flags and
# reason codes), limits and sizes, clock times, exit codes
FACT = re.compile(
    r"\b(?:4[89]\d{3}|cn\d{3}|bm\d{2}|node-a100-\d|[A-Z]+(?:_[A-Z]+)+|FAILED|PENDING|RUNNING|"
    r"COMPLETED|CANCELLED|TIMEOUT|DRAIN|DOWN|MaxCPUsPerNode \d+|ReqMem \d+G|\d+\.\d+G|"
    r"\d\d:\d\d:\d\d|exit \d+|PartitionConfig|OutOfMemory|Kill task failed|Low RealMemory|"
    r"Not responding)\b"
)


# the alert titles the watcher writes (cockpit/watch/transitions.py), not an incident's title
MINE = re.compile(r"(?:job|node|training job) |\S+ on \S+ at |\d+ jobs of |\S+ unreachable")


CLOCK = re.compile(r"\b\d\d:\d\d:\d\d\b")


def _env(lang: str, tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    env.update(LANG=lang, TZ="UTC", XDG_STATE_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    return env


def _both(tmp_path, *argv: str) -> tuple[str, str]:
    """The command's stdout in English (LANG=en_US.UTF-8) and in Chinese (LANG=zh_CN.UTF-8)."""
    out = []
    for lang in ("en_US.UTF-8", "zh_CN.UTF-8"):
        r = run_cockpit("--demo", *argv, env=_env(lang, tmp_path / lang), timeout=180)
        assert r.returncode in (0, 1), r.stderr
        out.append(r.stdout)
    return out[0], out[1]


def _facts(text: str) -> list[str]:
    return sorted(FACT.findall(text))


@pytest.mark.parametrize(
    "argv",
    [
        ("incidents",),
        ("diagnose", "48101", "--cluster", "demo-hpc"),
        ("diagnose", "48102", "--cluster", "demo-hpc"),
        ("snapshot",),
    ],
    ids=" ".join,
)
def test_head_in_chinese_with_the_same_facts(tmp_path, argv):
    en, zh = _both(tmp_path, *argv)
    assert CJK.search(zh) and not CJK.search(en.replace("gpt2-zh", "")) or "snapshot" in argv
    if argv[0] == "snapshot":  # running jobs' elapsed times tick between the two runs
        en, zh = (CLOCK.sub("T", out) for out in (en, zh))
    assert _facts(zh) == _facts(en)
    assert len(zh.splitlines()) == len(en.splitlines())


def test_incidents_chinese_words(tmp_path):
    _en, zh = _both(tmp_path, "incidents")
    for word in ("个故障", "根因", "对象", "作业 48101 @demo-hpc", "节点 cn013 @demo-hpc"):
        assert word in zh, word


def test_snapshot_chinese_headers(tmp_path):
    _en, zh = _both(tmp_path, "snapshot")
    assert "# 作业" in zh and "作业ID\t名称" in zh


def test_json_keeps_keys_and_cause_ids(tmp_path):
    en, zh = _both(tmp_path, "incidents", "--json")
    e, z = json.loads(en)["incidents"], json.loads(zh)["incidents"]
    assert [i["root_cause"] for i in z] == [i["root_cause"] for i in e]
    assert [sorted(i) for i in z] == [sorted(i) for i in e]
    assert [i["subject"] for i in z] == [i["subject"] for i in e]
    never = next(i for i in z if i["root_cause"] == "pending_partition_limit")
    assert CJK.search(never["title"]) and "MaxCPUsPerNode 48" in never["title"]


def test_watch_json_human_fields_in_chinese(tmp_path):
    """``watch --once --json``: one JSON line per alert; rule, severity, subject and the
    finding's cause id as in English, the title (what a person reads) in Chinese with the
    English title's facts."""
    en, zh = _both(tmp_path, "watch", "--once", "--json")
    e = [json.loads(line) for line in en.splitlines()]
    z = [json.loads(line) for line in zh.splitlines()]
    assert len(z) == len(e) >= 10
    for a, b in zip(e, z, strict=True):
        assert sorted(a) == sorted(b)
        assert (b["rule"], b["severity"], b["subject"]) == (a["rule"], a["severity"], a["subject"])
        if a.get("finding"):
            assert b["finding"]["root_cause"] == a["finding"]["root_cause"]
        if MINE.match(a["title"]):  # the watcher's own words (a folded group's is the engine's)
            assert CJK.search(b["title"]), b["title"]
        assert _facts(b["title"]) == _facts(a["title"]), (a["title"], b["title"])


# a fresh interpreter, as `cockpit watch` sends alerts: the language from the environment
# (cockpit.cli.choose_language, no --lang), the demo's alerts, the real Notifier to the URL
_SEND = """
import sys
from cockpit import i18n
from cockpit.cli import choose_language
from cockpit.commands.alerts import demo_alerts
from cockpit.watch.alerts import NotifyConfig
from cockpit.watch.notify import Notifier
i18n.set_language(choose_language([]))
every = demo_alerts(7)
# a full /scratch, an OOM-killed job, a node drained
alerts = [next(a for a in every if a.rule == "storage"),
          next(a for a in every if a.finding and a.finding.root_cause == "oom_killed"),
          next(a for a in every if a.rule == "node_unhealthy" and "DRAIN" in a.title)]
cfg = NotifyConfig(webhook=sys.argv[1], webhook_template=sys.argv[2], timeout_s=10,
                   min_severity="info")
results = Notifier(cfg, log_path=sys.argv[3]).send(alerts)
assert all(r.ok for r in results), results
"""


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        n = int(self.headers.get("Content-Length", "0"))
        type(self).bodies.append(self.rfile.read(n))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"errcode": 0, "code": 0}')

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("template", ["dingtalk", "feishu", "generic"])
def test_webhook_body_in_chinese_with_the_same_facts(tmp_path, template):
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/robot"
    got = {}
    try:
        for lang in ("en_US.UTF-8", "zh_CN.UTF-8"):
            _Receiver.bodies = []
            r = subprocess.run(
                [sys.executable, "-c", _SEND, url, template, str(tmp_path / "notify.log")],
                capture_output=True,
                text=True,
                timeout=180,
                env=_env(lang, tmp_path / lang),
            )
            assert r.returncode == 0, r.stderr
            got[lang] = [json.loads(b) for b in _Receiver.bodies]
    finally:
        server.shutdown()
    en, zh = got["en_US.UTF-8"], got["zh_CN.UTF-8"]
    assert len(zh) == len(en) == 3

    def text(body: dict) -> str:
        if template == "dingtalk":
            return body["text"]["content"]
        if template == "feishu":
            return body["content"]["text"]
        return body["title"]

    for a, b in zip(en, zh, strict=True):
        assert CJK.search(text(b)), text(b)
        assert _facts(text(b)) == _facts(text(a)), (text(a), text(b))
        if template == "generic":  # machines' fields as in English
            assert (b["rule"], b["subject"]) == (a["rule"], a["subject"])
            assert b["finding"]["root_cause"] == a["finding"]["root_cause"]
        else:
            assert text(b).startswith(("[严重]", "[警告]")), text(b)
            assert any(kind in text(b) for kind in ("作业 ", "节点 ", "文件 ")), text(b)


def test_web_page_and_sessions_speak_the_servers_language():
    """``LANG=zh_CN.UTF-8 cockpit web``: the page's own words in Chinese, and each browser
    session's TUI (a process of its own) started in the server's language, not its default."""
    pytest.importorskip("textual_serve", reason="cockpit web needs textual-serve (the web extra)")
    import http.client
    from urllib.parse import urlsplit

    from cockpit.web import session

    argv = session.argv(
        who="x",
        config=None,
        demo=True,
        demo_seed=7,
        store_url=None,
        demo_epoch=None,
        actions=False,
        lang="zh",
    )
    assert argv[argv.index("--lang") + 1] == "zh"

    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "web", "--demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_env("zh_CN.UTF-8", os.environ.get("TMPDIR", "/tmp"))},
    )
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert url.startswith("http://"), proc.stderr.read()  # type: ignore[union-attr]
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        conn.request("GET", "/?" + parts.query)
        first = conn.getresponse()
        first.read()
        cookie = first.headers["Set-Cookie"].split(";")[0]
        conn.request("GET", "/", headers={"Cookie": cookie})
        page = conn.getresponse().read().decode()
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "开始" in page and "会话已结束" in page and "Session ended" not in page


def test_config_errors_in_chinese_name_file_line_and_key(tmp_path):
    """A wrong config read with LANG=zh_CN.UTF-8: the problem in Chinese, its file, line and
    key as in English (what to open and fix), exit 2 both ways."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('[clusters.ehpc]\nhost = "login01"\nport = 70000\n')
    out = {}
    for lang in ("en_US.UTF-8", "zh_CN.UTF-8"):
        r = run_cockpit("check-config", "--config", str(cfg), env=_env(lang, tmp_path / lang))
        assert r.returncode == 2, r.stderr
        out[lang] = (r.stdout + r.stderr).strip()
    en, zh = out["en_US.UTF-8"], out["zh_CN.UTF-8"]
    assert "port 70000 is out of range" in en
    assert "端口 70000 超出范围" in zh
    where = f"{cfg}:3: [clusters.ehpc.port]"
    assert where in en and where in zh


def test_incident_keys_are_the_same_in_every_language(capsys):
    """A Chinese TUI and an English `watch` share one store: a group incident's key came from
    its title, so the two languages kept two incidents (and two acks) for one failure."""
    from cockpit.cli import main

    keys = {}
    for lang in ("en", "zh"):
        main(["incidents", "--demo", "--json", "--lang", lang])
        data = json.loads(capsys.readouterr().out)
        items = data if isinstance(data, list) else data["incidents"]
        keys[lang] = sorted(i["key"] for i in items)
    assert any(k.startswith("group|") for k in keys["en"])  # the demo has a group incident
    assert keys["zh"] == keys["en"]
