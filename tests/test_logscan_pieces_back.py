"""An umbrella summary at the start of a piece yields to the first line of its run, which may
be in an earlier piece: the chunked scan keeps the run's lines whole, however long, and cites
the line the whole buffer does (a slurmd run with long lines met a 4 KB keep before)."""

from __future__ import annotations

import io

import pytest

from cockpit.diagnosis.logscan import first_error
from cockpit.diagnosis.logscan_pieces import first_error_in_pieces
from cockpit.ingest.logfile import _chunks

_PATH = "/opt/slurm/lib/slurm/" + "plugin-search-path/" * 200  # a long plugin search path


def _slurmd_run() -> bytes:
    p = "slurmd-c1  | slurmd: error: "
    return (
        f"{p}Couldn't find the specified plugin name for cgroup/v2 looking at all files "
        f"in {_PATH}\n"
        f"{p}cannot find cgroup plugin for cgroup/v2 in {_PATH}\n"
        f"{p}Unable to initialize cgroup plugin\n"
        f"{p}slurmd initialization failed\n"
    ).encode()


@pytest.mark.parametrize("chunk", [64, 256, 4096])
def test_a_summary_in_a_later_piece_cites_its_runs_first_line_as_the_whole_read(chunk):
    log = _slurmd_run()
    whole = first_error(log)
    assert whole is not None and whole.line == 1, (whole.line, whole.text)
    got = first_error_in_pieces([(b, n, bytes(p)) for b, n, p in _chunks(io.BytesIO(log), chunk)])
    assert got is not None and (got.line, got.offset, got.label) == (1, 0, whole.label), got
