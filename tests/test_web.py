"""``cockpit web``: the cockpit in a browser, behind its token, one poller for every tab.

Each test starts ``cockpit web --demo`` as a user does (a fresh interpreter, a free loopback
port) and talks to it over HTTP, or drives Debian's ``chromium`` headless through Playwright
(the system browser, never ``playwright install``). The browser tests skip, saying why, where
chromium or playwright is missing; CI installs both (.ci/run, the ``test`` extra).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cli_support import run_cockpit

pytest.importorskip("textual_serve", reason="cockpit web needs textual-serve (the web extra)")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _browser_missing() -> str:
    if not Path(CHROMIUM).exists():
        return "no chromium (Debian: apt-get install chromium; CI installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no playwright (pip install playwright; the test extra has it)"
    return ""


needs_browser = pytest.mark.skipif(bool(_browser_missing()), reason=_browser_missing() or "-")

# xterm.js draws with WebGL when it can; without it, it falls back to its DOM renderer, whose
# rows (.xterm-rows) hold the terminal's text: the test reads what the browser shows there
DOM_RENDERER = """
(() => {
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
    if (kind === "webgl" || kind === "webgl2" || kind === "experimental-webgl") return null;
    return getContext.call(this, kind, ...rest);
  };
})();
"""


@contextlib.contextmanager
def serving(
    *extra: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``cockpit web --demo --port 0 EXTRA``: (the URL it printed, the process); stopped with
    SIGTERM as systemd would, and checked to exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "web", "--demo", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not url.startswith("http://"):
            proc.kill()
            raise AssertionError(f"no URL printed: {proc.communicate()[1]}")
        yield url, proc
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def get(url: str, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp


def test_every_request_needs_the_token_and_the_page_trades_it_for_a_strict_cookie():
    with serving() as (url, _proc):
        assert url.startswith("http://127.0.0.1:")  # loopback unless --host says otherwise
        token = urlsplit(url).query.removeprefix("token=")
        assert len(token) >= 32  # random, and long enough not to be guessed
        for path in ("/", "/ws", "/static/js/textual.js", "/?token=" + token[:-1] + "x"):
            assert get(url, path).status == 403, path

        first = get(url, "/?token=" + token)
        assert first.status == 303 and first.headers["Location"] == "/"  # token off the URL
        cookie = first.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        pair = cookie.split(";")[0]
        page = get(url, "/", {"Cookie": pair})
        assert page.status == 200
        assert get(url, "/static/js/textual.js", {"Cookie": pair}).status == 200
        # a page of another site cannot open the session's websocket with the cookie
        ws = {"Cookie": pair, "Origin": "http://evil.example", "Upgrade": "websocket"}
        assert get(url, "/ws", ws).status == 403


def test_a_fixed_token_from_a_file_and_the_errors_a_user_makes(tmp_path):
    good = tmp_path / "token"
    good.write_text("correct-horse-battery-staple\n")
    good.chmod(0o600)
    with serving("--token-file", str(good)) as (url, _proc):
        assert url.endswith("?token=correct-horse-battery-staple")
        assert get(url, "/?token=correct-horse-battery-staple").status == 303

    short = tmp_path / "short"
    short.write_text("abc\n")
    for argv, says in (
        (["--token-file", str(tmp_path / "absent")], "No such file"),
        (["--token-file", str(short)], "too short"),
    ):
        res = run_cockpit("web", "--demo", "--port", "0", *argv, timeout=60)
        assert res.returncode == 2, res.stderr
        assert says in res.stderr and "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


def test_a_port_in_use_is_one_line_and_exit_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = run_cockpit("web", "--demo", "--port", str(port), timeout=60)
    assert res.returncode == 2
    assert (
        res.stderr.strip() == f"cockpit: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert res.stdout == ""  # no URL for a server that is not there


def test_binding_beyond_loopback_warns_and_names_the_reverse_proxy():
    with serving("--host", "0.0.0.0") as (_url, proc):
        pass
    err = proc.stderr.read()  # type: ignore[union-attr]
    assert "not loopback" in err and "reverse proxy" in err and "TLS" in err
    # it names the page with the nginx and Caddy examples, and that page exists
    assert "docs/WEB.md" in err
    assert "nginx" in (Path(__file__).parent.parent / "docs/WEB.md").read_text(encoding="utf-8")


def test_without_textual_serve_it_says_which_extra_to_install():
    script = (
        "import sys; sys.modules['textual_serve'] = None\n"  # as if it were not installed
        "from cockpit.cli import main; raise SystemExit(main(['web', '--demo']))"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == (
        "cockpit: cockpit web needs textual-serve: pip install -e '.[web]' in the cockpit's "
        "clone (or pip install textual-serve)"
    )


def test_sessions_beyond_max_sessions_are_turned_away():
    import asyncio

    import aiohttp

    async def two_tabs(url: str) -> tuple[bool, int]:
        token = urlsplit(url).query.removeprefix("token=")
        base = url.split("/?")[0]
        # unsafe: keep cookies of an IP address, as browsers do
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(f"{base}/?token={token}") as page:  # the cookie, as a browser
                assert page.status == 200
            async with http.ws_connect(f"{base}/ws?width=80&height=24") as first:
                got = await first.receive(timeout=60)  # the TUI's first bytes
                try:
                    async with http.ws_connect(f"{base}/ws?width=80&height=24"):
                        return got.type == aiohttp.WSMsgType.BINARY, 101
                except aiohttp.WSServerHandshakeError as exc:
                    return got.type == aiohttp.WSMsgType.BINARY, exc.status

    with serving("--max-sessions", "1") as (url, _proc):
        first_drew, second = asyncio.run(two_tabs(url))
    assert first_drew and second == 503


# --------------------------------------------------------------------------- in a browser


def screen(page) -> str:
    return page.evaluate("() => document.querySelector('.xterm-rows')?.innerText ?? ''")


def until(page, ok: Callable[[str], bool], timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = screen(page)
        if ok(text):
            return text
        time.sleep(0.25)
    raise AssertionError(f"the page never showed it; it shows:\n{text}")


@contextlib.contextmanager
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(chromium, url: str):
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.add_init_script(DOM_RENDERER)
    page.goto(url)
    until(page, lambda t: "demo-hpc" in t and "Queue" in t)
    page.focus(".xterm-helper-textarea")  # keys go to the terminal, as after a click
    return page


@needs_browser
def test_in_chromium_i_then_enter_opens_the_top_incident_read_only():
    with serving() as (url, _proc), browser() as chromium:
        page = open_page(chromium, url)
        assert "read-only" in screen(page) and "following the store" in screen(page)

        page.keyboard.press("i")
        incidents = until(page, lambda t: "SEV" in t and "\nCRIT " in t)
        top = next(ln for ln in incidents.splitlines() if ln.startswith("CRIT"))
        # the demo's story: the top incident is job 48101, which asks more CPUs than a node has
        assert "job 48101" in top and "MaxCPUsPerNode 48" in top

        page.keyboard.press("Enter")
        drill = until(page, lambda t: "Findings and evidence" in t)
        assert "job 48101 @demo-hpc" in drill.splitlines()[0]
        assert "never runs: 64 CPUs > MaxCPUsPerNode 48" in drill
        assert "scontrol show partition" in drill  # the evidence, as the poller captured it

        page.keyboard.press("a")  # actions: refused in a browser unless [web] actions = true
        until(page, lambda t: "actions are off" in t)


@needs_browser
@pytest.mark.slow
def test_ten_browser_tabs_cost_the_demo_one_squeue_per_interval(tmp_path):
    polls = tmp_path / "squeue.log"
    with (
        serving(env={"COCKPIT_DEMO_POLL_LOG": str(polls)}) as (url, proc),
        browser() as chromium,
    ):
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        context.add_init_script(DOM_RENDERER)
        pages = [context.new_page() for _ in range(10)]
        for page in pages:
            page.goto(url)
        for page in pages:  # every tab shows the site, read from the store
            until(page, lambda t: "demo-hpc" in t and "following the store" in t, timeout=120)
        start = time.time()
        time.sleep(35)  # two intervals and more of the demo cluster (15 s)
        window = time.time() - start
        lines = [ln.split(maxsplit=2) for ln in polls.read_text().splitlines()]
        for page in pages:  # still live after the window
            assert "demo-hpc" in screen(page)
        context.close()

    pids = {int(pid) for pid, _at, _what in lines}
    assert pids == {proc.pid}  # only cockpit web polls: the ten TUIs never ran squeue
    # a poll's squeue lists every job (--states=all); the running jobs' output paths are asked
    # for by another, narrower one
    during = [
        float(at)
        for _pid, at, what in lines
        if "--states=all" in what and start <= float(at) <= start + window
    ]
    # one poll per 15 s interval, not ten: 35 s hold two or three
    assert 2 <= len(during) <= window / 15 + 1, during


@needs_browser
def test_with_web_actions_on_a_browser_action_is_audited_under_its_session(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[web]\nactions = true\n")
    journal = Path(os.environ["XDG_STATE_HOME"]) / "cockpit" / "audit-demo.jsonl"
    with serving("--config", str(config)) as (url, proc), browser() as chromium:
        page = open_page(chromium, url)
        assert "read-only" not in screen(page).splitlines()[0]
        page.keyboard.press("i")
        until(page, lambda t: "SEV" in t and "\nCRIT " in t)
        page.keyboard.press("Enter")  # job 48101, pending
        until(page, lambda t: "Findings and evidence" in t)
        page.keyboard.press("a")
        until(page, lambda t: "Act on job 48101" in t)
        page.keyboard.press("Enter")  # the likely action of a pending job first: hold
        until(page, lambda t: "will run: scontrol hold 48101" in t)
        page.keyboard.press("Enter")
        until(page, lambda t: "enter or esc: close" in t)  # it ran; the result is shown
    opened = next(ln for ln in proc.stderr.read().splitlines() if "web session" in ln)  # type: ignore[union-attr]
    session = opened.split("web session ")[1].split()[0]
    entries = [json.loads(ln) for ln in journal.read_text().splitlines()]
    assert [e["action"] for e in entries] == ["hold", "hold"]  # issued, then its outcome
    for e in entries:
        assert e["subject"] == "job 48101" and e["command"] == "scontrol hold 48101"
        assert f"via web {session} from 127.0.0.1" in e["who"]
