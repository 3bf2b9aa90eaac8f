"""--record / --replay for ModelArts: the real Huawei SDK against the local v2 API server. A
training job goes from Running to Failed while recorded; the replay shows the same verdicts at
the same steps, never answers a call it did not record with another call's answer, and keeps
no secret the job printed."""

from __future__ import annotations

import gzip
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from tests.ui_support import replay_app

sys.path.insert(0, str(Path(__file__).parent))

from modelarts_server import AK, NOW, PROJECT_ID, SK, ModelArtsServer  # noqa: E402

from cockpit.diagnosis.engine import diagnose  # noqa: E402
from cockpit.diagnosis.verdict import verdicts  # noqa: E402
from cockpit.modelarts.api import ModelArtsApiError, SdkModelArtsApi, SdkSettings  # noqa: E402
from cockpit.modelarts.source import ModelArtsSource  # noqa: E402
from cockpit.record import replay_sources, start_recording  # noqa: E402

LEAKED_SK = "Zq8PweRt5YuI9oPaSdF3gHjK7lZxCvBn2Mq4Wr6T"  # 40 mixed-case: a Huawei Cloud SK
OOM_LOG = (
    "epoch 3 step 900 loss=1.02\n"
    f"export HUAWEICLOUD_SDK_SK={LEAKED_SK}\n"
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    "[ModelArts Service Log] Training end with return code: 137\n"
)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):
        return self.now


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = ModelArtsServer().start()
    yield srv
    srv.stop()


def _job_id(server: ModelArtsServer, name: str) -> str:
    return next(j for j, job in server.fx["jobs"].items() if job["metadata"]["name"] == name)


def _fail(server: ModelArtsServer, jid: str) -> None:
    """The running job dies: OOM-killed (exit 137), its log says why."""
    status = server.fx["jobs"][jid]["status"]
    status["phase"] = status["secondary_phase"] = "Failed"
    status["task_statuses"] = [{"task": "worker-0", "exit_code": 137, "message": "OOMKilled"}]
    server.fx["logs"][jid] = OOM_LOG
    server.fx["events"][jid] = [
        (NOW.isoformat(), "Warning", "Job", "Training job failed. Exit code: 137")
    ]


def _verdicts(snap, now):
    """training job name -> (phase, severity, verdict title): what the operator reads."""
    by_id = {j.job_id: j for j in snap.training_jobs}
    out = {j.name: (j.phase, "", "") for j in snap.training_jobs}
    for (kind, _src, sid), f in verdicts(diagnose(snap, None, now)).items():
        if kind == "training_job" and sid in by_id:
            out[by_id[sid].name] = (by_id[sid].phase, f.severity, f.title)
    return out


async def _record(server, directory: Path, clock: Clock) -> tuple[list, str]:
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=server.base_url, timeout=(1, 2))
    )
    # pools cached for a minute, as live: the replay must still find them at later steps
    src = ModelArtsSource("prod", api, clock=clock, pool_cache_s=60)
    assert start_recording(directory, [src], clock) == []
    jid = _job_id(server, "bert-base-ok")
    live = []
    for step in range(3):
        if step == 1:
            _fail(server, jid)
        snap = await src.poll()
        assert snap.ok, snap.error
        live.append(_verdicts(snap, clock()))
        clock.now += timedelta(minutes=1)
    await src.close()
    return live, jid


async def test_replay_shows_the_same_verdicts_at_the_same_steps(server, tmp_path):
    live, jid = await _record(server, tmp_path, Clock())
    assert live[0]["bert-base-ok"][0] == "Running" and live[1]["bert-base-ok"][0] == "Failed"
    assert live[0]["bert-base-ok"] == ("Running", "", "")
    assert live[1]["bert-base-ok"] == ("Failed", "critical", "Failed: GPU out of memory")

    sources, clock = replay_sources(tmp_path)
    assert [(s.name, s.kind) for s in sources] == [("prod", "modelarts")]
    assert len(clock.polls) == 3
    src = sources[0]
    replayed = []
    for _ in range(3):
        snap = await src.poll()
        assert snap.ok, snap.error
        assert snap.pools, "the pools listed at poll 1 still stand at later polls"
        replayed.append(_verdicts(snap, clock()))
        clock.step(1)
    assert replayed == live
    # back in time: the job is Running again
    clock.step(-10)
    assert _verdicts(await src.poll(), clock())["bert-base-ok"] == live[0]["bert-base-ok"]


