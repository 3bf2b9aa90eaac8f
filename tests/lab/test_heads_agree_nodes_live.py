"""Live, on the host's Slurm 22.05 lab: every head says the same thing about sick nodes and
the jobs they touch, at the same moment.

The situations an on-call operator meets one level up from a single job, made for real:

- a job fails on c2, then an operator drains c2: the drain is not that job's cause;
- c4 drained, resumed, drained again: the node's verdict is about the second drain only;
- slurmd on c3 stopped under a running ``--requeue`` job: c3 is "not responding" (slurmd was
  stopped), never the startup's benign "configuration differs" line, and the job slurmctld
  requeued (NODE_FAIL) is that node's casualty, not "waiting for its --begin time";
- a TIMEOUT: never "exited normally", its remedy starts from the time limit;
- an OOM kill whose MaxRSS sacct never recorded: the remedy does not size from 0.

`cockpit incidents --json`, `snapshot --json`, `watch --once --json`, `diagnose JOB --json`
and the TUI (Pilot) are asked side by side: each subject has one cause, severity, title and
first-seen in all of them. Then slurmctld is stopped and started again: the heads say it is
unreachable (exit 1, no traceback) and afterwards agree as before.

Skipped with a reason when the lab is not up; puts every node and daemon back as it found it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import LabEnv, wait_for

pytestmark = pytest.mark.lab

FINAL = {"FAILED", "COMPLETED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"}
RUN = f"{os.getpid() % 100000:05d}"


def _scontrol(lab: LabEnv, node: str, state: str, reason: str = "") -> None:
    argv = ["scontrol", "update", f"NodeName={node}", f"State={state}"]
    lab.run(*argv, *([f"Reason={reason}"] if reason else []))


def _slurmd_pid(lab: LabEnv, node: str) -> int:
    return int((lab.dir / "run" / f"slurmd-{node}.pid").read_text().split()[0])


@pytest.fixture(scope="module")
def site(lab_env: LabEnv, tmp_path_factory):
    root = tmp_path_factory.mktemp("heads-nodes")
    cfg = root / "config.toml"
    cfg.write_text(
        "[clusters.lab]\n"
        'transport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\n'
        f'slurmd_log = "{lab_env.slurmd_log_pattern}"\n'
        "backfill_hours = 1\n"
    )
    jobs: dict[str, str] = {}
    try:
        # the slow one first: slurmctld ends a 1-minute job between 60 and ~100 s
        jobs["timeout"] = lab_env.sbatch(
            "-p", "debug", "-w", "c1", "-t", "1", "-J", f"hn-timeout{RUN}", "--wrap", "sleep 300"
        )
        jobs["oom"] = lab_env.sbatch(
            "-p", "debug", "-w", "c1", "-t", "2", "--mem=100M", "-J", f"hn-oom{RUN}",
            "--wrap", "perl -e '$x = \"x\" x (400*1024*1024); sleep 5'",
        )  # fmt: skip
        jobs["ended"] = lab_env.sbatch(
            "-p", "debug", "-w", "c2", "-t", "1", "-J", f"hn-ended{RUN}", "--wrap", "exit 3"
        )
        jobs["requeued"] = lab_env.sbatch(
            "-p", "batch", "-w", "c3", "--requeue", "-t", "5", "-J", f"hn-requeue{RUN}",
            "--wrap", "sleep 600",
        )  # fmt: skip
        lab_env.wait_state(jobs["ended"], FINAL, 60)
        lab_env.wait_state(jobs["oom"], FINAL, 60)
        lab_env.wait_state(jobs["requeued"], {"RUNNING"}, 60)
        time.sleep(1.5)  # the drain's reason time is after the failed job's end
        _scontrol(lab_env, "c2", "DRAIN", f"heads-maint-{RUN}")
        _scontrol(lab_env, "c4", "DRAIN", f"heads-first-{RUN}")
        time.sleep(1.5)
        _scontrol(lab_env, "c4", "RESUME")
        time.sleep(1.5)
        _scontrol(lab_env, "c4", "DRAIN", f"heads-second-{RUN}")
        os.kill(_slurmd_pid(lab_env, "c3"), signal.SIGTERM)
        # SlurmdTimeout=30: slurmctld marks c3 DOWN and requeues the job
        wait_for(
            lambda: lab_env.job_state(jobs["requeued"])[0] == "PENDING",
            120,
            "slurmctld to requeue the job of the stopped slurmd",
        )
        lab_env.wait_state(jobs["timeout"], FINAL, 150)
        env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(root / "state"), "COLUMNS": "200"}
        yield {"jobs": jobs, "config": str(cfg), "env": env, "root": root}
    finally:
        for node in ("c2", "c4"):
            lab_env.run("scontrol", "update", f"NodeName={node}", "State=RESUME", check=False)
        lab_env.scancel(*jobs.values())
        lab_env.slurm_up()  # restarts c3's slurmd (ReturnToService=2 puts it back in service)


def _cockpit(
    site: dict, *argv: str, codes: tuple[int, ...] = (0, 1)
) -> subprocess.CompletedProcess:
    res = subprocess.run(
        [sys.executable, "-m", "cockpit", *argv, "--config", site["config"]],
        capture_output=True,
        text=True,
        timeout=180,
        env=site["env"],
        cwd=str(Path(site["config"]).parent),
    )
    assert res.returncode in codes, (argv, res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    return res


def _incident_of(incidents: list[dict], kind: str, sid: str) -> dict:
    """The one incident of the subject: a node's own; a job's own or the one it was folded
    into (a job's incident also lists the nodes it ran on: not theirs)."""
    mine = [
        i
        for i in incidents
        if (i["subject"]["kind"], i["subject"]["id"]) == (kind, sid)
        or (
            kind == "job"
            and any((a["kind"], a["id"]) == (kind, sid) for a in i.get("affected", []))
        )
    ]
    assert len(mine) == 1, (kind, sid, [i["title"] for i in mine])
    return mine[0]


def _heads(site: dict) -> dict:
    """What the CLI heads say now: verdicts by subject, incidents, alert findings."""
    snapshot = json.loads(_cockpit(site, "snapshot", "--json").stdout)
    verdicts = {
        (v["subject"]["kind"], v["subject"]["id"]): v for s in snapshot for v in s["verdicts"]
    }
    incidents = json.loads(_cockpit(site, "incidents", "--json").stdout)["incidents"]
    out = _cockpit(site, "watch", "--once", "--json").stdout
    alerts = [json.loads(line) for line in out.splitlines() if line.strip()]
    alerted = {
        (a["finding"]["subject"]["kind"], a["finding"]["subject"]["id"]): a["finding"]
        for a in alerts
        if a.get("finding")
    }
    return {"verdicts": verdicts, "incidents": incidents, "alerted": alerted}


def _same(a: dict, b: dict, what: str) -> None:
    for k in ("root_cause", "severity", "title", "first_seen"):
        assert a.get(k) == b.get(k), (what, k, a.get(k), b.get(k))


def test_every_head_says_the_same_about_sick_nodes_and_their_jobs(site):
    jobs = site["jobs"]
    h = _heads(site)
    v, incidents = h["verdicts"], h["incidents"]

    # c2: drained by an operator after the job failed there: not the job's cause
    c2 = v[("node", "c2")]
    # an operator's drain, whatever earlier tests' jobs did on c2
    assert c2["root_cause"] == "node_drain_admin" and f"heads-maint-{RUN}" in c2["title"], c2
    c2_inc = _incident_of(incidents, "node", "c2")
    assert not any(a["id"] == jobs["ended"] for a in c2_inc.get("affected", [])), c2_inc
    assert _incident_of(incidents, "job", jobs["ended"])["subject"]["kind"] != "node"

    # c4: the second drain, with nothing of the first
    c4 = v[("node", "c4")]
    assert f"heads-second-{RUN}" in c4["title"] and f"heads-first-{RUN}" not in c4["title"], c4
    c4_inc = _incident_of(incidents, "node", "c4")
    assert f"heads-first-{RUN}" not in json.dumps(c4_inc), c4_inc

    # c3: slurmd stopped; not the benign startup note; the requeued job is its casualty
    c3 = v[("node", "c3")]
    assert c3["root_cause"] == "node_not_responding", c3
    assert "slurmd was stopped" in c3["title"] and "config" not in c3["title"], c3["title"]
    rq = v[("job", jobs["requeued"])]
    assert rq["root_cause"] == "node_not_responding" and "node c3 failed" in rq["title"], rq
    assert "begin" not in rq["title"].lower(), rq
    c3_inc = _incident_of(incidents, "node", "c3")
    assert any(a["id"] == jobs["requeued"] for a in c3_inc["affected"]), c3_inc

    # every head: one cause, severity, title and first-seen per subject
    subjects = [("node", n) for n in ("c2", "c3", "c4")] + [("job", j) for j in jobs.values()]
    for key in subjects:
        verdict = v[key]
        if key in h["alerted"]:
            _same(verdict, h["alerted"][key], f"watch --json {key}")
        if key[0] == "job":
            report = json.loads(
                _cockpit(site, "diagnose", key[1], "--cluster", "lab", "--json").stdout
            )
            top = next(f for f in report["findings"] if f["subject"] == f"job {key[1]}")
            _same(verdict, top, f"diagnose {key}")
            if key[1] == jobs["timeout"]:
                assert "exited normally" not in top["explanation"], top
                limit = re.search(r"--time=(\d+):(\d\d):(\d\d)", top["remedy"])
                assert limit and int(limit[1]) * 60 + int(limit[2]) > 1, top["remedy"]
            if key[1] == jobs["oom"]:
                assert verdict["root_cause"] == "oom_killed", verdict
                assert "peak MaxRSS 0" not in top["remedy"], top["remedy"]
        # a subject's own incident (not one it was folded into) carries its verdict
        inc = _incident_of(incidents, *key)
        if (inc["subject"]["kind"], inc["subject"]["id"]) == key:
            assert inc["root_cause"] == verdict["root_cause"], (key, inc, verdict)
            assert inc["severity"] == verdict["severity"], (key, inc, verdict)


async def test_the_tui_says_what_the_cli_heads_say_about_them(site, lab_env, tmp_path, monkeypatch):
    from cockpit.app import CockpitApp
    from cockpit.config import load_config
    from cockpit.connect import build_sources
    from cockpit.store import open_store
    from cockpit.store.acks import AckStore
    from tests.conftest import await_for

    h = _heads(site)  # now, just before the TUI polls
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    # the sources the CLI heads build from the same config (sacct backfill included)
    (src,) = build_sources(load_config(site["config"]))
    app = CockpitApp(
        [src], bell=False, acks=AckStore(tmp_path / "acks.json"), store=open_store("sqlite://")
    )
    jobs = site["jobs"]
    subjects = [("node", n) for n in ("c2", "c3", "c4")] + [("job", j) for j in jobs.values()]
    async with app.run_test(size=(160, 48)) as pilot:
        await await_for(lambda: app.hub.states["lab"].settled, 120, "the TUI's first poll")
        st = app.hub.states["lab"]
        incidents = {
            (s.kind, s.id): i
            for i in app.hub.incidents
            for s in (i.subject, *(a for a in i.affected if a.kind == "job"))
        }
        for kind, sid in subjects:
            f = st.verdicts[(kind, "lab", sid)]
            tui = {
                "root_cause": f.root_cause,
                "severity": f.severity,
                "title": f.title,
                "first_seen": f.first_seen.isoformat() if f.first_seen else None,
            }
            _same(h["verdicts"][(kind, sid)], tui, f"TUI {kind} {sid}")
            cli_inc = _incident_of(h["incidents"], kind, sid)
            tui_inc = incidents[(kind, sid)]
            assert tui_inc.title == cli_inc["title"], (kind, sid, tui_inc.title, cli_inc)
            assert tui_inc.root_cause == cli_inc["root_cause"], (kind, sid)
            assert tui_inc.severity == cli_inc["severity"], (kind, sid)
            first = tui_inc.first_seen.isoformat() if tui_inc.first_seen else None
            assert first == cli_inc["first_seen"], (kind, sid, first, cli_inc["first_seen"])
        await pilot.press("Q")


def test_controller_stopped_then_back(site, lab_env):
    """slurmctld stopped: the heads say the cluster is unreachable (exit 3: no source
    answered; one line, no traceback); started again, they give the timed-out job the cause
    they gave before."""
    before = json.loads(_cockpit(site, "snapshot", "--json").stdout)
    cause = {v["subject"]["id"]: v["root_cause"] for s in before for v in s["verdicts"]}[
        site["jobs"]["timeout"]
    ]
    os.kill(lab_env.ctld_pid(), signal.SIGTERM)
    try:
        wait_for(
            lambda: lab_env.run("scontrol", "ping", check=False).stdout.count("DOWN"),
            30,
            "slurmctld to stop",
        )
        res = _cockpit(site, "incidents", "--json", codes=(3,))  # no source answered
        assert "unreachable" in res.stderr.lower() or "contact" in res.stderr.lower(), res.stderr
        _cockpit(site, "watch", "--once", "--json", codes=(3,))
        _cockpit(site, "snapshot", "--json", codes=(3,))
    finally:
        lab_env.slurm_up()
    after = json.loads(_cockpit(site, "snapshot", "--json").stdout)
    again = {v["subject"]["id"]: v["root_cause"] for s in after for v in s["verdicts"]}
    assert again[site["jobs"]["timeout"]] == cause
