"""A ModelArts project of 10,000 training jobs through the real SDK and the local v2 API server,
counting the requests the server answers: every active job is seen however old, a poll where
nothing changed costs a few requests, and a job that changes is read again at the next poll."""

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
    job_json,
)

from cockpit.modelarts.api import SdkModelArtsApi, SdkSettings  # noqa: E402
from cockpit.modelarts.logwatch import READS_PER_POLL  # noqa: E402
from cockpit.modelarts.source import ModelArtsSource  # noqa: E402


@pytest.fixture(scope="module")
def project() -> dict:
    return big_project()


@pytest.fixture
def server(project, monkeypatch: pytest.MonkeyPatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # each test changes its own copy of the jobs it touches
    fx = {**project, "jobs": dict(project["jobs"]), "logs": dict(project["logs"])}
    srv = ModelArtsServer(fx).start()
    yield srv
    srv.stop()


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):
        return self.now


def make_source(srv: ModelArtsServer, clock: Clock) -> ModelArtsSource:
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(3, 10))
    )
    return ModelArtsSource("prod", api, clock=clock)


def active_ids(srv: ModelArtsServer) -> set[str]:
    phases = {"Creating", "Pending", "Running", "Terminating"}
    return {j for j, job in srv.fx["jobs"].items() if job["status"]["phase"] in phases}


async def poll_counted(src: ModelArtsSource, srv: ModelArtsServer):
    before = len(srv.requests)
    snap = await src.poll()
    assert snap.ok, snap.error
    return snap, srv.requests[before:]


async def test_every_active_job_is_seen_and_an_unchanged_poll_costs_few_requests(server):
    clock = Clock()
    src = make_source(server, clock)
    first, _ = await poll_counted(src, server)
    seen = {j.job_id: j for j in first.training_jobs}
    want = active_ids(server)
    assert len(want) == 100 and want <= set(seen)  # the 10 trainings of 20 days ago included
    assert {seen[j].name for j in want if seen[j].name.startswith("pretrain-long")} == {
        f"pretrain-long-{i}" for i in range(10)
    }
    # the ended history is bounded, and says so where the operator looks
    assert any("not listed" in w and "every job in an active phase is" in w for w in first.warnings)
    booting = next(j for j in first.training_jobs if j.name.startswith("booting-"))
    assert booting.log_preview.startswith("[boot]") and booting.stages[-1].name == "preparing"

    clock.now = NOW + timedelta(seconds=30)
    second, requests = await poll_counted(src, server)
    assert len(requests) <= 10, requests
    assert active_ids(server) <= {j.job_id for j in second.training_jobs}
    # what the operator reads did not change: same jobs, same phases, same evidence
    again = {j.job_id: j for j in second.training_jobs}
    assert set(again) == set(seen)
    assert again[booting.job_id].log_preview == booting.log_preview


async def test_a_steady_project_stays_cheap_while_waiting_jobs_are_reread(server):
    clock = Clock()
    src = make_source(server, clock)
    await src.poll()
    booting = {
        j for j, job in server.fx["jobs"].items() if job["status"]["secondary_phase"] == "Creating"
    }
    running = {j for j, job in server.fx["jobs"].items() if job["status"]["phase"] == "Running"}
    costs = []
    previews: dict[str, list] = {j: [] for j in booting}
    for step in range(1, 21):  # ten minutes of 30 s polls
        clock.now = NOW + timedelta(seconds=30 * step)
        _, requests = await poll_counted(src, server)
        # Running jobs' logs come on top, within their own budget (tests below)
        logs = [p for _m, p in requests if "/logs/" in p and p.split("/")[4] in running]
        assert len(logs) <= READS_PER_POLL, logs
        costs.append(len(requests) - len(logs))
        for _method, path in requests:
            for j in booting:
                if f"/training-jobs/{j}/tasks/" in path:
                    previews[j].append(step)
    assert max(costs) <= 10, costs
    # a booting job's log is read again within 7.5 minutes (15 polls), each one of them
    assert all(steps and steps[0] <= 15 for steps in previews.values()), previews


async def test_a_job_that_changes_phase_is_read_again_at_the_next_poll(server):
    clock = Clock()
    src = make_source(server, clock)
    await src.poll()
    queued = next(
        j for j, job in server.fx["jobs"].items() if job["metadata"]["name"] == "queued-50"
    )
    booted = next(
        j for j, job in server.fx["jobs"].items() if job["metadata"]["name"] == "booting-85"
    )
    # the queued job is scheduled (same phase, new secondary phase) and the booting one dies
    server.fx["jobs"][queued] = job_json(
        queued, "queued-50", "Pending", "Creating", created_min_ago=60
    )
    dead = job_json(booted, "booting-85", "Failed", "Failed", created_min_ago=90, started_min_ago=2)
    dead["status"]["task_statuses"] = [
        {"task": "worker-0", "exit_code": 137, "message": "OOMKilled"}
    ]
    server.fx["jobs"][booted] = dead
    server.fx["logs"][booted] = "RuntimeError: CUDA out of memory.\n"

    clock.now = NOW + timedelta(seconds=30)
    snap, requests = await poll_counted(src, server)
    paths = [p for _m, p in requests]
    jobs = {j.job_id: j for j in snap.training_jobs}
    assert jobs[queued].secondary_phase == "Creating"
    assert any(p.endswith(f"/training-jobs/{queued}/stages") for p in paths)
    assert jobs[booted].phase == "Failed" and jobs[booted].task_statuses[0].exit_code == 137
    assert jobs[booted].log_preview == "RuntimeError: CUDA out of memory.\n"
    assert any(p.endswith(f"/training-jobs/{booted}") for p in paths)
    # an ended job is read once: the next poll asks nothing about it
    clock.now = NOW + timedelta(seconds=60)
    snap, requests = await poll_counted(src, server)
    assert not any(booted in p for _m, p in requests)
    assert next(j for j in snap.training_jobs if j.job_id == booted).log_preview.startswith(
        "RuntimeError"
    )


async def test_the_ended_jobs_kept_follow_the_config_and_the_cut_is_said(
    server, tmp_path, monkeypatch
):
    from cockpit.config import load_config

    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[modelarts.prod]\nendpoint = "{server.base_url}"\nproject_id = "{PROJECT_ID}"\n'
        "max_ended_jobs = 120\n"
    )
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", AK)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", SK)
    clock = Clock()
    src = ModelArtsSource.from_config(load_config(cfg).modelarts["prod"], clock=clock)
    snap = await src.poll()
    assert snap.ok, snap.error
    assert active_ids(server) <= {j.job_id for j in snap.training_jobs}
    ended = [j for j in snap.training_jobs if j.phase in ("Completed", "Failed")]
    assert len(ended) == 120
    # 10,000 jobs: 100 active and 120 ended shown, the other 9,780 named in a warning
    assert any(w.startswith("9780 ended training jobs") and "= 120" in w for w in snap.warnings)
    await src.close()


async def test_the_benchmark_runs_in_its_smoke_form(monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.bench_modelarts import measure

    res = await measure(300, None)
    assert res["active_seen"] == res["active"] == 100
    # Running jobs' log previews come on top of the waiting jobs' re-reads, within their budget
    assert res["log_reads_max"] <= READS_PER_POLL
    assert res["unchanged"]["requests"] <= 10 + READS_PER_POLL
    assert res["steady_max_requests"] <= 10 + READS_PER_POLL
