"""Start-up path of ``cockpit --demo``: what it imports before the first frame, and that
what it defers (subcommand parsers, config, cockpit.watch) still ends up where it did."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from cockpit import cli
from cockpit.app import CockpitApp
from cockpit.commands.tui import _demo_watch
from cockpit.demo.site import demo_sources
from cockpit.store.acks import AckStore
from cockpit.watch.baseline import BaselineStore
from tests.ui_support import frozen, small_site

TUI_ARGVS = [
    [],
    ["--demo"],
    ["--demo", "--no-bell"],
    ["--config", "snapshot"],
    ["--config=F", "--demo-seed=5"],
    ["--demo-seed", "3", "--demo"],
]


@pytest.mark.parametrize("argv", TUI_ARGVS)
def test_tui_parser_reads_the_same_options_as_the_full_parser(argv):
    assert cli._tui_only(argv)
    assert vars(cli.build_parser(argv).parse_args(argv)) == vars(
        cli.build_parser().parse_args(argv)
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["snapshot"],
        ["--demo", "diagnose", "1"],
        ["-h"],
        ["--h"],
        ["--hel"],
        ["--conf", "x"],
        ["--", "x"],
    ],
)
def test_anything_but_top_level_options_gets_every_subcommand(argv):
    assert not cli._tui_only(argv)
    sub = cli.build_parser(argv)._subparsers._group_actions[0]  # noqa: SLF001
    assert {"snapshot", "diagnose", "check-config"} <= set(sub.choices)


def test_unknown_option_is_the_same_error_with_or_without_subcommands(capsys):
    with pytest.raises(SystemExit) as light:
        cli.main(["--bogus"])
    err_light = capsys.readouterr().err
    with pytest.raises(SystemExit) as full:
        cli.build_parser().parse_args(["--bogus"])
    assert light.value.code == full.value.code == 2
    assert err_light == capsys.readouterr().err
    assert "unrecognized arguments: --bogus" in err_light


def test_demo_start_up_imports_no_subcommand_config_watch_or_sdk():
    # what `cockpit --demo` runs before App.run(), in a fresh interpreter
    probe = (
        "import sys, json, cockpit.cli as c\n"
        "a = c.build_parser(['--demo']).parse_args(['--demo'])\n"
        "from cockpit.commands import tui\n"
        "import cockpit.app\n"
        "from cockpit.connect import select_sources\n"
        "tui.banner_for(a); select_sources(a, clock=tui.demo_clock())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    mods = set(json.loads(out))
    assert "cockpit.app" in mods  # the probe did run the path
    assert {m for m in mods if m.startswith("cockpit.commands.")} == {"cockpit.commands.tui"}
    assert not {
        m
        for m in mods
        if m == "cockpit.config" or m.startswith(("cockpit.watch", "huaweicloudsdk"))
    }


async def test_demo_watcher_and_baselines_are_attached_before_the_first_poll(tmp_path):
    app = CockpitApp(
        demo_sources(7, clock=frozen),
        clock=frozen,
        acks=AckStore(tmp_path / "s.json"),
        bell=False,
        late=_demo_watch,
    )
    assert (
        app.hub.watcher is None and app.hub.baselines is None
    )  # nothing imported for the first frame
    async with app.run_test(size=(120, 40)):
        await app.hub.first_round.wait()
        assert (
            app.hub.watcher is not None and app.hub.watcher.history is None
        )  # demo: in memory only
        assert app.hub.baselines is not None and not app.hub.baselines.store.persist


async def test_given_baseline_store_is_the_one_recorded_into(tmp_path):
    store = BaselineStore(tmp_path / "b.json")
    app = CockpitApp(
        [small_site()],
        clock=frozen,
        acks=AckStore(tmp_path / "s.json"),
        bell=False,
        baselines=store,
    )
    async with app.run_test(size=(120, 40)):
        await app.hub.first_round.wait()
        assert app.hub.baselines.store is store


def test_main_passes_its_argv_to_the_parser(monkeypatch):
    seen = []
    real = cli.build_parser

    def spy(argv=None):
        seen.append(argv)
        return real(argv)

    monkeypatch.setattr(cli, "build_parser", spy)
    monkeypatch.setattr(sys, "argv", ["cockpit", "--demo-seed", "x"])
    with pytest.raises(SystemExit):
        cli.main()  # invalid int: argparse exits 2 after reading sys.argv[1:]
    assert seen == [["--demo-seed", "x"]]
    assert isinstance(real([]), argparse.ArgumentParser)