async def test_replay_never_answers_an_unrecorded_call_with_another(server, tmp_path):
    live, jid = await _record(server, tmp_path, Clock())
    sources, clock = replay_sources(tmp_path)
    api = sources[0].api
    # poll 1: the job was Running (listed, never fetched in detail): its detail is not in
    # the recording yet, though poll 2 recorded one: the future never answers the past
    with pytest.raises(ModelArtsApiError, match="not recorded"):
        api.show_training_job(jid)
    clock.step(1)
    assert api.show_training_job(jid)["status"]["phase"] == "Failed"
    other = next(j for j in (await sources[0].poll()).training_jobs if j.job_id != jid)
    with pytest.raises(ModelArtsApiError, match="not recorded"):
        api.show_training_job("00000000-0000-0000-0000-00000000dead")
    with pytest.raises(ModelArtsApiError, match="not recorded"):
        api.logs_preview(jid, "worker-9")  # recorded for worker-0 only
    # the drill-down of a job whose detail was never recorded says so, not another job's
    if other.phase == "Running":
        with pytest.raises(ModelArtsApiError, match="not recorded"):
            await sources[0].fetch_job(other.job_id)


async def test_what_the_job_printed_is_redacted_in_the_recording(server, tmp_path):
    await _record(server, tmp_path, Clock())
    raw = gzip.decompress((tmp_path / "prod.jsonl.gz").read_bytes())
    assert b"list_training_jobs" in raw and b"CUDA out of memory" in raw
    assert LEAKED_SK.encode() not in raw and SK.encode() not in raw
    sources, clock = replay_sources(tmp_path)
    clock.step(1)
    snap = await sources[0].poll()
    (job,) = [j for j in snap.training_jobs if j.name == "bert-base-ok"]
    assert "<redacted>" in job.log_preview and LEAKED_SK not in job.log_preview


async def test_an_api_error_is_recorded_and_replayed_as_that_error(server, tmp_path):
    clock = Clock()
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=server.base_url, timeout=(1, 2))
    )
    src = ModelArtsSource("prod", api, clock=clock, pool_cache_s=0)
    start_recording(tmp_path, [src], clock)
    kinds = []
    for step in range(3):
        if step == 1:
            server.inject(
                503,
                {"error_code": "ModelArts.0001", "error_msg": "Service Unavailable"},
                route="/training-job-searches",
            )
        snap = await src.poll()
        kinds.append(snap.error.kind if snap.error else None)
        clock.now += timedelta(minutes=1)
    await src.close()
    assert kinds == [None, "server", None]
    sources, replay = replay_sources(tmp_path)
    replayed = []
    for _ in range(3):
        snap = await sources[0].poll()
        replayed.append(snap.error.kind if snap.error else None)
        replay.step(1)
    assert replayed == kinds


async def test_slurm_and_modelarts_replay_together(server, tmp_path):
    """Both kinds in one recording: the clock steps through every poll of either, and a
    source answers from its own latest poll (its later calls count, though another source's
    poll began in between)."""
    from cockpit.demo.site import demo_sources

    clock = Clock()
    slurm = demo_sources(7, clock=clock)[0]
    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=server.base_url, timeout=(1, 2))
    )
    ma = ModelArtsSource("prod", api, clock=clock, pool_cache_s=0)
    start_recording(tmp_path, [slurm, ma], clock)
    jid = _job_id(server, "bert-base-ok")
    live = []
    for step in range(2):
        if step == 1:
            _fail(server, jid)
        snap = await ma.poll()
        live.append(_verdicts(snap, clock()))
        clock.now += timedelta(seconds=10)
        assert (await slurm.poll()).ok
        clock.now += timedelta(minutes=1)
    await ma.close()
    await slurm.close()
    sources, replay = replay_sources(tmp_path)
    assert sorted(s.kind for s in sources) == ["modelarts", "slurm"]
    assert len(replay.polls) == 4
    replay_ma = next(s for s in sources if s.kind == "modelarts")
    seen = []
    for _ in range(4):
        seen.append(_verdicts(await replay_ma.poll(), replay()))
        replay.step(1)
    assert seen == [live[0], live[0], live[1], live[1]]


async def test_replay_keys_step_the_training_pane_from_running_to_failed(server, tmp_path):
    from cockpit.screens.panes import TrainingJobTable

    from .test_ui_flows import until

    live, jid = await _record(server, tmp_path / "rec", Clock())
    app, clock = replay_app(tmp_path / "rec", tmp_path / "state.json")
    async with app.run_test(size=(120, 40)) as pilot:

        def verdict() -> str:
            table = app.screen.query_one(TrainingJobTable)
            labels = [c.label for c in table.columns]
            row = next((r for r in table.rows if r.key.endswith(jid)), None)
            return "" if row is None else row.cells[labels.index("VERDICT")] or "-"

        await until(pilot, lambda: verdict() != "", "the replayed job's row", 500)
        assert "out of memory" not in verdict()
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "GPU out of memory" in verdict(), "the failure at poll 2", 500)
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: "out of memory" not in verdict(), "running again", 500)
