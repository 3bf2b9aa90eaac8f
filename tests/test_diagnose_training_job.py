"""`cockpit diagnose --training-job ID --modelarts NAME`: one ModelArts job's bundle JSON."""

from __future__ import annotations

import json

import pytest

from cockpit.cli import main

STUCK_MOUNT = "5b1c0a4e-7d21-4f3a-9c11-000000000001"  # demo: Initializing 25 min, OBS AccessDenied


def test_training_job_diagnosis_names_the_mount_cause_once(capsys):
    rc = main(
        [
            "diagnose",
            "--demo",
            "--training-job",
            STUCK_MOUNT,
            "--modelarts",
            "demo-modelarts",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert rc == 1  # a critical finding
    assert set(data) == {"findings", "first_error"}
    top = data["findings"][0]
    assert top["root_cause"] == "storage_access_denied"
    assert "ml-data-prod" in top["remedy"]  # the probe names the real bucket, not a placeholder
    # the kubelet's follow-on "timed out waiting for the condition" is evidence, not a second cause
    labels = [f["root_cause"] for f in data["findings"] if f["subject"] == top["subject"]]
    assert labels.count("storage_access_denied") == 1
    assert "storage_connection_error" not in labels and "storage_mount_failed" not in labels
    assert any("AccessDenied" in e["text"] for e in top["evidence"])


def test_unknown_training_job_is_one_clear_line(capsys):
    rc = main(
        ["diagnose", "--demo", "--training-job", "no-such-job", "--modelarts", "demo-modelarts"]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert "no-such-job" in err and "not found" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("name", ["prod"])
def test_unknown_project_is_a_user_error(name, capsys, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[clusters.x]\ntransport = "local"\n')
    rc = main(["diagnose", "--config", str(cfg), "--training-job", "abc", "--modelarts", name])
    assert rc == 2
    assert "prod" in capsys.readouterr().err


def test_training_job_by_name_is_the_same_diagnosis_as_by_id(capsys):
    main(["diagnose", "--demo", "--training-job", STUCK_MOUNT, "--json"])
    by_id = json.loads(capsys.readouterr().out)
    import asyncio

    from cockpit.demo.site import demo_sources

    ma = next(s for s in demo_sources(7) if s.kind == "modelarts")
    (match,) = asyncio.run(ma.find_job(STUCK_MOUNT))  # the id finds the job and gives its name
    assert match[0] == STUCK_MOUNT and match[1]
    rc = main(["diagnose", "--demo", "--training-job", match[1], "--json"])
    by_name = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert [(f["subject"], f["root_cause"]) for f in by_name["findings"]] == [
        (f["subject"], f["root_cause"]) for f in by_id["findings"]
    ]
    assert by_name["findings"][0]["subject"] == f"training job {STUCK_MOUNT}"


def test_unknown_name_says_names_or_ids_are_accepted(capsys):
    assert main(["diagnose", "--demo", "--training-job", "bert-typo"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "cockpit: training job 'bert-typo' not found on "
        "demo-modelarts (give a training job's name or its id)"
    )


def test_ambiguous_name_lists_the_ids():
    import asyncio

    from cockpit.commands.diagnose import _resolve_training_job
    from cockpit.errors import UserError
    from tests.ui_support import BareSource

    class Two(BareSource):
        name = "prod"

        async def find_job(self, wanted):
            return [("id-1", wanted), ("id-2", wanted)]

    with pytest.raises(
        UserError, match=r"2 training jobs on prod are named 'train': give one id: id-1, id-2"
    ):
        asyncio.run(_resolve_training_job(Two(), "train"))


def test_cli_prints_the_evidence_line_whole(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["diagnose", "--demo", "--training-job", STUCK_MOUNT]) == 1
    out = " ".join(capsys.readouterr().out.split())  # undo Rich's wrapping
    assert (
        "Mount /obs/ml-data-prod/coco/ failed: obsfs: AccessDenied: Access Denied (HTTP 403)" in out
    )


def test_evidence_excerpt_keeps_the_matched_phrase_of_a_huge_line():
    from cockpit.commands.diagnose import evidence_excerpt

    short = "x" * 380 + " AccessDenied"
    assert evidence_excerpt(short, "storage_access_denied") == short  # <= 400: whole
    line = "a" * 5000 + " obsfs: AccessDenied: Access Denied (HTTP 403) " + "b" * 5000
    out = evidence_excerpt(line, "storage_access_denied")
    assert len(out) <= 400 and "obsfs: AccessDenied: Access Denied (HTTP 403)" in out
    assert out.startswith("…") and out.endswith("…")
    head = evidence_excerpt("FailedMount early " + "c" * 600 + " AccessDenied", "")
    assert (
        head.startswith("FailedMount early") and len(head) == 400
    )  # match within the cap: plain cut


def test_the_job_asked_about_leads_by_name_and_its_pool_follows(capsys):
    # detr-4gpu-dedicated waits on a fragmented pool that also has an Abnormal node: the answer
    # to "why is this job stuck" is the job's own finding, named as asked; the pool is context
    main(["diagnose", "--demo", "--training-job", "detr-4gpu-dedicated"])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln[:1].isalpha()]
    assert lines[0].startswith("WARNING  training job detr-4gpu-dedicated (")
    assert "pool a100-dedicated fragmented" in " ".join(lines[:2])
    assert any(ln.startswith("CRITICAL pool ") for ln in lines[1:])


def test_an_empty_training_job_name_is_an_error_not_the_whole_site(capsys):
    # a script's `--training-job "$JOB"` with JOB unset printed the whole site's report, exit 0
    assert main(["diagnose", "--demo", "--training-job", ""]) == 2
    err = capsys.readouterr().err
    assert "--training-job needs" in err and "Traceback" not in err


@pytest.mark.parametrize("job", ["qwen-7b-sft-a100", "detr-4gpu-dedicated", "bert-base-zh"])
def test_a_pool_reads_the_same_under_every_job_on_it_as_in_the_incident_list(job, capsys):
    """One verdict per subject: the demo's a100-dedicated pool has an Abnormal node and two
    jobs Initializing on it. ``diagnose --training-job`` read only the asked job, so the pool
    was CRITICAL under a waiting job, WARNING under the running one, and counted 1 job."""
    main(["incidents", "--demo", "--json"])
    site = json.loads(capsys.readouterr().out)
    pool = next(i for i in site["incidents"] if i["root_cause"] == "pool_node_abnormal")
    main(["diagnose", "--demo", "--training-job", job, "--json"])
    data = json.loads(capsys.readouterr().out)
    mine = [f for f in data["findings"] if f["root_cause"] == "pool_node_abnormal"]
    assert len(mine) == 1
    assert mine[0]["severity"] == pool["severity"] == "critical"
    assert f"{pool['affected_count']} job(s) are Initializing" in mine[0]["explanation"]
    # the asked job's own findings only, not those of the jobs the list brought in
    jobs = {f["subject"] for f in data["findings"] if f["subject"].startswith("training job")}
    assert len(jobs) <= 1


def test_a_queued_jobs_info_event_is_not_called_its_first_red_error(capsys):
    """A job queued for public-pool capacity (a warning): its top line is the Info event
    "queuing and awaiting resource allocation", which is not an error."""
    main(["diagnose", "--demo", "--training-job", "sd-xl-4gpu-public"])
    out = capsys.readouterr().out
    assert "queuing and awaiting resource allocation" in out
    assert "first red error" not in out
    assert "where it shows: events:" in out


def test_a_failed_job_list_keeps_the_asked_job_and_says_the_pool_counts_are_partial():
    from cockpit.commands.diagnose import _with_the_other_jobs
    from cockpit.model import Snapshot, SourceError, TrainingJob
    from tests.ui_support import NOW

    err = SourceError("http", "503 Service Unavailable", "POST /training-job-searches")
    failed = Snapshot("ma", "modelarts", NOW, error=err)
    asked = TrainingJob("j1", "asked", "Running", pool_id="p1")
    snap = Snapshot("ma", "modelarts", NOW, training_jobs=(asked,))
    got = _with_the_other_jobs(snap, failed)
    assert got.training_jobs == (asked,)
    (note,) = got.warnings
    assert "503 Service Unavailable" in note and "this job's only" in note


def test_an_image_pull_names_the_image_once_and_says_each_remedy_once(capsys):
    """The registry's own reason (manifest unknown) leads, alone: the label's generic remedy
    followed it and said 'tag spelling' again, and the image was named twice in the why."""
    rc = main(["diagnose", "--demo", "--training-job", "llama-sft-image", "--json"])
    top = json.loads(capsys.readouterr().out)["findings"][0]
    assert rc == 1 and top["root_cause"] == "image_pull_failed"
    image = "pytorch-train:2.1.O-cuda12.1"
    assert top["explanation"].count(image) == 1, top["explanation"]
    assert "manifest unknown" in top["explanation"]
    assert top["remedy"].count("tag spelling") == 1 and "docker manifest inspect" in top["remedy"]
