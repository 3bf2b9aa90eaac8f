"""Every command of the README's command table runs on the demo site (``--demo``).

The table is read from README.md, so a row added there without a working command fails here.
Placeholders become demo values; optional ``[...]`` parts are included (the first alternative
of ``[a | b]``) so ``watch [--once]`` does not loop forever.
"""

from __future__ import annotations

import inspect
import json
import re
import shlex
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.demo.scenarios import SCENARIOS
from cockpit.watch.alerts import RULES

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


def _json(out: str):
    return json.loads(out)


def _first_finding(out: str) -> dict:
    return _json(out)["findings"][0]


def _label(scenario: str) -> tuple[str, str]:
    """(subject id, root cause) the demo's scenario table promises."""
    _, sid, label = SCENARIOS[scenario]
    return sid, label


def check_snapshot(rc: int, out: str, bundle: Path) -> None:
    assert rc == 0  # every source answered
    snaps = {s["source"]: s for s in _json(out)}
    assert set(snaps) == {"demo-hpc", "demo-modelarts"}
    node, _ = _label("slurm-kill-task-failed")
    drained = {n["name"]: n for n in snaps["demo-hpc"]["nodes"]}[node]
    assert "Kill task failed" in drained["reason"]  # the full DRAIN reason, as the table says
    assert any(j["job_id"] == "48102" for j in snaps["demo-hpc"]["jobs"])
    assert any(t["job_id"] == STUCK_MOUNT for t in snaps["demo-modelarts"]["training_jobs"])


def check_diagnose(rc: int, out: str, bundle: Path, argv: list[str]) -> None:
    first = _first_finding(out)
    if "--training-job" in argv:
        sid, label = _label("ma-mount-access-denied")
        assert (rc, first["root_cause"]) == (1, label) and sid in first["subject"]
    elif argv[1].endswith(".out"):  # one log file: the job's own red line, a symptom
        _, label = _label("slurm-oom")
        assert first["root_cause"] == label and "48102" in first["subject"]
        assert "slurm-48102.out:" in first["title"]  # says where in the file
    else:  # the live job and its collected bundle: the same critical cause
        sid, label = _label("slurm-oom")
        assert (rc, first["root_cause"], first["severity"]) == (1, label, "critical")
        assert first["subject"] == f"job {sid}"


def check_collect(rc: int, out: str, bundle: Path, argv: list[str]) -> None:
    target = Path(argv[argv.index("--out") + 1])
    assert rc == 0
    written = {Path(line).name for line in out.split()}
    assert {"squeue.txt", "sacct.txt", "slurm-48102.out", "slurmctld.log"} <= written
    assert all((target / name).is_file() for name in written)


def check_incidents(rc: int, out: str, bundle: Path) -> None:
    assert rc == 1  # the demo has critical incidents nobody acknowledged
    incidents = _json(out)["incidents"]
    rank = {"critical": 0, "warning": 1, "info": 2}
    severities = [rank[i["severity"]] for i in incidents]
    assert severities == sorted(severities)  # most severe first
    # every scenario's cause is there, as an incident or a finding grouped under one
    causes = {i["root_cause"] for i in incidents}
    causes |= {f["root_cause"] for i in incidents for f in i.get("findings", [])}
    assert causes >= {label for _, _, label in SCENARIOS.values()}


def check_scan_log(rc: int, out: str, bundle: Path) -> None:
    _, label = _label("slurm-oom")
    assert rc == 0  # as grep: an error line was found
    first = out.splitlines()[0]
    assert first.startswith(f"{bundle / 'slurm-48102.out'}:") and label in first


def check_alerts(rc: int, out: str, bundle: Path) -> None:
    assert rc == 0
    rules = {line.split()[3] for line in out.splitlines() if line.strip()}
    assert {"job_failed", "storage"} <= rules


def check_watch(rc: int, out: str, bundle: Path) -> None:
    assert rc == 1  # --once: something fired (the demo remembers nothing)
    alerts = [json.loads(line) for line in out.splitlines()]
    node, _ = _label("slurm-kill-task-failed")
    assert all(a["rule"] in RULES for a in alerts)
    assert any(a["rule"] == "node_unhealthy" and a["subject"]["id"] == node for a in alerts)


def check_check_config(rc: int, out: str, bundle: Path) -> None:
    assert rc == 2 and "nothing to check" in out and "demo" in out  # no config to check


CHECKS = {
    "snapshot": check_snapshot,
    "diagnose": check_diagnose,
    "collect": check_collect,
    "incidents": check_incidents,
    "scan-log": check_scan_log,
    "alerts": check_alerts,
    "watch": check_watch,
    "check-config": check_check_config,
}


@pytest.mark.parametrize(
    "cmd", [c for c in readme_commands() if c != "cockpit"]
)  # bare `cockpit` is the TUI
def test_readme_command_runs_on_the_demo(cmd, bundle, capsys):
    argv = demo_argv(cmd, bundle)
    if argv[0] == "collect":
        argv[argv.index("--out") + 1] = str(bundle.parent / "again")
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, argv
    check = CHECKS.get(argv[0])
    assert check is not None, f"{cmd}: a README command this test does not know what to expect of"
    params = inspect.signature(check).parameters
    check(rc, out, bundle, *([argv] if "argv" in params else []))
