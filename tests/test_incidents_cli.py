"""``cockpit incidents`` and the incident report (JSON contract, ticket Markdown)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from cockpit.widgets.fmt import age as fmt_age

from cockpit.model import Evidence, Finding, Incident, Subject
from cockpit.report import incidents_json, incidents_markdown, md_escape

NOW = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)


def _incident(
    label: str, severity: str, sid: str, minutes_ago: int, title: str = "", evidence=(), affected=()
):
    subj = Subject("job", "demo-hpc", sid)
    f = Finding(
        label,
        severity,
        subj,
        title or f"{label} on {sid}",
        explanation="why",
        remedy="--mem=80G",
        evidence=tuple(evidence),
        first_seen=NOW - timedelta(minutes=minutes_ago),
    )
    return Incident(f.key, label, severity, subj, f.title, (f,), tuple(affected), f.first_seen)


def test_json_is_sorted_most_severe_then_oldest_and_keeps_the_contract():
    incs = [
        _incident("pending_priority", "info", "3", 50),
        _incident("time_limit", "critical", "2", 5),
        _incident(
            "oom_killed", "critical", "1", 30, evidence=[Evidence("slurm-1.out", "Killed", line=4)]
        ),
        _incident("queued_insufficient_resources", "warning", "4", 40),
    ]
    doc = incidents_json(incs, NOW, acked={incs[1].key})
    assert [i["root_cause"] for i in doc["incidents"]] == [
        "oom_killed",
        "time_limit",
        "queued_insufficient_resources",
        "pending_priority",
    ]
    first = doc["incidents"][0]
    assert first["subject"] == {"kind": "job", "source": "demo-hpc", "id": "1"}
    assert first["findings"][0]["evidence"] == [
        {"file": "slurm-1.out", "line": 4, "text": "Killed"}
    ]
    assert set(first["findings"][0]) >= {
        "root_cause",
        "severity",
        "subject",
        "title",
        "explanation",
        "remedy",
        "evidence",
    }
    assert doc["incidents"][1]["acknowledged"] is True and first["acknowledged"] is False
    json.dumps(doc)  # serialisable as is


def test_markdown_escapes_user_text_and_fences_evidence():
    hostile = "[click](http://evil) **bold** # \x1b[31mred\x1b[0m | pipe"
    ev = [Evidence("slurm-9.out", "```` fence breaker ``` and \x1b]52;c;aGk=\x07", line=12)]
    inc = _incident(
        "command_not_found",
        "critical",
        "9",
        3,
        title=hostile,
        evidence=ev,
        affected=[Subject("job", "demo-hpc", "9"), Subject("job", "demo-hpc", "10")],
    )
    md = incidents_markdown([inc], NOW, acked={inc.key})
    assert "\x1b" not in md
    assert "[click](http" not in md and r"\[click\](http" in md  # escaped brackets: no link
    assert "(acknowledged)" in md and "`command_not_found`" in md and "**Affected (2):**" in md
    lines = md.splitlines()
    start = lines.index("**Evidence:**") + 2
    assert (
        lines[start] == "`````" and lines[start + 2] == "`````"
    )  # fence longer than the ```` inside
    assert lines[start + 1].startswith("slurm-9.out:12: ````")
    assert md_escape("a_b*c") == r"a\_b\*c"


def test_markdown_keeps_commands_flags_and_ids_readable():
    f = Finding(
        "pending_partition_limit",
        "critical",
        Subject("job", "demo-hpc", "48101"),
        "never runs: 64 CPUs > MaxCPUsPerNode 48",
        explanation="# not a heading: job_name my_job *x* <b>",
        remedy=(
            "Lower --cpus-per-task / --mem=80G on demo-hpc, or run `squeue --start -j 48101` (a|b)."
        ),
    )
    inc = Incident(
        f.key,
        f.root_cause,
        f.severity,
        f.subject,
        f.title,
        (f,),
        (Subject("job", "demo-hpc", "7"),),
        NOW,
    )
    md = incidents_markdown([inc], NOW)
    assert (
        "- **Subject:** `job 48101 @demo-hpc`" in md and "**Affected (1):** `job 7 @demo-hpc`" in md
    )
    assert (
        "**What to do:** Lower `--cpus-per-task` / `--mem=80G` on demo-hpc, or run "
        "`squeue --start -j 48101` (a\\|b)."
    ) in md
    assert "\n\\# not a heading: job\\_name my\\_job \\*x\\* \\<b\\>\n" in md
    assert "\\-" not in md and "MaxCPUsPerNode 48" in md
    # a backtick run inside a code span gets a longer fence
    from cockpit.report import md_code

    assert md_code("a``b") == "```a``b```" and md_code("`x") == "`` `x ``"


def test_markdown_for_no_incidents_says_so():
    md = incidents_markdown([], NOW)
    assert "0 incident(s)" in md and "##" not in md


def _run_cli(argv: list[str]) -> str:
    from cockpit.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        # 1: the demo's site has critical incidents open (0 would be "nothing to act on")
        assert main(argv) == 1
    return buf.getvalue()


def test_incidents_demo_json_names_causes_from_fetched_logs():
    doc = json.loads(_run_cli(["incidents", "--demo", "--json"]))
    by_id = {i["subject"]["id"]: i for i in doc["incidents"]}
    # the OOM job's stdout says only "Killed": sacct and the log, fetched by the core, say why
    assert by_id["48102"]["root_cause"] == "oom_killed"
    # exit 127 becomes the program's name only from its slurm-*.out
    assert by_id["48104"]["root_cause"] == "command_not_found"
    assert "fastqc" in by_id["48104"]["title"]


def test_incidents_demo_markdown_and_table():
    md = _run_cli(["incidents", "--demo", "--markdown"])
    assert md.startswith("# Cockpit incident report") and "`oom_killed`" in md
    table = _run_cli(["incidents", "--demo"])
    assert "oom_killed" in table and "incident(s)" in table


def test_incidents_demo_cluster_filter():
    doc = json.loads(_run_cli(["incidents", "--demo", "--cluster", "demo-modelarts", "--json"]))
    assert all(i["subject"]["source"] == "demo-modelarts" for i in doc["incidents"])
    assert "48102" not in {i["subject"]["id"] for i in doc["incidents"]}  # demo-hpc was not polled


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    """The ack files live here: the real one (state.json) and the demo's (state-demo.json)."""
    import cockpit.store.acks

    monkeypatch.setattr(cockpit.store.acks, "default_state_path", lambda: tmp_path / "state.json")
    return tmp_path


