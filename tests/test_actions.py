"""Guarded actions: the exact argv each action runs, and what is refused before anything runs."""

from __future__ import annotations

import json

import pytest

from cockpit import audit
from cockpit.actions import CATALOGUE, actions_for, build
from cockpit.errors import UserError
from cockpit.model import Subject
from tests.cli_support import run_cockpit

NODE = Subject("node", "lab", "cn013")
JOB = Subject("job", "lab", "48102")


def kind(verb: str):
    return next(k for k in CATALOGUE if k.verb == verb)


def test_drain_runs_scontrol_update_with_the_reason_as_one_argument():
    a = build(kind("drain"), NODE, "  hw: fan FAN2 failed; ticket 4411  ")
    assert a.argv == (
        "scontrol",
        "update",
        "NodeName=cn013",
        "State=DRAIN",
        "Reason=hw: fan FAN2 failed; ticket 4411",
    )
    # what the dialog shows is what a shell would need: the reason quoted, ';' harmless
    assert (
        a.command
        == "scontrol update NodeName=cn013 State=DRAIN 'Reason=hw: fan FAN2 failed; ticket 4411'"
    )


@pytest.mark.parametrize(
    ("verb", "value", "argv"),
    [
        ("resume", "", ("scontrol", "update", "NodeName=cn013", "State=RESUME")),
        ("down", "psu", ("scontrol", "update", "NodeName=cn013", "State=DOWN", "Reason=psu")),
    ],
)
def test_node_actions(verb, value, argv):
    assert build(kind(verb), NODE, value).argv == argv


@pytest.mark.parametrize(
    ("verb", "value", "argv"),
    [
        ("cancel", "", ("scancel", "48102")),
        ("hold", "", ("scontrol", "hold", "48102")),
        ("release", "", ("scontrol", "release", "48102")),
        ("requeue", "", ("scontrol", "requeue", "48102")),
        ("timelimit", "2:00:00", ("scontrol", "update", "JobId=48102", "TimeLimit=2:00:00")),
        ("timelimit", "+30", ("scontrol", "update", "JobId=48102", "TimeLimit=+30")),
        ("timelimit", "1-12:00:00", ("scontrol", "update", "JobId=48102", "TimeLimit=1-12:00:00")),
        ("timelimit", "unlimited", ("scontrol", "update", "JobId=48102", "TimeLimit=UNLIMITED")),
    ],
)
def test_job_actions(verb, value, argv):
    assert build(kind(verb), JOB, value).argv == argv


@pytest.mark.parametrize(
    ("verb", "subject", "value", "says"),
    [
        ("drain", NODE, "", "reason is required"),
        ("drain", NODE, "fan\nState=RESUME", "one line"),
        ("drain", NODE, "fan\u202egnp", "printable"),  # bidi: shows one reason, sends another
        ("drain", NODE, "a\x85b\x9b31m", "printable"),  # C1 controls, an 8-bit CSI
        ("drain", NODE, "fan\u200bok", "printable"),
        ("down", NODE, "x" * 201, "longer than 200"),
        ("drain", Subject("node", "lab", "cn01;reboot"), "r", "node name"),
        ("drain", Subject("node", "lab", "-h"), "r", "node name"),
        ("cancel", Subject("job", "lab", "1 2"), "", "job id"),
        ("timelimit", JOB, "2 hours", "time limit"),
        ("timelimit", JOB, "$(reboot)", "time limit"),
        ("cancel", NODE, "", "not an action on a node"),
    ],
)
def test_refused_before_anything_runs(verb, subject, value, says):
    with pytest.raises(UserError, match=says):
        build(kind(verb), subject, value)


def test_each_subject_kind_offers_its_own_actions():
    assert {k.verb for k in actions_for(NODE)} == {"drain", "resume", "down"}
    assert {k.verb for k in actions_for(JOB)} == {
        "cancel",
        "hold",
        "release",
        "requeue",
        "timelimit",
    }
    assert [k.verb for k in actions_for(Subject("training_job", "ma", "j1"))] == ["stop"]
    assert actions_for(Subject("cluster", "lab", "lab")) == ()


def test_audit_journal_keeps_who_what_and_outcome_redacted(tmp_path, monkeypatch):
    from datetime import UTC, datetime

    monkeypatch.setenv("COCKPIT_OPERATOR", "alice")
    path = tmp_path / "audit.jsonl"
    for ok in (True, False):
        item = audit.entry(
            at=datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
            source="lab",
            subject_kind="node",
            subject_id="cn013",
            action="drain",
            command="scontrol update NodeName=cn013 State=DRAIN 'Reason=password=hunter2'",
            ok=ok,
            exit_status=0 if ok else 1,
            output="" if ok else "Invalid node state specified",
        )
        assert audit.record(item, path) == ""
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and "hunter2" not in path.read_text()
    first = json.loads(lines[0])
    assert first["who"] == "alice" and first["subject"] == "node cn013" and first["ok"] is True
    assert audit.read(path)[1].output == "Invalid node state specified"


def test_an_unwritable_journal_is_reported_not_raised(tmp_path):
    from datetime import UTC, datetime

    blocker = tmp_path / "file"
    blocker.write_text("")
    item = audit.entry(
        at=datetime(2026, 12, 1, tzinfo=UTC),
        source="lab",
        subject_kind="job",
        subject_id="1",
        action="cancel",
        command="scancel 1",
        ok=True,
        exit_status=0,
        output="",
    )
    assert "audit journal" in audit.record(item, blocker / "audit.jsonl")


def test_the_likely_action_comes_first():
    from types import SimpleNamespace

    drained = SimpleNamespace(state="IDLE", flags=("DRAIN",))
    assert actions_for(NODE, drained)[0].verb == "resume"
    assert actions_for(NODE, SimpleNamespace(state="IDLE", flags=()))[0].verb == "drain"
    held = SimpleNamespace(state="PENDING", reason="JobHeldUser")
    assert actions_for(JOB, held)[0].verb == "release"
    # cancel, the dangerous one, is never first: a double-tapped enter must not scancel
    assert actions_for(JOB)[0].verb == "hold" and actions_for(JOB)[-1].verb == "cancel"


def test_check_config_says_which_clusters_allow_actions(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[clusters.a]\ntransport = "local"\nallow_actions = true\n'
        '[clusters.b]\ntransport = "local"\n'
    )
    out = run_cockpit("check-config", "--config", str(cfg), timeout=120).stdout
    line = {ln.split(":")[0].strip(): ln for ln in out.splitlines() if "cluster " in ln}
    assert "actions ON" in line["cluster a"] and "read-only" in line["cluster b"], out


def test_a_job_is_offered_only_what_slurm_would_do_in_its_state():
    from types import SimpleNamespace as Job

    def verbs(state, reason=""):
        return [k.verb for k in actions_for(JOB, Job(state=state, reason=reason))]

    # pending: hold (not release: nobody held it; not requeue: it never ran); cancel last
    assert verbs("PENDING", "PartitionConfig") == ["hold", "timelimit", "cancel"]
    # held: release first, no second hold
    assert verbs("PENDING", "JobHeldAdmin") == ["release", "timelimit", "cancel"]
    assert verbs("RUNNING") == ["requeue", "timelimit", "cancel"]
    # ended: only requeue (scancel or a time limit on it is an error from Slurm)
    assert verbs("FAILED") == ["requeue"]
