"""Common options work before and after the subcommand (argparse must not drop them)."""

from __future__ import annotations

import pytest

from cockpit.cli import main


@pytest.mark.parametrize("order", ["before", "after"])
def test_config_is_honoured_on_either_side_of_the_subcommand(order, tmp_path, capsys):
    bad = tmp_path / "typo.toml"
    bad.write_text("[clusters.lab]\nprot = 3\n")
    argv = (
        ["--config", str(bad), "snapshot"]
        if order == "before"
        else ["snapshot", "--config", str(bad)]
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "typo.toml:2" in err and "prot" in err


def test_missing_config_given_explicitly_is_an_error_not_the_demo(tmp_path, capsys):
    assert main(["--config", str(tmp_path / "nope.toml"), "check-config"]) == 2
    assert "nope.toml" in capsys.readouterr().err


def test_demo_flag_before_the_subcommand(capsys):
    assert main(["--demo", "snapshot", "--json"]) == 0
    assert '"demo-hpc"' in capsys.readouterr().out


def test_check_configs_poll_asks_no_evidence_of_the_cluster():
    """check-config asks whether each source answers: no sacct, scontrol or log read for the
    failed jobs it happens to see (the incidents command's evidence round is not its job)."""
    import asyncio

    from cockpit.commands.snapshot import poll_all
    from tests.test_store_tui import failed_job
    from tests.ui_support import FakeSource

    class Counting(FakeSource):
        asked = 0

        async def artifacts(self, subject, snapshot):
            Counting.asked += 1
            return await super().artifacts(subject, snapshot)

    (snap,) = asyncio.run(poll_all([Counting("lab", jobs=(failed_job("20"),))], 30.0))
    assert snap.error is None and [j.job_id for j in snap.jobs] == ["20"]
    assert Counting.asked == 0


def test_every_commands_help_opens_with_a_plain_description():
    """`cockpit X --help` starts with a sentence: no reStructuredText quoting, none empty."""
    import argparse

    from cockpit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        text = p.format_help()
        assert p.description, name
        assert "``" not in text, (name, text[:300])
