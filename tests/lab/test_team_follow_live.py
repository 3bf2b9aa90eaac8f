"""Live: one `cockpit watch` and five TUIs following it on a real PostgreSQL cost slurmctld one
squeue per interval, as counted by slurmctld itself (sdiag's REQUEST_JOB_INFO).

Skipped with a reason when the lab or PostgreSQL is missing; never starts or stops the lab.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time

import pytest

from tests.conftest import LabEnv, wait_for
from tests.pg import postgres  # noqa: F401 - the session fixture

pytestmark = pytest.mark.lab

INTERVAL = 5.0  # the config's least
WINDOW = 21.0


def _job_info_rpcs(lab_env: LabEnv) -> int:
    """slurmctld's count of REQUEST_JOB_INFO (what squeue sends) since it started."""
    out = lab_env.run("sdiag").stdout
    m = re.search(r"^\s*REQUEST_JOB_INFO\s+\(\s*\d+\)\s+count:(\d+)", out, re.M)
    assert m, out[-500:]
    return int(m.group(1))


async def test_five_following_tuis_cost_slurmctld_one_squeue_per_interval(
    lab_env,
    postgres,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    from cockpit.app import CockpitApp
    from cockpit.runtime.follow import FollowSource
    from cockpit.store import open_store
    from cockpit.store.acks import AckStore
    from tests.conftest import await_for

    url = postgres.fresh_database("follow")
    cfg = tmp_path / "site.toml"
    cfg.write_text(
        "[clusters.lab]\n"
        'transport = "local"\n'
        f"interval = {INTERVAL}\n"
        f'slurmctld_log = "{lab_env.ctld_log}"\n'
        f'slurmd_log = "{lab_env.slurmd_log_pattern}"\n'
        f'[store]\nurl = "{url}"\nfollow = true\n'
    )
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    watch = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "watch", "--config", str(cfg), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        store = open_store(url)

        def published() -> bool:
            if watch.poll() is not None:  # it ended: say why
                pytest.fail(f"cockpit watch exited: {watch.stderr.read().decode()[-2000:]}")
            return store.published_at("lab") is not None

        wait_for(published, 60, "the watch's first publish")
        apps = [
            CockpitApp(
                [FollowSource("lab", "slurm", open_store(url), interval=INTERVAL)],
                bell=False,
                acks=AckStore(tmp_path / f"acks{i}.json"),
                store=open_store(url),
            )
            for i in range(5)
        ]
        async with contextlib.AsyncExitStack() as stack:
            pilots = [await stack.enter_async_context(a.run_test(size=(120, 40))) for a in apps]
            for app in apps:
                await await_for(lambda a=app: a.hub.states["lab"].settled, 60, "a follower")
            before, t0 = _job_info_rpcs(lab_env), time.monotonic()
            polls = [a.hub.states["lab"].polls for a in apps]
            await pilots[0].pause(WINDOW)
            rpcs, took = _job_info_rpcs(lab_env) - before, time.monotonic() - t0
            for app, n in zip(apps, polls, strict=True):
                st = app.hub.states["lab"]
                assert st.error is None and st.snapshot is not None and st.snapshot.jobs
                assert st.polls >= n + 3  # each follower kept following
            for p in pilots:
                await p.press("Q")
        # the watch alone asks: one squeue per interval (one more for a poll in flight)
        assert rpcs <= took / INTERVAL + 2, (rpcs, took)
        assert rpcs >= 2  # and it did keep polling
    finally:
        watch.terminate()
        try:
            _, err = watch.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            watch.kill()
            _, err = watch.communicate()
    assert b"Traceback" not in err, err.decode(errors="replace")[-2000:]
