"""Inputs built to break a reader by their shape, not their content (issue #32): a folder
1,200 deep (Python 3.11's os.walk recursed once per level), a log that is one 200 MB line
(held whole, it took 4x the memory of the same bytes in normal lines), a line whose error
sits in its middle, and zip members on a Windows drive that climb out with backslashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from cockpit.diagnosis.logscan import first_error, iter_errors
from cockpit.errors import EXIT_FOUND
from cockpit.ingest.bundle import diagnose_bundle
from cockpit.text import MAX_LINE
from tests.cli_support import run_cockpit

OOM = (
    b"slurmstepd: error: Detected 1 oom_kill event in StepId=12.batch. "
    b"Some of the step tasks have been OOM Killed.\n"
)
DEPTH = 1200


@pytest.fixture
def deep_bundle(tmp_path):
    """A ticket folder with the job's log at its top and a chain of 1,200 folders beside it,
    a log (a different cause) at the bottom. Removed bottom-up: shutil.rmtree recurses too."""
    root = tmp_path / "ticket"
    root.mkdir()
    (root / "slurm-12.out").write_bytes(b"epoch 3 step 120 loss=0.41\n" + OOM)
    fd = os.open(root, os.O_RDONLY)
    for _ in range(DEPTH):  # relative to an open folder: no path grows past PATH_MAX here
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    out = os.open("slurm-13.out", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(out, b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    os.close(out)
    os.close(fd)
    yield root
    os.unlink(root / ("d/" * DEPTH + "slurm-13.out"))
    for depth in range(DEPTH, 0, -1):
        os.rmdir(root / "/".join(["d"] * depth))


@pytest.mark.parametrize("how", [("diagnose",), ("diagnose", "--bundle")], ids=["path", "bundle"])
def test_a_folder_1200_deep_is_read_to_a_depth_cap_with_a_note(deep_bundle, how):
    res = run_cockpit(*how, str(deep_bundle), "--json", timeout=120)
    assert "Traceback" not in res.stderr and "RecursionError" not in res.stderr, res.stderr[-800:]
    assert res.returncode == EXIT_FOUND  # a critical finding, as for any ticket
    report = json.loads(res.stdout)
    assert [f["root_cause"] for f in report["findings"]][:1] == ["oom_killed"]
    causes = {f["root_cause"] for f in report["findings"]}
    assert "gpu_out_of_memory" not in causes  # the bottom log lies past the cap: not read ...
    note = next(n for n in report["notes"] if "levels deep" in n)  # ... and the report says so
    assert note.startswith("d/d/d/") and "not read" in note


def test_a_folder_too_deep_with_nothing_else_is_one_line_and_a_usage_exit(tmp_path):
    root = tmp_path / "only-deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(DEPTH):
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)
    try:
        res = run_cockpit("diagnose", str(root), timeout=120)
        assert "Traceback" not in res.stderr, res.stderr[-800:]
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
        assert "levels deep" in res.stderr and "nothing to diagnose" in res.stderr
    finally:
        for depth in range(DEPTH, 0, -1):
            os.rmdir(root / "/".join(["d"] * depth))


# ------------------------------------------------------------------------- one very long line

_PEAKS = textwrap.dedent(
    """
    import json, sys, tracemalloc
    from cockpit.ingest.logfile import iter_path, scan_path
    from cockpit.ingest.sources import read_inputs
    peaks = {}
    for name in sys.argv[1:]:
        got = []
        for how, read in (
            ("scan_path", lambda p: scan_path(p)),
            ("iter_path", lambda p: list(iter_path(p))[-1]),
            ("read_inputs", lambda p: read_inputs(p)[0][0].scan.hit),
        ):
            tracemalloc.start()
            hit = read(name)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            got.append((how, peak, hit.label, hit.line))
        peaks[name] = got
    print(json.dumps(peaks))
    """
)


def test_a_200_mb_line_costs_no_more_memory_than_normal_lines(tmp_path):
    size = 200 << 20
    long, normal = tmp_path / "long.log", tmp_path / "normal.log"
    with open(long, "wb") as fh:  # one line of 200 MB (a progress bar never ended), then OOM
        fh.write(b"epoch 1\n" + b"x" * size + b"\n" + OOM)
    with open(normal, "wb") as fh:  # the same bytes in 200-byte lines
        fh.write(b"epoch 1\n" + (b"x" * 199 + b"\n") * (size // 200) + OOM)
    res = subprocess.run(
        [sys.executable, "-c", _PEAKS, str(long), str(normal)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-800:]
    peaks = json.loads(res.stdout)
    for (how, peak, label, line), (_, normal_peak, *_rest) in zip(
        peaks[str(long)], peaks[str(normal)], strict=True
    ):
        assert (label, line) == ("oom_killed", 3), how  # the line after the long one is read
        # held whole, the line took 4x the normal lines' memory (~2x the file's size)
        assert peak <= 1.25 * normal_peak and peak < size * 0.6, (how, peak, normal_peak)


def test_an_error_in_the_middle_of_a_huge_line_is_shown_in_a_marked_window():
    line = b"x" * (3 << 20) + b" RuntimeError: CUDA out of memory. " + b"y" * (3 << 20)
    hit = first_error(line + b"\nnext\n")
    assert hit is not None and hit.line == 1 and hit.label == "gpu_out_of_memory"
    # a display line's worth, not 64 KB, and cut visibly at both ends: the shown text must
    # not read as the line's start or end
    assert len(hit.text) <= MAX_LINE + 2
    assert hit.text.startswith("…x") and hit.text.endswith("y…")
    assert "CUDA out of memory" in hit.text[:400]  # within a terminal line or five of its start


def test_a_line_longer_than_the_read_size_is_one_error_line_in_every_error_listing(tmp_path):
    import cockpit.ingest.logfile as logfile

    log = tmp_path / "x.log"
    log.write_bytes(b"ok\n" + b"error: " + b"z" * (5 << 20) + b"\nerror: two\n")
    assert (
        [h.line for h in logfile.iter_path(str(log))]
        == [h.line for h in iter_errors(log.read_bytes())]
        == [2, 3]
    )


# ------------------------------------------------------------------------ Windows paths in a zip


@pytest.mark.parametrize(
    "member",
    [
        "C:\\x\\..\\..\\name",  # normalised, the .. ate the drive and left a harmless 'name'
        "C:\\slurm-12.out",
        "c:slurm-12.out",  # relative to the drive's current folder
        "..\\..\\slurm-12.out",
        "x\\..\\..\\slurm-12.out",
        "\\\\server\\share\\slurm-12.out",  # a UNC path
    ],
)
def test_a_zip_member_on_a_windows_drive_or_climbing_with_backslashes_is_refused(
    tmp_path: Path, member: str
):
    arch = tmp_path / "ticket.zip"
    with zipfile.ZipFile(arch, "w") as zf:
        zf.writestr(member, OOM)
        zf.writestr("README.txt", b"see the log\n")
    report = diagnose_bundle(str(arch)).to_json()
    assert f"{member}: refused (path outside the archive)" in "\n".join(report["notes"])
    assert "oom_killed" not in {f["root_cause"] for f in report["findings"]}


# ------------------------------------------------------------------ a config nested 5,000 deep


@pytest.mark.parametrize(
    "argv",
    [("check-config",), ("incidents",), ("snapshot",), ("watch", "--once"), ("collect", "1")],
    ids=lambda argv: "-".join(argv),
)
@pytest.mark.parametrize(
    "nesting",
    ["a = " + "[" * 5000, "a = " + "[{b=" * 2500, "a = " + "{b=" * 5000 + "}" * 5000],
    ids=["arrays", "arrays-of-tables", "inline-tables"],
)
def test_a_config_nested_5000_deep_is_one_line_and_a_usage_exit_for_every_command(
    tmp_path, argv, nesting
):
    """Guards every command, not only check-config (fixed in f5f3241: these pass on it)."""
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(nesting + "\n")
    if argv[0] == "collect":
        argv = (*argv, "--out", str(tmp_path / "ticket"))
    res = run_cockpit("--config", str(cfg), *argv, timeout=60)
    assert "Traceback" not in res.stderr and "RecursionError" not in res.stderr, res.stderr[-800:]
    assert res.returncode == 2
    assert res.stderr.strip() == f"cockpit: {cfg}: TOML nested too deeply to read"