def test_incidents_agree_with_the_tui_on_count_clock_and_acks(state_dir, monkeypatch):
    from cockpit.demo.site import DEMO_START
    from cockpit.incident_views import incident_rows
    from cockpit.store import open_store

    monkeypatch.setenv("COLUMNS", "250")  # one table row per line
    first = json.loads(_run_cli(["incidents", "--demo", "--json"]))
    key = next(i["key"] for i in first["incidents"] if i["subject"]["id"] == "48101")
    # what `a` in the TUI's demo incident view writes: the demo's own store, not the real one
    open_store(demo=True).ack(key, "ana", "", DEMO_START)
    open_store().ack("some|real|site|key", "ana", "", DEMO_START)
    doc = json.loads(_run_cli(["incidents", "--demo", "--json"]))
    # the demo's clock, not the wall clock: ages agree with the TUI's
    assert abs((datetime.fromisoformat(doc["generated_at"]) - DEMO_START).total_seconds()) < 60
    acked = {i["key"] for i in doc["incidents"] if i["acknowledged"]}
    assert acked == {key}
    # the affected count is the TUI table's
    incs = [
        Incident(
            i["key"],
            i["root_cause"],
            i["severity"],
            Subject(**i["subject"]),
            i["title"],
            (),
            tuple(Subject(**a) for a in i["affected"]),
            None,
        )
        for i in doc["incidents"]
    ]
    tui = {r.key: r.cells[5] for r in incident_rows(incs, acked)}
    assert all(str(i["affected_count"]) == tui[i["key"]] for i in doc["incidents"])
    assert all(i["affected_count"] >= 1 for i in doc["incidents"])
    table = _run_cli(["incidents", "--demo"])
    assert "1 acknowledged" in table
    row = next(ln for ln in table.splitlines() if "48101" in ln)
    # the age in the TUI's words (3h10m ago), from the demo's clock, not the wall clock's
    shown = row.split(" ago")[0].split()[-1]
    expected = (
        DEMO_START
        - datetime.fromisoformat(next(i for i in doc["incidents"] if i["key"] == key)["first_seen"])
    ).total_seconds()
    assert shown in {fmt_age(expected - 60), fmt_age(expected), fmt_age(expected + 60)}, row
    assert row.rstrip(" │").endswith("yes")


