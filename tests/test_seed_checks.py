"""ModelArts seed checks: the image-pull stage with no pod placed, the silent startup-log
timer, the startup log's storage lines, and the good-run baseline diff reaching findings,
incidents and ``cockpit diagnose --training-job``.

Jobs are built as the ModelArts API returns them (wire JSON through the real parser)."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from modelarts_server import (  # noqa: E402
    MIN,
    NOW,
    T0,
    _ev,
    _iso,
    _pod,
    events_json,
    job_json,
    stages_json,
)

from cockpit.diagnosis.correlate import correlate  # noqa: E402
from cockpit.diagnosis.engine import diagnose  # noqa: E402
from cockpit.diagnosis.startup_log import keyword_lines, last_line  # noqa: E402
from cockpit.model import Snapshot, Subject  # noqa: E402
from cockpit.modelarts.parse import parse_training_job  # noqa: E402
from cockpit.watch.baseline import BaselineStore, with_startup_diffs  # noqa: E402

JID = "00000042-aaaa-4bbb-8ccc-000000000042"


def _ts(min_ago: float) -> str:
    return _iso(T0 - int(min_ago * MIN))


def training_job(
    *,
    created=20,
    stages=(("scheduling", 20, 19, []), ("preparing", 19, None, ["start pulling image"])),
    events=(),
    log="",
    phase=("Pending", "Creating"),
    pool="",
    jid=JID,
    name="qwen-sft",
    image="swr.cn-north-4.myhuaweicloud.com/team/train:1.0",
):
    wire = job_json(jid, name, *phase, created_min_ago=created, pool=pool, image=image)
    preview = {"content": log, "current_size": len(log), "full_size": len(log)}
    return parse_training_job(
        wire,
        stages_json(jid, list(stages)),
        events_json([_ev(created, "Info", "Job", "Training job created."), *events]),
        preview,
        pool_public=not pool,
        now=NOW,
    )


def findings(*jobs, artifacts=None, now=NOW):
    snap = Snapshot(source="prod", kind="modelarts", taken_at=now, training_jobs=tuple(jobs))
    return list(diagnose(snap, artifacts, now=now))


def of(fs, label):
    return [f for f in fs if f.root_cause == label]


# --------------------------------------------------------------------------- 1. pull, no pod


def test_start_pulling_image_with_no_pod_placed_is_a_scheduling_failure():
    fs = findings(training_job())
    top = fs[0]
    assert top.root_cause == "scheduling_constraint_unsatisfied"
    assert "start pulling image" in top.title and "scheduling failure" in top.title
    assert top.title.startswith("Initializing 20 min")
    texts = " | ".join(e.text for e in top.evidence)
    assert "start pulling image" in texts and "none shows the pod scheduled" in texts
    assert not of(fs, "init_timeout")  # not "still starting"


def test_a_pull_that_really_runs_is_not_called_a_scheduling_failure():
    pulling = training_job(
        events=[
            _ev(19, "Info", "K8S", _pod(JID, "Scheduled", "Successfully assigned to 10.0.0.7")),
            _ev(19, "Info", "K8S", _pod(JID, "Pulling", 'Pulling image "team/train:1.0"')),
        ]
    )
    fs = findings(pulling)
    assert not of(fs, "scheduling_constraint_unsatisfied")
    (slow,) = of(fs, "init_timeout")
    assert "stuck at image pull" in slow.title


def test_a_queued_job_at_the_pull_stage_is_queued_not_a_scheduling_failure():
    queued = training_job(
        events=[
            _ev(19, "Info", "Job", "The training job is queuing and awaiting resource allocation.")
        ]
    )
    fs = findings(queued)
    assert not of(fs, "scheduling_constraint_unsatisfied")
    assert of(fs, "queued_insufficient_resources")


def test_the_stage_message_alone_names_the_pull():
    """The console's stage text (en_message) may carry the words instead of a sub-stage."""
    wire_stages = stages_json(JID, [("scheduling", 20, 19, []), ("preparing", 19, None, [])])
    wire_stages["running_records"][0]["stages"][1]["en_message"] = "Start pulling image"
    j = parse_training_job(
        job_json(JID, "qwen-sft", "Pending", "Creating", created_min_ago=20),
        wire_stages,
        events_json([_ev(20, "Info", "Job", "Training job created.")]),
        None,
        now=NOW,
    )
    assert findings(j)[0].root_cause == "scheduling_constraint_unsatisfied"


# --------------------------------------------------------------------------- 2. silent log


STARTUP = "\n".join(
    [
        f"{_ts(18)} [ModelArts Service Log][init] task worker-0 starting",
        f"{_ts(17.5)} [init] downloading code from obs://team-code/sft/ to /home/ma-user/code",
        f"{_ts(17)} [init] mounting obs://team-data/sft/ at /home/ma-user/inputs/data_url_0",
        f"{_ts(16.9)} [init] mount ready",
        f"{_ts(16.8)} [init] torch.distributed rendezvous: 2 node(s), MASTER_ADDR=worker-0",
    ]
)
RUNNING_STAGES = (("scheduling", 20, 19.5, []), ("preparing", 19.5, None, ["boot"]))
STARTED = [_ev(19, "Info", "K8S", _pod(JID, "Started", "Started container"))]


