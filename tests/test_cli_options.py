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
