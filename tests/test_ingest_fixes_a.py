"""What an operator sees from ``cockpit diagnose`` / ``cockpit scan-log`` on hostile or mixed
input: no credential or control character leaves the process, a table a job printed before
its log does not hide the log's error, colour codes do not drop jobs, evidence names the
files given, the demo site is never diagnosed in silence, and het/array job ids are job ids."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from cockpit.cli import main

SECRET_LINE = (
    "RuntimeError: CUDA out of memory. password=hunter2 Authorization: Bearer abc.def.ghi "
    "HUAWEICLOUD_SDK_SK=abcdefghijABCDEFGHIJabcdefghijABCDEFGHIJ https://user:pw@host/x "
    "AK=ABCDEFGHIJKLMNOPQRST"
)
SECRETS = (
    "hunter2",
    "abc.def.ghi",
    "abcdefghijABCDEFGHIJabcdefghij",
    ":pw@",
    "ABCDEFGHIJKLMNOPQRST",
)
LOG_TAIL = (
    "Epoch 1 starting\n"
    "Traceback (most recent call last):\n"
    '  File "train.py", line 10, in <module>\n'
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)


@pytest.fixture(autouse=True)
def _no_config(monkeypatch, tmp_path):
    """No user config: the commands fall back to the demo site (and must say so)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err


def no_secret(text: str) -> None:
    for s in SECRETS:
        assert s not in text, s
    assert "<redacted>" in text


# --------------------------------------------------------------------------- 1. secrets


def test_diagnose_never_prints_a_credential_from_a_log(tmp_path, capsys):
    (tmp_path / "slurm-555.out").write_text(f"epoch 1\n{SECRET_LINE}\n")
    rc, out, _ = run(["diagnose", str(tmp_path)], capsys)
    assert rc == 1 and "why:" in out and "first red error:" in out
    no_secret(out)


def test_diagnose_json_never_carries_a_credential_or_a_control_character(tmp_path, capsys):
    line = SECRET_LINE.replace("CUDA", "CU\u202eDA\x7f")
    (tmp_path / "slurm-555.out").write_text(f"epoch 1\n{SECRET_LINE}\n{line}\n")
    rc, out, _ = run(["diagnose", str(tmp_path), "--json"], capsys)
    data = json.loads(out)
    top = data["findings"][0]
    assert top["root_cause"] == "gpu_out_of_memory"
    texts = [top["explanation"], data["first_error"]["text"]]
    texts += [e["text"] for f in data["findings"] for e in f["evidence"]]
    for t in texts:
        no_secret(t)
    assert "\u202e" not in out and "\x7f" not in out and "\\u202e" not in out


def test_diagnose_stdin_redacts(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(f"{SECRET_LINE}\n".encode())))
    _, out, _ = run(["diagnose", "-"], capsys)
    no_secret(out)


@pytest.mark.parametrize("extra", [[], ["--json"], ["--json", "--all"], ["--all"]])
def test_scan_log_redacts(tmp_path, capsys, extra):
    f = tmp_path / "slurm-555.out"
    f.write_text(f"epoch 1\n{SECRET_LINE}\n")
    rc, out, _ = run(["scan-log", str(f), *extra], capsys)
    assert rc == 0  # as grep: an error line was found
    no_secret(out)


# --------------------------------------------------------------------------- 2. table + log

HEADS = {
    "squeue": (
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
        "              4242       gpu    train      bob  R       0:10      1 c01\n"
    ),
    "sacct": "JobID|JobName|Partition|State|ExitCode\n4242|train|gpu|RUNNING|0:0\n",
    "scontrol": (
        "JobId=4242 JobName=train\n"
        "   UserId=bob(1000) GroupId=bob(1000)\n"
        "   JobState=RUNNING Reason=None Dependency=(null)\n"
        "   Partition=gpu NodeList=c01\n"
    ),
    "sinfo": "NODELIST NODES PARTITION STATE\nc01 1 gpu idle\n",
}


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_a_log_that_starts_with_slurm_output_is_still_scanned(tmp_path, capsys, kind):
    head = HEADS[kind]
    (tmp_path / "slurm-4242.out").write_text(head + LOG_TAIL)
    oom_line = head.count("\n") + 4
    rc, out, _ = run(["diagnose", str(tmp_path), "--json"], capsys)
    data = json.loads(out)
    causes = [f["root_cause"] for f in data["findings"]]
    assert "gpu_out_of_memory" in causes, causes
    assert data["first_error"]["line"] == oom_line
    assert "CUDA out of memory" in data["first_error"]["text"]
    subjects = " ".join(f["subject"] for f in data["findings"])
    assert "Epoch" not in subjects and "File" not in subjects and "Traceback" not in subjects