def test_no_new_startup_log_line_for_ten_minutes_is_its_own_finding_naming_the_line():
    j = training_job(stages=RUNNING_STAGES, events=STARTED, log=STARTUP)
    (f,) = of(findings(j), "startup_log_silent")
    assert f.severity == "warning"  # nothing else names a cause: the timer is the alert
    assert f.title.startswith("No new startup-log line for 16 min (last: ")
    assert "rendezvous" in f.title
    (line,) = [e for e in f.evidence if e.where == "startup log"]
    assert line.line == 5 and "rendezvous: 2 node(s)" in line.text


def test_a_startup_log_that_still_moves_raises_no_timer():
    fresh = STARTUP + f"\n{_ts(2)} [init] rendezvous complete"
    j = training_job(stages=RUNNING_STAGES, events=STARTED, log=fresh)
    assert not of(findings(j), "startup_log_silent")


def test_without_timestamps_the_timer_uses_when_the_poller_saw_the_log_grow():
    import dataclasses

    j = training_job(stages=RUNNING_STAGES, events=STARTED, log="[boot] installing requirements\n")
    quiet = dataclasses.replace(j, log_changed_at=NOW - timedelta(minutes=12))
    (f,) = of(findings(quiet), "startup_log_silent")
    assert "12 min" in f.title and "installing requirements" in f.title
    talking = dataclasses.replace(j, log_changed_at=NOW - timedelta(minutes=3))
    assert not of(findings(talking), "startup_log_silent")


def test_last_line_skips_blank_and_colour_codes():
    assert last_line("a\n\x1b[32mdone\x1b[0m\n\n") == (2, "done", None)


# --------------------------------------------------------------------------- 4. keyword filter


def test_keyword_filter_keeps_storage_lines_with_their_numbers():
    log = "\n".join(
        [
            "[init] starting 4 jobs",  # "jobs" is not "obs"
            "[init] mounting obs://ml-data/coco/ at /obs/ml-data/coco/",
            "epoch 1 loss=2.3",
            "obsfs: AccessDenied: Access Denied (HTTP 403)",
            "s3 error: NoSuchBucket: the bucket ml-dta does not exist",
            'MountVolume.SetUp failed for volume "obs-input"',
            "挂载失败: 权限不足",
        ]
    )
    got = keyword_lines(log)
    assert [n for n, _ in got] == [2, 4, 5, 6, 7]
    assert got[1] == (4, "obsfs: AccessDenied: Access Denied (HTTP 403)")


def test_a_failed_job_with_access_denied_shows_the_mount_lines_of_its_startup_log():
    log = "\n".join(
        [
            f"{_ts(9)} [init] task worker-0 starting",
            f"{_ts(8.9)} [init] mounting obs://ml-data-prod/coco/ at /obs/ml-data-prod/coco/",
            f"{_ts(8.8)} obsfs: AccessDenied: Access Denied (HTTP 403) on bucket ml-data-prod",
            f"{_ts(8.7)} [ModelArts Service Log]Training end with return code: 1",
        ]
    )
    j = training_job(
        created=10,
        phase=("Failed", "Failed"),
        stages=(("scheduling", 10, 9.5, []), ("preparing", 9.5, 9, []), ("running", 9, 8.7, [])),
        events=[_ev(8.7, "Error", "Task", "[worker-0] Training end with return code: 1")],
        log=log,
    )
    (f,) = of(findings(j), "storage_access_denied")
    lines = {e.line: e.text for e in f.evidence if e.where == "startup log"}
    assert 2 in lines and "mounting obs://ml-data-prod/coco/" in lines[2]


# --------------------------------------------------------------------------- 3. baseline diff


def _good_and_stuck():
    good_log = "\n".join(
        [
            f"{_ts(300)} [init] task worker-0 starting",
            f"{_ts(299.9)} [init] code downloaded: 38 files",
            f"{_ts(299.8)} [init] pip install -r requirements.txt",
            f"{_ts(299.2)} [init] installed 14 packages (transformers 4.44.2)",
            f"{_ts(299.1)} [Modelarts Service Log]Training start",
        ]
    )
    good = training_job(
        jid="00000041-aaaa-4bbb-8ccc-000000000041",
        name="gpt2-good",
        created=301,
        phase=("Running", "Running"),
        stages=(
            ("scheduling", 301, 300.5, []),
            ("preparing", 300.5, 299, []),
            ("running", 299, None, []),
        ),
        log=good_log,
        pool="pool-gpu-a",
    )
    stuck_log = "\n".join(
        [
            f"{_ts(18)} [init] task worker-0 starting",
            f"{_ts(17.9)} [init] code downloaded: 38 files",
            f"{_ts(17.8)} [init] pip install -r requirements.txt",
        ]
    )
    stuck = training_job(stages=RUNNING_STAGES, events=STARTED, log=stuck_log, pool="pool-gpu-a")
    store = BaselineStore(persist=False)
    assert store.record(good, NOW) is not None
    return good, stuck, store


