"""ModelArtsSource + SdkModelArtsApi on a local v2 API: the real SDK, real HTTP, no patching."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from modelarts_server import AK, NOW, PROJECT_ID, SK, ModelArtsServer  # noqa: E402

from cockpit.errors import UserError  # noqa: E402
from cockpit.model import Subject  # noqa: E402
from cockpit.modelarts.api import ModelArtsApiError, SdkModelArtsApi, SdkSettings  # noqa: E402
from cockpit.modelarts.source import ModelArtsSource, log_path  # noqa: E402
from cockpit.transport import RemoteFileError  # noqa: E402


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = ModelArtsServer(timeout_sleep_s=1.5).start()
    yield srv
    srv.stop()


def make_api(srv: ModelArtsServer, sk: str = SK) -> SdkModelArtsApi:
    return SdkModelArtsApi(
        SdkSettings(ak=AK, sk=sk, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(1, 1))
    )


def make_source(srv: ModelArtsServer, **kw) -> ModelArtsSource:
    return ModelArtsSource("prod", make_api(srv, **kw), clock=lambda: NOW, pool_cache_s=0)


async def test_poll_collects_jobs_pools_and_details(server):
    snap = await make_source(server).poll()
    assert snap.ok and snap.kind == "modelarts" and snap.source == "prod"
    jobs = {j.name: j for j in snap.training_jobs}
    assert len(jobs) == 17
    mount = jobs["cv-finetune-obs"]
    assert (mount.phase, mount.console_phase, mount.pool_public) == (
        "Pending",
        "Initializing",
        False,
    )
    assert [s.name for s in mount.stages] == ["scheduling", "preparing"] and mount.stages[
        -1
    ].end_time is None
    assert mount.events[0].level == "Warning" and "FailedMount" in mount.events[0].message
    assert jobs["llm-pretrain-64gpu"].pool_public is True  # no pool id: public pool
    assert jobs["resnet-bigbatch"].log_preview.endswith("return code: 137\n")
    assert jobs["resnet-bigbatch"].task_statuses[0].exit_code == 137
    # Running and Completed jobs are listed but not fetched in detail
    assert jobs["bert-base-ok"].events == () and jobs["done"].phase == "Completed"
    pools = {p.pool_id: p for p in snap.pools}
    assert {n.phase for n in pools["pool-npu-b"].nodes} == {"Available", "Abnormal"}
    assert pools["pool-frag"].max_available["modelarts.pool.gpu.8v100"] == (32, 256)
    paths = [p for _, p in server.requests]
    # of a Running job only its log preview is read (within a budget: a silent log)
    running = [p for p in paths if "/training-jobs/" + jobs["bert-base-ok"].job_id in p]
    assert len(running) == 1 and running[0].endswith("/logs/preview"), running


@pytest.mark.parametrize(
    ("inject", "kind"),
    [
        (
            (
                401,
                {
                    "error_code": "APIGW.0301",
                    "error_msg": "Incorrect IAM authentication information",
                },
            ),
            "auth",
        ),
        ((403, {"error_code": "ModelArts.0203", "error_msg": "Forbidden"}), "forbidden"),
        ((404, {"error_code": "APIGW.0101", "error_msg": "The API does not exist"}), "not_found"),
        ((500, {"error_code": "ModelArts.0001", "error_msg": "internal error"}), "server"),
        ((502, "Bad Gateway"), "server"),
        (("timeout", None), "timeout"),
        (("malformed", None), "parse"),
        (("truncated", None), "parse"),
    ],
)
async def test_each_error_becomes_a_source_error_then_recovers(server, inject, kind):
    src = make_source(server)
    server.inject(inject[0], inject[1], route="training-job-searches")
    bad = await src.poll()
    assert bad.error is not None and bad.error.kind == kind
    assert "training-job-searches" in bad.error.where and bad.training_jobs == ()
    good = await src.poll()  # server healed: the injection was one-shot
    assert good.ok and len(good.training_jobs) == 17


async def test_wrong_secret_key_is_auth_error_from_signature_check(server):
    snap = await make_source(server, sk="not-the-secret").poll()
    assert snap.error.kind == "auth" and "APIGW.0301" in snap.error.message


async def test_throttled_honours_retry_after(server):
    src = make_source(server)
    server.inject(
        429,
        {"error_code": "APIGW.0308", "error_msg": "request throttled"},
        headers={"Retry-After": "30"},
        route="training-job-searches",
    )
    snap = await src.poll()
    assert snap.error.kind == "throttled" and snap.error.retry_after_s == 30
    calls = len(server.requests)
    again = await src.poll()  # within Retry-After: no request leaves the process
    assert again.error.kind == "throttled" and len(server.requests) == calls


async def test_unreachable_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = SdkModelArtsApi(
        SdkSettings(
            ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=f"http://127.0.0.1:{port}", timeout=(1, 1)
        )
    )
    snap = await ModelArtsSource("x", api, clock=lambda: NOW).poll()
    assert snap.error.kind == "unreachable"


async def test_sdk_prints_nothing_to_stderr(server, capfd):
    src = make_source(server)
    server.inject(500, {"error_code": "X", "error_msg": "boom"})
    await src.poll()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=f"http://127.0.0.1:{port}")
    )
    await ModelArtsSource("x", api).poll()  # the SDK logs "ConnectionException occurred" here
    out, err = capfd.readouterr()
    assert err == "" and out == ""


async def test_detail_failures_degrade_to_warnings(server):
    server.inject(500, {"error_code": "X", "error_msg": "events down"}, route=r"/events$", times=50)
    snap = await make_source(server).poll()
    assert snap.ok and any("events" in w for w in snap.warnings)
    assert len(snap.training_jobs) == 17


async def test_api_error_fields(server):
    api = make_api(server)
    with pytest.raises(ModelArtsApiError) as exc:
        await asyncio.to_thread(api.show_training_job, "nope")
    assert (exc.value.kind, exc.value.status, exc.value.code) == (
        "not_found",
        404,
        "ModelArts.2762",
    )


async def test_artifacts_and_log_preview_path(server):
    src = make_source(server)
    snap = await src.poll()
    job = next(j for j in snap.training_jobs if j.name == "cv-finetune-obs")
    arts = await src.artifacts(Subject("training_job", "prod", job.job_id), snap)
    events = next(log for log in arts.logs if log.kind == "events")
    lines = events.data.decode().splitlines()
    assert lines[0].split(" ", 3)[1:3] == ["Info", "Job"] and "FailedMount" in lines[-1]
    oom = next(j for j in snap.training_jobs if j.name == "resnet-bigbatch")
    arts = await src.artifacts(Subject("training_job", "prod", oom.job_id), snap)
    startup = next(log for log in arts.logs if log.kind == "startup")
    assert startup.path == log_path(oom.job_id, "worker-0")
    assert await src.read_range(startup.path, 0, 9) == b"epoch 3 s"
    assert (await src.stat(startup.path)).size == len(oom.log_preview)
    # a path not yet cached is fetched from the API
    fresh = make_source(server)
    assert (await fresh.read_range(startup.path, 0, 1000)).endswith(b"137\n")
    with pytest.raises(RemoteFileError):
        await fresh.read_range("modelarts://nope/worker-0", 0, 10)
    pool = await src.artifacts(Subject("pool", "prod", "pool-npu-b"), snap)
    assert "npu-1 Abnormal" in pool.commands["list_pool_nodes pool-npu-b"]


async def test_log_changed_at_tracks_growth(server):
    now = [NOW]
    src = ModelArtsSource("prod", make_api(server), clock=lambda: now[0], pool_cache_s=0)
    first = await src.poll()
    jid = next(j.job_id for j in first.training_jobs if j.name == "silent-boot")
    from datetime import timedelta

    now[0] = NOW + timedelta(minutes=5)
    second = await src.poll()
    assert next(j for j in second.training_jobs if j.job_id == jid).log_changed_at == NOW
    server.fx["logs"][jid] += "[boot] still here\n"
    # a booting job's log preview is read again every BOOT_REFRESH_S (5 min), not every poll
    now[0] = NOW + timedelta(minutes=10)
    third = await src.poll()
    assert next(j for j in third.training_jobs if j.job_id == jid).log_changed_at == now[0]


class _Cfg:
    name, region, endpoint, project_id, workspace = "prod", "cn-north-4", "", PROJECT_ID, ""
    ak_env, sk_env, interval, verify_ssl = "MY_AK", "MY_SK", 15, True


def test_from_config_requires_env_vars_and_never_prints_values(monkeypatch):
    monkeypatch.delenv("MY_AK", raising=False)
    monkeypatch.setenv("MY_SK", "super-secret-value")
    with pytest.raises(UserError) as exc:
        ModelArtsSource.from_config(_Cfg())
    assert (
        "MY_AK" in str(exc.value)
        and "MY_SK" not in str(exc.value)
        and "super-secret" not in str(exc.value)
    )
    monkeypatch.setenv("MY_AK", "ak")
    src = ModelArtsSource.from_config(_Cfg())
    assert src.name == "prod" and src.interval == 15 and src.kind == "modelarts"


async def test_snapshot_for_one_job_feeds_the_rules(server):
    from cockpit.diagnosis.context import RuleContext
    from cockpit.diagnosis.rules.modelarts import job_errors

    src = make_source(server)
    jid = next(
        jid for jid, j in server.fx["jobs"].items() if j["metadata"]["name"] == "cv-finetune-obs"
    )
    snap, arts = await src.snapshot_for_job(jid)
    assert snap.ok and [j.job_id for j in snap.training_jobs] == [jid] and snap.pools
    assert [lt.kind for lt in arts.logs] == ["events"]
    (f,) = job_errors(snap.training_jobs[0], RuleContext(snapshot=snap, artifacts=arts, now=NOW))
    assert f.title == "Initializing 25 min: OBS mount AccessDenied"
    missing, _ = await src.snapshot_for_job("nope")
    assert missing.error.kind == "not_found" and "nope" in missing.error.message


async def test_stop_training_job_through_the_real_sdk(server):
    """The stop action goes out as the SDK's StopTrainingJob (POST .../actions terminate);
    a job that already ended is refused by the API and the refusal is the result."""
    from cockpit.actions import CATALOGUE, build
    from cockpit.model import Subject

    src = make_source(server)
    snap = await src.poll()
    running = next(t for t in snap.training_jobs if t.phase == "Running")
    ended = next(t for t in snap.training_jobs if t.phase in ("Failed", "Completed"))
    stop = next(k for k in CATALOGUE if k.verb == "stop")
    res = await src.run_action(build(stop, Subject("training_job", src.name, running.job_id)))
    assert res.ok and "Terminating" in res.output
    assert ("POST", f"/v2/{PROJECT_ID}/training-jobs/{running.job_id}/actions") in server.requests
    snap = await src.poll()
    assert next(t for t in snap.training_jobs if t.job_id == running.job_id).phase == "Terminating"
    res = await src.run_action(build(stop, Subject("training_job", src.name, ended.job_id)))
    assert not res.ok and res.exit_status == 400 and "cannot stop" in res.output
    await src.close()