def test_no_source_answering_is_not_all_clear(tmp_path, capsys):
    cfg = tmp_path / "dead.toml"
    cfg.write_text(
        '[clusters.dead]\ntransport = "ssh"\nhost = "127.0.0.1"\nport = 1\nconnect_timeout = 2\n'
    )
    from cockpit.cli import main as cli_main

    # 3: no source answered (not 0, all clear; not 2, a usage error; not 1, a partial list)
    assert cli_main(["incidents", "--config", str(cfg), "--json"]) == 3
    assert "dead" in capsys.readouterr().err


def test_a_reader_that_leaves_early_gets_no_traceback():
    """`cockpit incidents --demo --json | head -c 100`: the pipe closes under us."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "incidents", "--demo", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_diagnose_one_job_keeps_to_that_job(capsys):
    """A queue surge elsewhere on the site is not part of job 48104's diagnosis; a starved
    job's own site finding is part of its."""
    from cockpit.cli import main

    assert main(["diagnose", "48104", "--demo", "--json"]) in (0, 1)
    subjects = {f["subject"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert subjects == {"job 48104"}
    assert main(["diagnose", "48120", "--demo", "--json"]) in (0, 1)
    causes = [f["root_cause"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert causes and causes[0] == "backfill_starvation"


def test_the_incident_table_marks_what_left_the_live_data(capsys):
    """A job slurmctld forgot stays listed until acknowledged: the table says it is gone, as
    the incident view does, instead of looking like a live failure."""
    from datetime import UTC, datetime

    from cockpit.commands.incidents import _table
    from cockpit.model import Finding, Incident, Subject
    from cockpit.store.types import StoredIncident

    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    s = Subject("job", "lab", "20")
    f = Finding("command_not_found", "critical", s, "bwa-mem2: command not found")
    gone = Incident("job|lab|20|x", "command_not_found", "critical", s, f.title, (f,))
    live = Incident("job|lab|21|x", "command_not_found", "critical", s, "other", (f,))
    stored = {
        gone.key: StoredIncident(gone, now, now, True, now),
        live.key: StoredIncident(live, now, now),
    }
    _table([gone, live], now, stored=stored)
    out = capsys.readouterr().out
    assert "bwa-mem2: command not found (gone)" in out
    assert "other (gone)" not in out and "other (resolved)" not in out


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a terminal")
def test_an_80_column_terminal_gets_a_table_a_person_can_read(tmp_path):
    # at 80 columns every column folded: the title was ~10 cells a line, 24 incidents took
    # 155 lines; now the root cause makes way and the title has room
    cmd = f"stty cols 80 rows 40; {sys.executable} -m cockpit incidents --demo"
    out = subprocess.run(
        ["script", "-qc", cmd, "/dev/null"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
    ).stdout
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    lines = plain.splitlines()
    n = int(re.search(r"(\d+) incident\(s\)", plain).group(1))
    assert len(lines) < 4 * n  # a few lines per incident, not seven
    assert all(len(ln) <= 80 for ln in lines)
    # the subject on its line, whole, the title under it, whole
    at = next(k for k, ln in enumerate(lines) if "job 48101 @demo-hpc" in ln)
    assert "never runs: 64 CPUs > MaxCPUsPerNode 48" in lines[at + 1]
    assert any("training job gpt2-zh-pretrain-v2 @demo-modelarts" in ln for ln in lines)
    assert not any("…" in ln for ln in lines)


def test_the_cli_and_a_fresh_tui_fetch_the_same_evidence():
    """Same evidence in the first round, same verdicts: a fresh TUI must not show symptoms
    where `cockpit incidents` names causes."""
    from cockpit.commands.incidents import MAX_ARTIFACTS
    from cockpit.runtime.evidence import FIRST_ROUND_EVIDENCE, EvidenceCache

    assert MAX_ARTIFACTS == FIRST_ROUND_EVIDENCE == EvidenceCache().first_budget