def test_the_baseline_diff_is_evidence_of_the_stuck_jobs_findings_and_incident():
    good, stuck, store = _good_and_stuck()
    snap = Snapshot(source="prod", kind="modelarts", taken_at=NOW, training_jobs=(good, stuck))
    evidence = with_startup_diffs({}, snap, store, NOW)
    subject = Subject("training_job", "prod", stuck.job_id)
    assert set(evidence) == {subject}  # the running job is no stuck start
    (arts,) = evidence.values()
    fs = list(diagnose(snap, arts, now=NOW))
    silent = of(fs, "startup_log_silent")[0]
    base = [e.text for e in silent.evidence if e.where == "baseline"]
    assert base and good.job_id in base[0] and "pip install" in base[0]
    assert any("installed 14 packages" in t and "took 36s then" in t for t in base)
    incident = next(i for i in correlate(fs) if i.subject.id == stuck.job_id)
    assert any(e.where == "baseline" for f in incident.findings for e in f.evidence)


def test_no_good_run_kept_means_no_baseline_evidence():
    _, stuck, _ = _good_and_stuck()
    snap = Snapshot(source="prod", kind="modelarts", taken_at=NOW, training_jobs=(stuck,))
    assert with_startup_diffs({}, snap, BaselineStore(persist=False), NOW) == {}


def test_diagnose_training_job_on_the_demo_carries_the_baseline_diff(capsys):
    from cockpit.cli import main

    assert main(["diagnose", "--demo", "--training-job", "gpt2-zh-pretrain-v2", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    lines = [e["text"] for f in out["findings"] for e in f["evidence"] if e["file"] == "baseline"]
    assert any("gpt2" not in t and "pip install -r requirements.txt" in t for t in lines), lines
    assert any("installed 14 packages" in t for t in lines), lines
    # the timer is there, but the dependency failure is the job's one incident
    (timer,) = [f for f in out["findings"] if f["root_cause"] == "startup_log_silent"]
    assert timer["severity"] == "info" and out["findings"][0]["root_cause"] == (
        "dependency_install_failed"
    )


def test_diagnose_training_job_names_the_demo_job_never_placed(capsys):
    from cockpit.cli import main

    assert main(["diagnose", "--demo", "--training-job", "qwen-7b-sft-a100", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    mine = [f for f in out["findings"] if f["subject"].startswith("training job")]
    assert mine[0]["root_cause"] == "scheduling_constraint_unsatisfied"
    assert "start pulling image" in mine[0]["title"]


def test_the_alert_for_a_stuck_start_shows_where_it_stopped_against_the_good_run():
    """What the on-call chat gets when the job crosses the Initializing threshold: the
    verdict's first evidence lines include the good-run diff."""
    import dataclasses

    from cockpit.watch.notify import alert_text
    from cockpit.watch.transitions import detect

    good, stuck, store = _good_and_stuck()
    cur = Snapshot(source="prod", kind="modelarts", taken_at=NOW, training_jobs=(good, stuck))
    prev = dataclasses.replace(cur, taken_at=NOW - timedelta(minutes=15), training_jobs=(good,))
    (arts,) = with_startup_diffs({}, cur, store, NOW).values()
    fs = list(diagnose(cur, arts, now=NOW))
    (alert,) = [a for a in detect(prev, cur, fs, NOW) if a.subject.id == stuck.job_id]
    text = alert_text(alert)
    assert "baseline: vs good run " + good.job_id in text
    assert "stopped after '[init] pip install -r requirements.txt'" in text


async def test_the_live_hub_puts_the_good_run_diff_on_the_stuck_jobs_incident():
    """The poller records good starts (first poll) and hands the diff to the engine as an
    artifact (next poll): the stuck job's incident carries it, as the dashboard shows it."""
    from datetime import UTC, datetime

    from cockpit.demo.site import demo_sources
    from cockpit.runtime.hub import Hub
    from cockpit.watch.baseline import BaselineRecorder

    at = datetime(2026, 11, 29, 20, 31, 0, tzinfo=UTC)
    src = demo_sources(7, clock=lambda: at)[1]
    hub = Hub([src], clock=lambda: at)
    hub.baselines = BaselineRecorder(BaselineStore(persist=False))
    st = hub.states[src.name]
    await hub.poll_once(st)
    await hub.poll_once(st)
    stuck = "5b1c0a4e-7d21-4f3a-9c11-000000000014"
    (inc,) = [i for i in hub.incidents if i.subject.id == stuck]
    lines = [e.text for f in inc.findings for e in f.evidence if e.where == "baseline"]
    assert lines and "vs good run 5b1c0a4e-7d21-4f3a-9c11-000000000013" in lines[0]
