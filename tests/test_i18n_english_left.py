"""No English prose left where the cockpit speaks Chinese: every screen of the demo drawn in
Chinese (headless, 80x24 and 160x48) and the plain output of every command with ``--lang zh``.

English prose is a run of three or more lowercase English words (tests/i18n_support.py); it
passes only when it is a fact the platform printed or the diagnosis engine's text (the
engine's own catalogue and tests answer for those), so a screen, key bar, status line,
dialog or command that forgot ``_()`` fails here with the words it left. Evidence lines the
engine wrote itself (not quoted from a log, an event or a command) are no facts: they are
checked like the screens' own text.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from unittest import mock

import pytest

from cockpit import i18n
from cockpit.cli import main
from cockpit.model import Subject

from .cli_support import run_cockpit
from .i18n_support import engine_wrote, english_left, strings_in, written_out
from .test_ui_snapshots import _settle, demo_app, utc_local_time  # noqa: F401 (fixture)

ZH = {"LANG": "zh_CN.UTF-8", "TZ": "UTC"}


@pytest.fixture(autouse=True)
def chinese():
    i18n.set_language("zh")
    yield
    i18n.set_language("en")


def _text(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _facts(app) -> list[str]:
    """What the platform and the engine said: snapshots, findings, drill-down artifacts (logs,
    evidence), the incidents' findings; not the verdicts and rows the screens make of them,
    nor the evidence lines the engine wrote (the cockpit's words, to be said in Chinese)."""
    objs: list[object] = []
    for st in app.hub.states.values():
        objs += [st.snapshot, st.findings, st.artifact_cache]
    objs.append(app.hub.incidents)
    for screen in app.screen_stack:
        for attr in ("logs", "findings", "rightsize"):  # rightsize: the engine's words
            objs.append(getattr(screen, attr, None))
    for view in app.screen.query("LogView"):  # the log's own lines, as the viewer read them
        objs.append(dict(getattr(view, "_cache", {})))
    return strings_in(*objs, skip=engine_wrote)


def _job(p):
    p.app.open_subject(Subject("job", "demo-hpc", "48102"))
    return _settle(p, lambda a: bool(getattr(a.screen, "logs", None)))


async def _log(p):
    await _job(p)
    await p.press("l")
    await _settle(p, lambda a: getattr(a.screen.query("LogView").first(), "_done", 0))


async def _node(p):
    p.app.open_subject(Subject("node", "demo-hpc", "cn013"))
    await _settle(p)


async def _training(p):
    snap = p.app.hub.states["demo-modelarts"].snapshot
    stuck = next(t for t in snap.training_jobs if t.console_phase == "Initializing")
    p.app.open_subject(Subject("training_job", "demo-modelarts", stuck.job_id))
    await _settle(p, lambda a: bool(getattr(a.screen, "logs", None)))


async def _pool(p):
    pool = next(i.subject for i in p.app.hub.incidents if i.subject.kind == "pool")
    p.app.open_subject(pool)
    await _settle(p)


def _keys(*keys):
    async def run(p):
        await p.press(*keys)
        await _settle(p)

    return run


async def _action_menu(p):
    p.app.open_subject(Subject("node", "demo-hpc", "bm01"))
    await _settle(p)
    await p.press("a")
    await p.pause(0.2)


async def _guarded(p):
    await _action_menu(p)
    await p.press("enter", *"fan FAN2 failed")
    await p.pause(0.2)


async def _nothing(p):
    return None


SCREENS = {
    "dashboard": _nothing,
    "incidents": _keys("i"),
    "members": _keys("i", "m"),
    "job": _job,
    "log": _log,
    "node": _node,
    "training_job": _training,
    "pool": _pool,
    "pools": _keys("P"),
    "fleet": _keys("F"),
    "alerts": _keys("A"),
    "help": _keys("f1"),
    "columns": _keys("c"),
    "filter": _keys("slash"),
    "palette": _keys("ctrl+p"),
    "actions": _action_menu,
    "guarded_action": _guarded,
}


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(SCREENS))
async def test_screen_has_no_english_prose(tmp_path, screen, size):
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await _settle(pilot)
        await SCREENS[screen](pilot)
        left = english_left(_text(app), _facts(app))
    assert not left, f"{len(left)} English runs on the {screen} screen: " + "; ".join(left[:8])


# ------------------------------------------------------------------ the commands


def json_facts(*argv: str) -> list[str]:
    """The demo's facts and the engine's texts as ``cockpit --demo --lang zh ARGV`` writes
    them in JSON, but the evidence lines the engine wrote (which the JSON does not tell from
    quoted lines: the findings written out do). Run in this process to see those findings."""
    out = io.StringIO()
    try:
        with written_out() as findings, redirect_stdout(out):
            main(["--demo", "--lang", "zh", *argv])
    finally:
        i18n.set_language("zh")
    evidence = [e for f in findings for e in f.evidence]
    quoted = {e.text for e in evidence if not engine_wrote(e)}
    wrote = {e.text for e in evidence if engine_wrote(e)} - quoted
    return [s for s in strings_in(json.loads(out.getvalue())) if s not in wrote]


@pytest.fixture(scope="module")
def cli_facts(tmp_path_factory):
    """The facts of ``incidents --json`` and ``snapshot --json``, in a state and config folder
    of their own (a module fixture runs before the per-test ones that set them)."""
    env = {k: str(tmp_path_factory.mktemp(k)) for k in ("XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    with mock.patch.dict(os.environ, env):
        return json_facts("incidents", "--json") + json_facts("snapshot", "--json")


COMMANDS = [
    ("--help",),
    ("snapshot",),
    ("snapshot", "--help"),
    ("incidents",),
    ("incidents", "--markdown"),
    ("diagnose", "48101", "--cluster", "demo-hpc"),
    ("diagnose", "48102", "--cluster", "demo-hpc"),
    ("diagnose", "--training-job", "qwen-7b-sft-a100", "--modelarts", "demo-modelarts"),
    ("watch", "--once"),
    ("alerts",),
    ("check-config",),
    ("scan-log", "--help"),
    ("collect", "--help"),
    ("web", "--help"),
    ("watch", "--help"),
    ("diagnose", "--help"),
    ("incidents", "--help"),
    ("alerts", "--help"),
    ("check-config", "--help"),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_command_has_no_english_prose(argv, cli_facts, tmp_path, monkeypatch):
    """What the command prints on stdout (stderr also carries libraries' own warnings)."""
    env = {**ZH, "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    r = run_cockpit("--demo", "--lang", "zh", *argv, env=env, timeout=120)
    assert r.returncode in (0, 1, 2), r.stderr
    facts = list(cli_facts)
    if argv[0] == "diagnose" and "--help" not in argv:  # its drill-down's own findings
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        facts += json_facts(*argv, "--json")
    left = english_left(r.stdout.splitlines(), facts)
    shown = "; ".join(left[:8])
    assert not left, f"{len(left)} English runs in cockpit {' '.join(argv)}: {shown}"
