"""`cockpit diagnose --training-job ID --modelarts NAME`: one ModelArts job, bundle JSON contract."""

from __future__ import annotations

import json

import pytest

from cockpit.cli import main

STUCK_MOUNT = "5b1c0a4e-7d21-4f3a-9c11-000000000001"  # demo: Initializing 25 min, OBS AccessDenied


def test_training_job_diagnosis_names_the_mount_cause_once(capsys):
    rc = main(["diagnose", "--demo", "--training-job", STUCK_MOUNT, "--modelarts", "demo-modelarts", "--json"])
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
    rc = main(["diagnose", "--demo", "--training-job", "no-such-job", "--modelarts", "demo-modelarts"])
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
