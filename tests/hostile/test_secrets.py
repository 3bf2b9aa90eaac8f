"""Credentials (AK/SK, tokens, passwords, private keys) never appear in what the cockpit
writes or shows: collect bundles, exported incidents, check-config, logs of a ModelArts poll."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from cockpit.model import (
    Artifacts,
    Evidence,
    Finding,
    Incident,
    LogText,
    SlurmJob,
    Snapshot,
    Subject,
)
from cockpit.safety import redact, redact_bytes, redact_secrets

AK = "QTWAOYTTINDUT2QVKYUC"  # shaped like a Huawei Cloud AK (20 upper-case letters/digits)
SK = "MFyfvK41ba2giqM7Uio6PznpdUKGpownRZlmVmHc"  # shaped like an SK (40 mixed case)
KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
SECRET_LINES = [
    f"export HUAWEICLOUD_SDK_AK={AK}",
    f"HUAWEICLOUD_SDK_SK='{SK}'",
    f"using ak {AK} and sk {SK}",
    "password=hunter2-long",
    'db_password: "s3cr3t-value"',
    "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.abc",
    f"Authorization: SDK-HMAC-SHA256 Access={AK}, "
    "SignedHeaders=host;x-sdk-date, Signature=9f86d081884c7d65",
    "X-Auth-Token: MIIEhQYJKoZIhvcNAQcCoIIEdjCCBHICAQExDTALBglghkgBZQMEAgEwgg",
    "git clone https://ops:Pa55w0rd-x@git.example.com/team/repo.git",
    "AKIAIOSFODNN7EXAMPLE",
    KEY,
]
NEEDLES = [
    AK,
    SK,
    "hunter2-long",
    "s3cr3t-value",
    "ghp_abcdefghij",
    "eyJhbGciOiJIUzI1NiJ9",
    "9f86d081884c7d65",
    "MIIEhQYJKoZIhvcNAQcC",
    "Pa55w0rd-x",
    "AKIAIOSFODNN7EXAMPLE",
    "b3BlbnNzaC1rZXktdjEAAAAA",
]
# evidence that must survive redaction
KEEP = [
    "task=3",
    "mask=0x3",
    "JobId=4812 OOM",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "Exited with exit code 137",
    "StepId=48102.batch",
    "worker-0 exit_code=127",
]


def leaked(text: str) -> list[str]:
    return [n for n in NEEDLES if n in text]


def test_redact_removes_every_credential_shape_and_keeps_evidence():
    text = "\n".join(SECRET_LINES + KEEP)
    out = redact(text)
    assert leaked(out) == []
    for k in KEEP:
        assert k in out, k
    assert out.count("<redacted") >= len(NEEDLES) - 1
    assert leaked(redact_bytes(text.encode()).decode()) == []
    gbk = "密码 password=hunter2-long 完成".encode("gbk")
    assert b"hunter2" not in redact_bytes(gbk) and "完成".encode("gbk") in redact_bytes(gbk)
    assert redact_secrets(f"x {SK} y", [SK, ""]) == "x <redacted> y"


def test_redact_keeps_a_10_mb_line_and_still_finds_the_secret_at_its_end():
    # its speed (no backtracking blow-up on 10 MB) is measured in bench/bench_hostile_text.py
    line = "a_" * 5_000_000 + " password=hunter2"
    out = redact(line)
    assert "hunter2" not in out
    assert out.startswith("a_" * 5_000_000) and "password=" in out


def test_collect_bundle_files_are_redacted(tmp_path):
    from cockpit.commands.collect import write_bundle

    now = datetime(2024, 5, 1, tzinfo=UTC)
    job = SlurmJob(
        "4", "train", "u", "gpu", "FAILED", "NonZeroExitCode", stdout_path="/home/u/slurm-4.out"
    )
    snap = Snapshot("c", "slurm", now, jobs=(job,))
    log = ("\n".join(SECRET_LINES + KEEP) + "\n").encode()
    arts = Artifacts(
        logs=(LogText("slurm-4.out", "stdout", log, path="/home/u/slurm-4.out"),),
        commands={"scontrol show job 4": f"JobId=4 Command=/home/u/run.sh --token={SK}\n"},
    )
    names = write_bundle(str(tmp_path), "4", snap, arts)
    assert "slurm-4.out" in names
    for f in tmp_path.iterdir():
        text = f.read_bytes().decode("utf-8", "replace")
        assert leaked(text) == [], f.name
    assert "StepId=48102.batch" in (tmp_path / "slurm-4.out").read_text()


def _incident() -> Incident:
    subj = Subject("job", "c", "4")
    ev = tuple(
        Evidence("slurm-4.out", line, i + 1, tier=2) for i, line in enumerate(SECRET_LINES[:-1])
    )
    f = Finding(
        "app_error",
        "critical",
        subj,
        "job failed (password=hunter2-long)",
        evidence=ev,
        explanation=f"the script printed sk {SK}",
    )
    return Incident(
        key="k",
        root_cause="app_error",
        severity="critical",
        subject=subj,
        title=f.title,
        findings=(f,),
        affected=(subj,),
        first_seen=datetime(2024, 5, 1, tzinfo=UTC),
    )


def test_exported_incidents_markdown_and_json_are_redacted():
    import json

    from cockpit.report import incidents_json, incidents_markdown

    now = datetime(2024, 5, 1, 1, tzinfo=UTC)
    md = incidents_markdown([_incident()], now)
    assert leaked(md) == [], leaked(md)
    js = json.dumps(incidents_json([_incident()], now))
    assert leaked(js) == [], leaked(js)


def test_check_config_never_prints_key_values(tmp_path, monkeypatch, capsys):
    from cockpit import cli

    monkeypatch.setenv("MY_AK", AK)
    monkeypatch.setenv("MY_SK", SK)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[modelarts.prod]\nregion = "cn-north-4"\nproject_id = "0b1e8c5d2f9a4c6e8d7f0a1b2c3d4e5f"\n'
        'ak_env = "MY_AK"\nsk_env = "MY_SK"\n\n'
        '[clusters.lab]\ntransport = "ssh"\nhost = "127.0.0.1"\n'
        'key = "/root/.ssh/id_ed25519"\n'
    )
    assert cli.main(["check-config", "--config", str(cfg), "--no-poll"]) == 0
    out = capsys.readouterr()
    assert leaked(out.out + out.err) == [] and "MY_SK set" in out.out


async def test_a_modelarts_poll_logs_no_credentials(monkeypatch, caplog, capfd):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from modelarts_server import PROJECT_ID, ModelArtsServer

    from cockpit.modelarts.api import SdkModelArtsApi, SdkSettings
    from cockpit.modelarts.source import ModelArtsSource

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = ModelArtsServer(ak=AK, sk=SK).start()
    try:
        caplog.set_level(logging.DEBUG)
        api = SdkModelArtsApi(
            SdkSettings(
                ak=AK,
                sk="wrong-" + SK[6:],
                project_id=PROJECT_ID,
                endpoint=srv.base_url,
                timeout=(1, 1),
            )
        )
        snap = await ModelArtsSource("ma", api).poll()
        assert snap.error is not None and snap.error.kind == "auth"
        assert leaked(snap.error.message) == [] and SK[6:] not in snap.error.message
    finally:
        srv.stop()
    out = capfd.readouterr()
    logs = "\n".join(r.getMessage() for r in caplog.records)
    assert leaked(logs + out.out + out.err) == [] and SK[6:] not in logs + out.out + out.err


@pytest.mark.lab
async def test_ssh_auth_errors_name_the_key_file_never_its_content(tmp_path, lab_ssh):
    from cockpit.transport import AuthError, SshTransport

    bad = tmp_path / "id_bad"
    bad.write_text(KEY + "\n")
    bad.chmod(0o600)
    t = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        "root",
        str(bad),
        lab_ssh.ssh_known_hosts,
        connect_timeout=3,
        ssh_config=False,
    )
    with pytest.raises(AuthError) as ei:
        await t.run(["true"])
    await t.close()
    assert str(bad) in str(ei.value) and leaked(str(ei.value)) == []


@pytest.mark.parametrize(
    "line, secret",
    [
        ('"Authorization: Bearer abc.def.ghi"', "abc.def.ghi"),
        ("PGPASSWORD=hunter2 psql -h db", "hunter2"),
        ("export DB_PASS=hunter2", "hunter2"),
        ("pass=hunter2", "hunter2"),
        ("./train --password hunter2 --epochs 3", "hunter2"),
        ("mysql -uroot -phunter2 results", "hunter2"),
        ('Password="hunter 2" user=bob', "hunter 2"),
    ],
)
def test_credentials_in_the_usual_shell_forms_are_redacted(line, secret):
    from cockpit.safety import redact

    out = redact(line)
    assert secret not in out and "<redacted>" in out
    assert out.count('"') == line.count('"')  # quotes kept: the line still reads right


@pytest.mark.parametrize(
    "line", ["compass=north", 'bypass: "x y"', "epoch=3 loss=0.2", "mysql -p db"]
)
def test_ordinary_words_that_contain_pass_are_left_alone(line):
    from cockpit.safety import redact

    assert redact(line) == line
