"""Every command piped, as `kubectl get` / `sacct -P` users expect: plain lines (no colour
codes, no box drawing, nothing centred), whole values (no "…" cut), the same bytes whether the
terminal around the pipe is 80 columns wide or COLUMNS is unset (a pipe has no width), and the
exit status of the one scheme (cockpit/errors.py; `scan-log` as grep's)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).parent / "fixtures" / "cases"
OOM_BUNDLE = CASES / "001-slurm-oom-batch-step-killed"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\]")
BOX = re.compile(r"[─━│┃┌┐└┘├┤┬┴┼╭╮╰╯┏┓┗┛┡┩╇═║]")


def _clean_log(tmp: Path) -> Path:
    log = tmp / "clean.out"
    log.write_text("epoch 1 loss 0.91\nepoch 2 loss 0.52\ntraining done\n")
    return log


def _oom_log() -> Path:
    return next(p for p in sorted(OOM_BUNDLE.rglob("*")) if p.is_file() and "slurm" in p.name)


# (argv, exit status the scheme says for the demo site)
COMMANDS = {
    "snapshot": (["snapshot", "--demo"], 0),
    "incidents": (["incidents", "--demo"], 1),  # critical incidents open
    "diagnose-site": (["diagnose", "--demo"], 1),  # the same overview, the same status
    "diagnose-job": (["diagnose", "48101", "--demo"], 1),  # never runs: critical
    "diagnose-healthy-job": (["diagnose", "49267", "--demo"], 0),  # a RUNNING job, fine
    "diagnose-bundle": (["diagnose", "--bundle", str(OOM_BUNDLE)], 1),
    "scan-log-found": (["scan-log", "{oom_log}"], 0),  # as grep: 0 = a line found
    "scan-log-clean": (["scan-log", "{clean_log}"], 1),
    "alerts": (["alerts", "--demo"], 0),  # the history, read: nothing to act on by itself
    "watch-once": (["watch", "--demo", "--once"], 1),  # it alerted
    "collect": (["collect", "48102", "--demo", "--out", "{tmp}/bundle-{width}"], 0),
    # a real config whose one cluster does not answer (port 1): valid file, no source answered
    "check-config": (["check-config", "--config", "{unreachable}"], 3),
}

UNREACHABLE = """[clusters.lab]
host = "127.0.0.1"
port = 1
user = "root"
known_hosts = "none"
insecure_ignore_host_key = true
connect_timeout = 2
"""


def _run(argv: list[str], tmp: Path, columns: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "LANG", "LC_ALL")}
    env |= {"XDG_STATE_HOME": str(tmp / "state"), "XDG_CONFIG_HOME": str(tmp / "config")}
    if columns is not None:
        env["COLUMNS"] = columns
    config = tmp / "unreachable.toml"
    config.write_text(UNREACHABLE)
    subs = {
        "unreachable": str(config),
        "oom_log": str(_oom_log()),
        "clean_log": str(_clean_log(tmp)),
        "tmp": str(tmp),
        "width": columns or "unset",
    }
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *(a.format(**subs) for a in argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_piped_output_is_plain_whole_and_width_free(name, tmp_path):
    argv, status = COMMANDS[name]
    wide = _run(argv, tmp_path, None)
    narrow = _run(argv, tmp_path, "80")
    for proc in (wide, narrow):
        assert proc.returncode == status, (proc.returncode, proc.stderr[-800:])
        assert "Traceback" not in proc.stderr
        out = proc.stdout
        assert out.strip(), f"{name}: nothing printed"
        assert not ANSI.search(out), f"{name}: colour codes in a pipe"
        assert not BOX.search(out), f"{name}: box drawing in a pipe"
        assert "…" not in out, f"{name}: a value was cut: " + next(
            ln for ln in out.splitlines() if "…" in ln
        )
        centred = [ln for ln in out.splitlines() if re.match(r" {12,}\S", ln)]
        assert not centred, f"{name}: centred or pushed right: {centred[:2]}"
    # the bytes do not depend on a terminal width the pipe does not have (collect names its
    # own folder, which differs by run)
    if name != "collect":
        # times and ages ("20:30:01", "3h10m ago") count from a clock that runs on between
        # the two runs: compare everything but the digits
        same = [re.sub(r"\d", "0", p.stdout) for p in (narrow, wide)]
        assert same[0] == same[1], f"{name}: COLUMNS=80 changed the piped output"


def test_piped_records_are_one_per_line():
    """A record never continues on a line a grep would read as another: in the tab-separated
    tables every row has the header's field count."""
    proc = _run(["snapshot", "--demo"], Path(os.environ.get("TMPDIR", "/tmp")), "80")
    sections, header = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("# "):
            name, header = line[2:], None
            continue
        if "\t" in line:
            if header is None:
                header = line.split("\t")
                sections[name] = len(header)
                continue
            assert len(line.split("\t")) == len(header), (name, line)
    assert {"Jobs", "Nodes"} <= set(sections), sections


@pytest.mark.parametrize(
    "command",
    [
        "snapshot",
        "diagnose",
        "incidents",
        "scan-log",
        "alerts",
        "watch",
        "collect",
        "check-config",
        "web",
    ],
)
def test_help_is_plain_text_in_a_pipe(command, tmp_path):
    proc = _run([command, "--help"], tmp_path, "80")
    assert proc.returncode == 0
    assert not ANSI.search(proc.stdout) and "``" not in proc.stdout  # no RST backticks
    assert "exit status" in proc.stdout  # each command says what its status means
    assert max(len(ln) for ln in proc.stdout.splitlines()) <= 80  # help folds to COLUMNS


def test_collect_of_a_job_the_cluster_does_not_know_writes_no_bundle(tmp_path):
    """A bundle of 'Invalid job id' errors read 'No finding: nothing looks wrong' in a
    ticket: collect says the job is not found, as diagnose does, and writes nothing."""
    proc = _run(["collect", "999999", "--demo", "--out", "{tmp}/b"], tmp_path, None)
    assert proc.returncode == 2, proc.stderr
    assert "job 999999 not found on demo-hpc" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "b").exists()


def test_scan_log_reads_standard_input_as_its_folder_error_says(tmp_path):
    """`scan-log DIR` says "give a log file, or - to read standard input"; `scan-log -` then
    answered "-: No such file or directory"."""
    log = b"epoch 1\nslurmstepd: error: Detected 1 oom-kill event(s) in StepId=5.batch\n"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    found = subprocess.run(
        [sys.executable, "-m", "cockpit", "scan-log", "-"],
        input=log, capture_output=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert b":2: [oom_killed]" in found.stdout
    clean = subprocess.run(
        [sys.executable, "-m", "cockpit", "scan-log", "-"],
        input=b"all fine\n", capture_output=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert clean.returncode == 1 and b"no error line found" in clean.stdout
