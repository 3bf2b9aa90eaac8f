"""A Running training job whose log went quiet, through the real Huawei SDK and the local v2 API
server: named silent with its last line once past ``[risk] log_silent_s`` (set low here, with
a clock the test moves), not while its log grows, no more once it grows again or ends; and the
log previews read per poll stay within the source's budget however many jobs run."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from modelarts_server import (  # noqa: E402
    AK,
    NOW,
    PROJECT_ID,
    SK,
    ModelArtsServer,
    big_project,
    default_fixtures,
    job_json,
)

from cockpit.diagnosis.engine import diagnose  # noqa: E402
from cockpit.model import RiskSettings  # noqa: E402
from cockpit.modelarts.api import SdkModelArtsApi, SdkSettings  # noqa: E402
from cockpit.modelarts.source import ModelArtsSource  # noqa: E402

HUNG = "11111111-aaaa-4bbb-8ccc-000000000001"
BUSY = "11111111-aaaa-4bbb-8ccc-000000000002"
SILENT_S = 120  # [risk] log_silent_s for these tests


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):
        return self.now


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def two_trainings() -> dict:
    fx = default_fixtures()
    fx.update(jobs={}, events={}, stages={}, logs={})
    for jid, name in ((HUNG, "llama-ddp-hung"), (BUSY, "bert-busy")):
        fx["jobs"][jid] = job_json(
            jid, name, "Running", "Running", created_min_ago=90, started_min_ago=80
        )
    fx["logs"][HUNG] = "".join(f"epoch 1 step {s} loss=2.{s}\n" for s in (100, 200, 300))
    fx["logs"][BUSY] = "epoch 1 step 100 loss=2.31\n"
    return fx


def make_source(srv: ModelArtsServer, clock: Clock, **kw) -> ModelArtsSource:
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(3, 10))
    )
    src = ModelArtsSource("prod", api, clock=clock, **kw)
    src.use_risk(RiskSettings(log_silent_s=SILENT_S))
    return src


async def silent(src: ModelArtsSource, clock: Clock) -> dict[str, str]:
    """training job name -> the title of its training_log_silent finding, after one poll."""
    snap = await src.poll()
    assert snap.ok, snap.error
    return {
        f.subject.name: f.title
        for f in diagnose(snap, now=clock.now)
        if f.root_cause == "training_log_silent"
    }


async def test_a_log_that_stops_is_named_silent_with_its_last_line_until_it_grows_or_ends():
    srv = ModelArtsServer(two_trainings()).start()
    clock = Clock()
    src = make_source(srv, clock)

    async def tick() -> dict[str, str]:  # 30 s later; one job keeps printing
        clock.now += timedelta(seconds=30)
        srv.fx["logs"][BUSY] += "epoch 1 step 101 loss=2.30\n"
        found = await silent(src, clock)
        assert "bert-busy" not in found
        return found

    try:
        assert await silent(src, clock) == {}  # first sight: nothing known of the past
        for step in range(1, 5):
            found = await tick()
            assert ("llama-ddp-hung" in found) == (30 * step >= SILENT_S), (step, found)
        title = found["llama-ddp-hung"]
        assert "log silent for 2 min" in title and f"since {NOW:%H:%M}" in title
        assert "epoch 1 step 300 loss=2.300" in title

        # it prints again: the warning goes at the next poll, and comes back once quiet again
        srv.fx["logs"][HUNG] += "epoch 1 step 400 loss=2.01\n"
        assert await tick() == {}
        for _ in range(4):
            found = await tick()
        assert "epoch 1 step 400" in found["llama-ddp-hung"]

        # it ends: no more warning (the job is read once as it ended)
        srv.fx["jobs"][HUNG]["status"]["phase"] = "Failed"
        srv.fx["jobs"][HUNG]["status"]["secondary_phase"] = "Failed"
        assert await tick() == {}
    finally:
        await src.close()
        srv.stop()


async def test_a_job_found_silent_is_read_again_each_poll_within_the_budget():
    """55 Running jobs, 5 log reads a poll: every job's log is read in turn, never more than
    the budget in one poll, and one already quiet is read every poll (its warning is current)."""
    fx = big_project(jobs=600)
    running = sorted(j for j, job in fx["jobs"].items() if job["status"]["phase"] == "Running")
    for n, jid in enumerate(running):
        fx["logs"][jid] = f"step {n}\n"
    quiet = running[0]
    srv = ModelArtsServer(fx).start()
    clock = Clock()
    src = make_source(srv, clock, log_reads=5)
    reads: dict[str, list[int]] = {j: [] for j in running}
    per_poll = []
    try:
        for step in range(30):  # 15 minutes of 30 s polls
            clock.now = NOW + timedelta(seconds=30 * step)
            for jid in running[1:]:
                fx["logs"][jid] += "step\n"  # every other log grows
            before = len(srv.requests)
            snap = await src.poll()
            assert snap.ok, snap.error
            got = [p.split("/")[4] for _m, p in srv.requests[before:] if "/logs/" in p]
            got = [j for j in got if j in reads]
            per_poll.append(len(got))
            for jid in got:
                reads[jid].append(step)
        assert max(per_poll) <= 5, per_poll
        assert all(reads.values()), [j for j, r in reads.items() if not r]  # each one in turn
        # past half the threshold (a minute) of quiet at its reads, the quiet one is read on
        # every poll: a warning about it is never older than a poll
        late = [s for s in reads[quiet] if s >= 15]
        assert late == list(range(15, 30)), reads[quiet]
        found = diagnose(snap, now=clock.now)
        assert {f.subject.id for f in found if f.root_cause == "training_log_silent"} == {quiet}
    finally:
        await src.close()
        srv.stop()


async def test_the_config_sets_the_budget_and_the_threshold(tmp_path, monkeypatch):
    from cockpit.config import load_config
    from cockpit.connect import build_sources
    from cockpit.errors import ConfigError

    fx = big_project(jobs=200)
    srv = ModelArtsServer(fx).start()
    cfg = tmp_path / "config.toml"
    table = f'[modelarts.prod]\nendpoint = "{srv.base_url}"\nproject_id = "{PROJECT_ID}"\n'
    cfg.write_text(f"[risk]\nlog_silent_s = 600\n\n{table}running_log_reads = 2\n")
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", AK)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", SK)
    (src,) = build_sources(load_config(cfg), clock=Clock())
    try:
        snap = await src.poll()
        assert snap.ok and snap.risk is not None and snap.risk.settings.log_silent_s == 600
        running = {j for j, job in fx["jobs"].items() if job["status"]["phase"] == "Running"}
        logs = [p for _m, p in srv.requests if "/logs/" in p and p.split("/")[4] in running]
        assert len(running) > 2 and len(logs) == 2
    finally:
        await src.close()
        srv.stop()
    cfg.write_text(f"{table}running_log_reads = 500\n")
    with pytest.raises(ConfigError, match="running_log_reads"):
        load_config(cfg)


async def test_a_log_stamped_in_local_time_is_still_named_silent():
    """Lines stamped in Beijing time without a zone read as 8 h in the future: their stamp
    says nothing, and the reads tell when the log last changed."""
    fx = two_trainings()
    local = NOW + timedelta(hours=8)
    fx["logs"][HUNG] = f"{local:%Y-%m-%d %H:%M:%S} INFO epoch 2 step 900 loss=1.71\n"
    srv = ModelArtsServer(fx).start()
    clock = Clock()
    src = make_source(srv, clock)
    try:
        for step in range(5):
            clock.now = NOW + timedelta(seconds=30 * step)
            srv.fx["logs"][BUSY] += "epoch 1 step 101 loss=2.30\n"
            found = await silent(src, clock)
        assert "epoch 2 step 900 loss=1.71" in found["llama-ddp-hung"]
        assert f"since {NOW:%H:%M}" in found["llama-ddp-hung"] and "bert-busy" not in found
    finally:
        await src.close()
        srv.stop()


async def test_the_finding_points_at_the_last_line_of_a_long_log():
    """Only a preview's tail is kept per job; the line number is still the log's own, and the
    log viewer opens that line."""
    fx = two_trainings()
    fx["logs"][HUNG] = "".join(f"epoch 1 step {s} loss=1.5\n" for s in range(1, 501))
    srv = ModelArtsServer(fx).start()
    clock = Clock()
    src = make_source(srv, clock)
    try:
        for step in range(5):
            clock.now = NOW + timedelta(seconds=30 * step)
            srv.fx["logs"][BUSY] += "epoch 1 step 101 loss=2.30\n"
            snap = await src.poll()
        (f,) = [f for f in diagnose(snap, now=clock.now) if f.root_cause == "training_log_silent"]
        ev = f.evidence[0]
        assert ev.line == 500 and ev.text == "epoch 1 step 500 loss=1.5"
        data = await src.read_range(ev.path, 0, 1 << 20)
        assert data.decode().splitlines()[ev.line - 1] == ev.text
    finally:
        await src.close()
        srv.stop()
