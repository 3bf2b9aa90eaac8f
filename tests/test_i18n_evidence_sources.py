"""The sources the engine names itself in a finding's evidence and a subject's logs (stages,
events, pool nodes, startup log…) read in the language spoken, while files and commands keep
their names (slurmctld.log, sacct) and --json keeps the English key operators script on."""

from __future__ import annotations

import json

from cockpit.cli import main

QWEN = ["diagnose", "--demo", "--training-job", "qwen-7b-sft-a100"]


def _run(capsys, *argv: str) -> str:
    main([*argv])
    return capsys.readouterr().out


def test_training_job_evidence_sources_in_chinese(capsys):
    zh = _run(capsys, *QWEN, "--lang", "zh")
    rows = [ln.strip() for ln in zh.splitlines() if ln.startswith("  ") and "  " in ln.strip()]
    sources = {r.split()[0] for r in rows}
    assert {"启动阶段", "事件", "资源池节点"} <= sources, zh
    assert not {"stages", "events", "pool nodes"} & sources, zh
    en = _run(capsys, *QWEN, "--lang", "en")
    assert "  stages  " in en and "  pool nodes  " in en, en


def test_json_keeps_the_source_names(capsys):
    doc = json.loads(_run(capsys, *QWEN, "--json", "--lang", "zh"))
    files = {e["file"] for f in doc["findings"] for e in f.get("evidence", [])}
    assert {"stages", "events", "pool nodes"} <= files, files


def test_a_file_keeps_its_name_in_chinese(capsys):
    zh = _run(capsys, "diagnose", "--demo", "--cluster", "demo-hpc", "48102", "--lang", "zh")
    assert "slurm-48102.out" in zh or "sacct" in zh, zh
