"""Live: held jobs whose names hold a newline, a CR and squeue's own separator stay in the
cockpit's queue with their names, over either transport, and the job after them too."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.lab

NAMES = ["cockpit\nodd-name", "cockpit\rcr-name", "cockpit\x1fsep\nname", "cockpit-plain"]


async def test_jobs_with_odd_names_are_all_in_the_poll(lab_env, lab_source):
    ids = [lab_env.sbatch("--hold", "-p", "debug", "-J", name, "--wrap", "true") for name in NAMES]
    try:
        snap = await lab_source.poll()
        got = {j.job_id: j.name for j in snap.jobs if j.job_id in ids}
        assert got == dict(zip(ids, NAMES, strict=True))
        assert not [w for w in snap.warnings if "squeue" in w]
    finally:
        lab_env.scancel(*ids)
