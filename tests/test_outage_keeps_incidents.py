"""A cockpit that starts while its cluster's controller is down does not retire what the
store knows of that cluster: `cockpit incidents` during an outage listed every stored
incident '(gone)' (nothing came back from the failed poll, and the store's sync took that
as the live data; a new-user trial pointing a config at a closed port)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli_support import run_cockpit

FAKEBIN = Path(__file__).resolve().parents[1] / "bench" / "peer" / "fakebin"
DOWN = '#!/bin/sh\necho "slurm_load_jobs error: Unable to contact slurm controller" >&2\nexit 1\n'


def _incidents(tmp_path: Path, path_first: Path) -> list[dict]:
    env = {
        **os.environ,
        "PATH": f"{path_first}{os.pathsep}{os.environ['PATH']}",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "FAKE_SLURM_JOBS": "300",
        "FAKE_SLURM_EPOCH": "1764000000",
        "FAKE_SLURM_NOW": "1764003600",
    }
    res = run_cockpit("--config", str(tmp_path / "c.toml"), "incidents", "--json", env=env,
                      timeout=120)  # fmt: skip
    assert res.stdout, res.stderr
    return json.loads(res.stdout)["incidents"]


def test_an_outage_at_start_leaves_the_stored_incidents_open(tmp_path):
    (tmp_path / "c.toml").write_text('[clusters.lab]\ntransport = "local"\n')
    down = tmp_path / "down"
    down.mkdir()
    for cmd in ("squeue", "sinfo", "scontrol"):
        (down / cmd).write_text(DOWN)
        (down / cmd).chmod(0o755)
    before = _incidents(tmp_path, FAKEBIN)
    live = {i["key"] for i in before if not i["gone"]}
    assert len(live) > 10
    during = _incidents(tmp_path, down)
    still = {i["key"] for i in during if not i["gone"]}
    assert live <= still, f"{len(live - still)} of {len(live)} turned gone"
    assert any(i["root_cause"] == "source_unreachable" for i in during)
