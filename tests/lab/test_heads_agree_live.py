"""Live, on the host's Slurm 22.05 lab: every head says the same thing about a failed job.

Jobs that fail in ways an operator tells apart (three different missing programs, a 20-task
array of a fourth, a segfault, a job killed by signal 53) are diagnosed by `cockpit incidents
--json`, `snapshot --json`, `watch --once --json` and `diagnose JOB --json` side by side:
each job has one cause in all of them, and the incidents are one per failure signature, not
one per cause.

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LabEnv

pytestmark = pytest.mark.lab

FINAL = {"FAILED", "COMPLETED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"}
# this run's own names: jobs of an earlier run stay in squeue for MinJobAge
RUN = f"{os.getpid() % 100000:05d}"
PROGRAMS = tuple(f"heads_tool_{x}{RUN}" for x in ("aa", "bb", "cc"))
ARRAY_PROGRAM = f"heads_array_prog_zz{RUN}"


@pytest.fixture(scope="module")
def site(lab_env: LabEnv, tmp_path_factory) -> dict:
    """The failed jobs (name -> job ids) and a config and state dir of their own."""
    root = tmp_path_factory.mktemp("heads")
    cfg = root / "config.toml"
    cfg.write_text(
        "[clusters.lab]\n"
        'transport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\n'
        f'slurmd_log = "{lab_env.slurmd_log_pattern}"\n'
        "backfill_hours = 1\n"
    )
    jobs: dict[str, list[str]] = {}
    for prog in PROGRAMS:
        jobs[prog] = [
            lab_env.sbatch("-p", "debug", "-t", "1", "-J", f"h-{prog}", "--wrap", f"{prog} --x")
        ]
    array = lab_env.sbatch(
        "-p", "debug", "-t", "1", "-a", "1-20", "-J", "h-array", "--wrap", f"{ARRAY_PROGRAM} -v"
    )
    jobs["segv"] = [
        lab_env.sbatch("-p", "debug", "-t", "1", "-J", "h-segv", "--wrap", "kill -SEGV $$")
    ]
    jobs["sig53"] = [
        lab_env.sbatch("-p", "debug", "-t", "1", "-J", "h-sig53", "--wrap", "kill -53 $$")
    ]
    jobs["oom"] = [
        lab_env.sbatch(
            "-p", "batch", "-t", "2", "--mem=100M", "-J", "h-oom",
            "--wrap", "perl -e '$x = \"x\" x (400*1024*1024); sleep 5'",
        )
    ]  # fmt: skip
    for ids in jobs.values():
        lab_env.wait_state(ids[0], FINAL, 120)
    tasks = [f"{array}_{i}" for i in range(1, 21)]
    for t in tasks:
        lab_env.wait_state(t, FINAL, 180)
    jobs[ARRAY_PROGRAM] = tasks
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(root / "state"), "COLUMNS": "200"}
    return {"jobs": jobs, "config": str(cfg), "env": env}


def _cockpit(site: dict, *argv: str, codes: tuple[int, ...] = (0, 1)) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "cockpit", *argv, "--config", site["config"]],
        capture_output=True,
        text=True,
        timeout=180,
        env=site["env"],
        cwd=str(Path(site["config"]).parent),
    )
    assert res.returncode in codes, (argv, res.returncode, res.stderr[-2000:])
    return res.stdout


def _incident_of(incidents: list[dict], job_id: str) -> dict:
    """The one incident naming ``job_id`` (as its subject or among those it affects)."""
    mine = [
        i
        for i in incidents
        if i["subject"]["id"] == job_id
        or any(a["id"] == job_id for a in i.get("affected", []) if a.get("kind") == "job")
    ]
    assert len(mine) == 1, (job_id, [i["title"] for i in mine])
    return mine[0]


def test_heads_give_each_job_one_cause_and_incidents_are_one_per_signature(site):
    jobs = site["jobs"]
    incidents = json.loads(_cockpit(site, "incidents", "--json"))["incidents"]
    snapshot = json.loads(_cockpit(site, "snapshot", "--json"))
    verdicts = {v["subject"]["id"]: v for s in snapshot for v in s["verdicts"]}
    alerts = [json.loads(line) for line in _cockpit(site, "watch", "--once", "--json").splitlines()]
    alerted = {
        a["finding"]["subject"]["id"]: a["finding"]
        for a in alerts
        if a.get("finding") and a["finding"]["subject"]["kind"] == "job"
    }

    # three different missing programs: three incidents, each titled by its own program
    for prog in PROGRAMS:
        (jid,) = jobs[prog]
        inc = _incident_of(incidents, jid)
        assert inc["root_cause"] == "command_not_found" and prog in inc["title"], inc
        assert not any(p in inc["title"] for p in PROGRAMS if p != prog)
    # the array: one incident, its 20 tasks counted once each
    array_incs = {_incident_of(incidents, t)["title"] for t in jobs[ARRAY_PROGRAM]}
    assert len(array_incs) == 1, array_incs
    inc = _incident_of(incidents, jobs[ARRAY_PROGRAM][0])
    assert ARRAY_PROGRAM in inc["title"] and inc["title"].startswith("20 jobs"), inc["title"]
    # a segfault and a signal 53 are different failures
    (segv,), (rt,) = jobs["segv"], jobs["sig53"]
    assert _incident_of(incidents, segv)["key"] != _incident_of(incidents, rt)["key"]

    # every head, the same cause for each job
    for name, ids in jobs.items():
        for jid in ids[:2]:  # two tasks of the array are enough
            cause = verdicts[jid]["root_cause"]
            # a job's incident (its own or its group's) is about its cause
            assert _incident_of(incidents, jid)["root_cause"] == cause, (name, jid, cause)
            report = json.loads(_cockpit(site, "diagnose", jid, "--cluster", "lab", "--json"))
            top = next(f for f in report["findings"] if f["subject"] == f"job {jid}")
            # one cause, severity, title and first-seen in snapshot, diagnose and watch
            for other in (top, alerted.get(jid)):
                for k in ("root_cause", "severity", "title", "first_seen"):
                    if other is not None:
                        assert other[k] == verdicts[jid][k], (name, jid, k, other[k])


async def test_the_tui_says_what_the_cli_heads_say(site, lab_env, tmp_path, monkeypatch):
    """The TUI (Pilot) on the same cluster: each job's verdict and its incident's cause are
    the ones `snapshot --json` and `incidents --json` give."""
    from cockpit.app import CockpitApp
    from cockpit.model import Subject
    from cockpit.screens.log import LogScreen
    from cockpit.slurm.source import SlurmSource
    from cockpit.store import open_store
    from cockpit.store.acks import AckStore
    from cockpit.transport import LocalTransport
    from tests.conftest import await_for

    snapshot = json.loads(_cockpit(site, "snapshot", "--json"))
    cli = {v["subject"]["id"]: v["root_cause"] for s in snapshot for v in s["verdicts"]}
    incidents = json.loads(_cockpit(site, "incidents", "--json"))["incidents"]
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    src = SlurmSource(
        "lab",
        LocalTransport(env={"PATH": lab_env.env["PATH"]} if "PATH" in lab_env.env else None),
        slurmctld_log=lab_env.ctld_log,
        slurmd_log=lab_env.slurmd_log_pattern,
        interval=3600,
    )
    app = CockpitApp(
        [src], bell=False, acks=AckStore(tmp_path / "acks.json"), store=open_store("sqlite://")
    )
    ids = [jid for ids in site["jobs"].values() for jid in ids]
    async with app.run_test(size=(160, 48)) as pilot:
        await await_for(lambda: app.hub.states["lab"].settled, 120, "the TUI's first poll")
        st = app.hub.states["lab"]
        tui = {jid: st.verdicts[("job", "lab", jid)].root_cause for jid in ids}
        tui_incidents = {
            s.id: i for i in app.hub.incidents for s in (i.subject, *i.affected) if s.kind == "job"
        }
        # `l` on the OOM job opens the line `cockpit diagnose` names as the first red error
        (oom,) = site["jobs"]["oom"]
        report = json.loads(_cockpit(site, "diagnose", oom, "--cluster", "lab", "--json"))
        first = report["first_error"]
        assert first and first["line"], report
        app.open_subject(Subject("job", "lab", oom))
        await await_for(lambda: getattr(app.screen, "logs", None), 60, "the OOM job's logs")
        await pilot.press("l")
        await await_for(lambda: isinstance(app.screen, LogScreen), 30, "the log")
        name, reader = app.screen.logs[app.screen.active]
        where = {name, getattr(reader, "name", ""), os.path.basename(getattr(reader, "path", ""))}
        assert first["file"] in where, (first, where)
        assert app.screen._line == first["line"], (first, app.screen._line)
        await pilot.press("Q")
    # first seen, for this run's own failures (the older runs' jobs age out of squeue between
    # the heads' polls, which may move a shared group's earliest member)
    own = [site["jobs"][p][0] for p in PROGRAMS] + site["jobs"][ARRAY_PROGRAM][:1]
    for jid in own:
        cli_first = _incident_of(incidents, jid)["first_seen"]
        tui_first = tui_incidents[jid].first_seen
        assert tui_first is not None and cli_first == tui_first.isoformat(), (jid, cli_first)
    for jid in ids:
        assert tui[jid] == cli[jid], (jid, tui[jid], cli[jid])
        assert tui_incidents[jid].root_cause == _incident_of(incidents, jid)["root_cause"], jid
        assert tui_incidents[jid].title == _incident_of(incidents, jid)["title"], jid