def test_sinfo_followed_by_a_log_invents_no_node(tmp_path):
    from cockpit.ingest.bundle import load_bundle

    (tmp_path / "slurm-42.out").write_text(HEADS["sinfo"] + LOG_TAIL)
    b = load_bundle(str(tmp_path))
    assert [n.name for n in b.snapshot.nodes] == ["c01"]


# --------------------------------------------------------------------------- 3. ANSI


def test_colour_codes_in_a_squeue_table_drop_no_job(tmp_path, capsys):
    (tmp_path / "squeue.txt").write_text(
        "\x1b[1mJOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\x1b[0m\n"
        "\x1b[31m4321\x1b[0m gpu train bob \x1b[1;31mPD\x1b[0m 0:00 1 (Resources)\n"
        "\x1b]0;title\x074322 gpu train bob PD 0:00 1 (Priority)\n"
        "4323 gpu train bob \x1b[1;31mPD\x1b[0m 0:00 1 (Resources)\n"
    )
    _, out, _ = run(["diagnose", str(tmp_path), "--json"], capsys)
    data = json.loads(out)
    got = {f["subject"]: (e["file"], e["line"]) for f in data["findings"] for e in f["evidence"]}
    assert got == {
        "job 4321": ("squeue.txt", 2),
        "job 4322": ("squeue.txt", 3),
        "job 4323": ("squeue.txt", 4),
    }


# --------------------------------------------------------------------------- 4. citations


def test_evidence_names_the_sacct_file_it_came_from(tmp_path, capsys):
    (tmp_path / "sacct.txt").write_text(
        "JobID|JobName|Partition|State|ExitCode\n900|train|gpu|FAILED|1:0\n"
    )
    _, out, _ = run(["diagnose", str(tmp_path), "--json"], capsys)
    files = {e["file"] for f in json.loads(out)["findings"] for e in f["evidence"]}
    assert files == {"sacct.txt"}
    _, text, _ = run(["diagnose", str(tmp_path)], capsys)
    assert "squeue" not in text and "sacct.txt:2" in text


def test_evidence_names_the_sinfo_file_and_row(tmp_path, capsys):
    (tmp_path / "nodes.txt").write_text("NODELIST NODES PARTITION STATE\nc01 1 gpu drain\n")
    _, out, _ = run(["diagnose", str(tmp_path), "--json"], capsys)
    ev = [(e["file"], e["line"]) for f in json.loads(out)["findings"] for e in f["evidence"]]
    assert ev and all(e == ("nodes.txt", 2) for e in ev)
    _, text, _ = run(["diagnose", str(tmp_path)], capsys)
    assert "scontrol show node" not in text


# --------------------------------------------------------------------------- 5. demo said


def test_a_job_id_without_config_says_it_is_the_demo(capsys):
    main(["diagnose", "48104"])
    err = capsys.readouterr().err
    assert "no config" in err and "demo" in err


def test_the_overview_without_config_says_it_is_the_demo(capsys):
    rc, out, err = run(["diagnose"], capsys)
    assert rc == 1 and out  # the demo overview: critical incidents open (as `incidents`)
    assert err.count("\n") == 1 and "showing the built-in demo site" in err


def test_demo_flag_is_not_announced(capsys):
    rc, _, err = run(["diagnose", "--demo"], capsys)
    assert rc == 1 and err == ""


# --------------------------------------------------------------------------- 6. job ids


@pytest.mark.parametrize("jid", ["77+1", "123_4", "123_[1-10%2]"])
def test_het_and_array_job_ids_are_job_ids(capsys, jid):
    main(["diagnose", jid, "--demo"])
    err = capsys.readouterr().err
    assert "no such file" not in err
    assert jid in err  # "job 77+1 not found on demo-hpc" or a refusal naming the id


def test_a_path_like_argument_that_does_not_exist_is_still_a_missing_file(capsys):
    assert main(["diagnose", str(Path("no") / "such.log")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
