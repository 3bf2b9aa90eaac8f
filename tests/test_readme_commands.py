"""Every command of the README's command table runs on the demo site (``--demo``).

The table is read from README.md, so a row added there without a working command fails here.
Placeholders become demo values; optional ``[...]`` parts are included (the first alternative
of ``[a | b]``) so ``watch [--once]`` does not loop forever.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cockpit.cli import main

README = Path(__file__).parent.parent / "README.md"
STUCK_MOUNT = "5b1c0a4e-7d21-4f3a-9c11-000000000001"


def readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    table = text.split("## Command line", 1)[1].split("\n\n", 2)[1]
    cmds = re.findall(r"^\| `(cockpit[^`]*)` \|", table, re.M)
    assert len(cmds) >= 10, cmds
    return cmds


def demo_argv(cmd: str, bundle: Path) -> list[str]:
    cmd = cmd.replace("\\|", "|")
    cmd = re.sub(r"\[([^\]|]+?)(?:\s*\|[^\]]*)?\]", r"\1", cmd)  # [--json | --markdown] -> --json
    subs = {
        "JOBID": "48102",
        "--cluster N": "--cluster demo-hpc",
        "--modelarts N": "--modelarts demo-modelarts",
        "--training-job NAME_OR_ID": "--training-job detr-coco-obs",
        "DIR": str(bundle),
        "FILE": str(bundle / "slurm-48102.out"),
    }
    for k, v in subs.items():
        cmd = cmd.replace(k, v)
    return [*shlex.split(cmd)[1:], "--demo"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "b"
    assert main(["collect", "48102", "--demo", "--cluster", "demo-hpc", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize(
    "cmd", [c for c in readme_commands() if c != "cockpit"]
)  # bare `cockpit` is the TUI
def test_readme_command_runs_on_the_demo(cmd, bundle, capsys):
    argv = demo_argv(cmd, bundle)
    if argv[0] == "collect":
        argv[argv.index("--out") + 1] = str(bundle.parent / "again")
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc in (0, 1), (argv, err)  # 1 = a critical finding / an alert fired, as documented
    assert "Traceback" not in err and out.strip(), argv
