"""One verdict per subject: the dashboard row, the drill-down, ``cockpit diagnose`` and the
alerts agree on root cause and severity, for every subject of the demo site at several
clocks, and for the lab's situations served by a source of their own.

The dashboard's verdict comes from the runtime pipeline (the whole site diagnosed with the
evidence the poller fetched), the drill-down's from ``Hub.artifacts`` (the subject diagnosed
with its own artifacts), the CLI's from ``cockpit diagnose JOBID --demo --json`` and the
alerts' from ``watch.transitions.detect``. A subject without a verdict and one that
"completed normally" say the same thing (nothing to fix).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime, timedelta

import pytest

from cockpit import connect
from cockpit.cli import main
from cockpit.demo.site import DEMO_START, DemoModelArtsApi, DemoSite, DemoTransport
from cockpit.diagnosis.engine import iter_subjects
from cockpit.diagnosis.verdict import verdicts
from cockpit.model import (
    AcctRecord,
    Artifacts,
    ExitCode,
    LogText,
    SlurmJob,
    SlurmNode,
    Snapshot,
    Subject,
)
from cockpit.runtime.hub import Hub
from cockpit.source import Source
from cockpit.watch.transitions import detect

OFFSETS = (0, 600, 1800)  # the demo's story: an OOM at +2 min, a drain at +8, a queue that starts


def _frozen(at: datetime):
    return lambda: at


def _demo_sources(site: DemoSite) -> list[Source]:
    """A real SlurmSource and ModelArtsSource over one already-built demo site."""
    from cockpit.demo.site import DEMO_CLUSTER, DEMO_PROJECT, SLURMCTLD_LOG, SLURMD_LOG
    from cockpit.modelarts.source import ModelArtsSource
    from cockpit.slurm.source import SlurmSource

    return [
        SlurmSource(
            DEMO_CLUSTER,
            DemoTransport(site),
            interval=15,
            clock=site.clock,
            slurmctld_log=SLURMCTLD_LOG,
            slurmd_log=SLURMD_LOG,
        ),
        ModelArtsSource(DEMO_PROJECT, DemoModelArtsApi(site), interval=30, clock=site.clock),
    ]


def _norm(f) -> tuple[str, str]:
    """(root cause, severity); "nothing to fix" spelled one way."""
    if f is None or f.root_cause == "no_failure":
        return ("nothing", "info")
    return (f.root_cause, f.severity)


def _subject_of(kind: str, obj, source: str) -> Subject:
    ident = {"job": "job_id", "training_job": "job_id", "pool": "pool_id"}.get(kind, "name")
    return Subject(kind, source, getattr(obj, ident))


async def _settled_hub(sources: list[Source], at: datetime) -> Hub:
    """A hub that polled every source until the poller holds all the evidence it wants (the
    dashboard's verdicts are then the evidence-backed ones)."""
    hub = Hub(sources, clock=_frozen(at))
    for st in hub.states.values():
        for _ in range(20):
            await hub.poll_once(st)
            assert st.snapshot is not None, st.error
            if not st.evidence.missing(st.snapshot):
                break
        await hub.poll_once(st)  # one more pass: every verdict computed with what is held
    return hub


async def _dashboard_vs_drilldown(hub: Hub) -> tuple[dict, list[str]]:
    """Every subject's dashboard verdict, and the subjects whose drill-down disagrees."""
    rows: dict[Subject, object] = {}
    bad = []
    for st in hub.states.values():
        snap = st.snapshot
        for kind, obj in iter_subjects(snap):
            if kind in {"site", "partition"}:
                continue
            subject = _subject_of(kind, obj, snap.source)
            dash = st.verdicts.get((kind, snap.source, subject.id))
            _, found = await hub.artifacts(subject)
            mine = verdicts([f for f in found if f.subject == subject])
            drill = mine.get((kind, snap.source, subject.id))
            rows[subject] = dash
            if _norm(dash) != _norm(drill):
                bad.append(
                    f"{subject}: dashboard {_norm(dash)} {getattr(dash, 'title', '')!r} vs "
                    f"drill-down {_norm(drill)} {getattr(drill, 'title', '')!r}"
                )
    return rows, bad


def _alerts_agree(hub: Hub, at: datetime) -> list[str]:
    """Alerts for everything at once (the previous poll saw nothing): each alert about a
    subject with a verdict carries that verdict and its severity."""
    bad = []
    for st in hub.states.values():
        cur = st.snapshot
        prev = dataclasses.replace(
            cur, jobs=(), nodes=(), training_jobs=(), taken_at=at - timedelta(seconds=30)
        )
        v = {f.subject: f for f in verdicts(st.findings).values()}
        for a in detect(prev, cur, st.findings, at):
            f = v.get(a.subject)
            if f is None or a.rule == "repeated_failures":
                continue
            if (
                a.finding is None
                or a.finding.root_cause != f.root_cause
                or a.severity != f.severity
            ):
                bad.append(
                    f"alert {a.rule} {a.subject}: {a.severity} "
                    f"{getattr(a.finding, 'root_cause', None)} vs verdict {_norm(f)}"
                )
    return bad


def _cli_verdict(capsys, job_id: str) -> tuple[str, str]:
    assert main(["diagnose", job_id, "--demo", "--json"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    mine = [f for f in data["findings"] if f["subject"] == f"job {job_id}"]
    if not mine or mine[0]["root_cause"] == "no_failure":
        return ("nothing", "info")
    return (mine[0]["root_cause"], mine[0]["severity"])


@pytest.mark.parametrize("offset", OFFSETS)
def test_demo_dashboard_drilldown_cli_and_alerts_agree(offset, monkeypatch, capsys):
    at = DEMO_START + timedelta(seconds=offset)
    site = DemoSite(7, _frozen(at))
    site.build()
    monkeypatch.setattr(connect, "demo", lambda seed=7, clock=None: _demo_sources(site))

    hub = asyncio.run(_settled_hub(_demo_sources(site), at))
    rows, bad = asyncio.run(_dashboard_vs_drilldown(hub))
    assert not bad, "\n".join(bad)
    assert len(rows) > 300  # every job, node, training job and pool was compared

    bad = _alerts_agree(hub, at)
    assert not bad, "\n".join(bad)

    # the CLI: every job with a warning or worse, one job of each other verdict, and every
    # twentieth job (each call polls the site again)
    jobs = sorted((s for s in rows if s.kind == "job"), key=lambda s: s.id)
    picked: dict[tuple[str, str], Subject] = {}
    for s in jobs:
        picked.setdefault(_norm(rows[s]), s)
    sample = {s for s in jobs if _norm(rows[s])[1] != "info"} | set(picked.values())
    for s in sorted(sample | set(jobs[::20]), key=lambda s: s.id):
        got = _cli_verdict(capsys, s.id)
        assert got == _norm(rows[s]), (s, got, getattr(rows[s], "title", None))


def test_demo_starved_job_has_one_verdict(monkeypatch, capsys):
    """48120: "starved" on the dashboard was "Nothing to fix" in its drill-down and the CLI."""
    at = DEMO_START
    site = DemoSite(7, _frozen(at))
    monkeypatch.setattr(connect, "demo", lambda seed=7, clock=None: _demo_sources(site))
    hub = asyncio.run(_settled_hub(_demo_sources(site), at))
    subject = Subject("job", "demo-hpc", "48120")
    dash = hub.states["demo-hpc"].verdicts[("job", "demo-hpc", "48120")]
    _, found = asyncio.run(hub.artifacts(subject))
    drill = verdicts([f for f in found if f.subject == subject])[("job", "demo-hpc", "48120")]
    assert dash.root_cause == drill.root_cause == "backfill_starvation"
    assert _cli_verdict(capsys, "48120") == ("backfill_starvation", "warning")


# --------------------------------------------------------------------------- the lab's cases

NOW = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)


def _lab_snapshot() -> tuple[Snapshot, dict[Subject, Artifacts]]:
    """The live lab's situations: a COMPLETED script whose program was missing, a SIGSEGV, a
    submission rejected with BadConstraints, a DIMM ECC drain, a node UNKNOWN after a
    controller restart."""
    t = NOW - timedelta(minutes=2)

    def job(jid, state, reason, ec, **kw):
        return SlurmJob(jid, f"j{jid}", "root", "debug", state, reason, exit_code=ec, **kw)

    jobs = (
        job("21", "COMPLETED", "None", ExitCode(0, 0), nodes=("c1",), node_list="c1",
            elapsed_s=1, start_time=t, end_time=t),
        job("22", "FAILED", "RaisedSignal:11(Segmentation fault)", ExitCode(0, 11),
            nodes=("c1",), node_list="c1", elapsed_s=3, start_time=t, end_time=t),
        job("23", "FAILED", "BadConstraints", ExitCode(0, 1), elapsed_s=0, min_memory_mib=5000,
            start_time=t, end_time=t),
    )  # fmt: skip
    nodes = (
        SlurmNode("c1", "MIXED", cpus_total=2, real_memory_mib=1000, partitions=("debug",)),
        SlurmNode(
            "c2",
            "IDLE",
            ("DRAIN",),
            partitions=("debug",),
            reason="DIMM B2 uncorrectable ECC errors (mcelog 2026-11-29)",
            reason_user="root",
            reason_time=t,
        ),
        SlurmNode("c3", "UNKNOWN", ("DRAIN",), partitions=("debug",)),
    )
    snap = Snapshot("lab", "slurm", NOW, jobs=jobs, nodes=nodes)

    def rows(jid, state, ec):
        return (AcctRecord(jid, "", f"j{jid}", "debug", state, ec, 100, None, 1, 600, "c1"),)

    arts = {
        Subject("job", "lab", "21"): Artifacts(
            acct=rows("21", "COMPLETED", ExitCode(0, 0)),
            logs=(
                LogText(
                    "slurm-21.out",
                    "stdout",
                    b"/var/spool/slurmd/job00021/slurm_script: line 3: nosuchprog: "
                    b"command not found\ndone\n",
                    subject_id="21",
                ),
            ),
        ),
        Subject("job", "lab", "22"): Artifacts(
            acct=rows("22", "FAILED", ExitCode(0, 11)),
            logs=(
                LogText(
                    "slurmd-c1.log",
                    "slurmd",
                    b"[2026-11-29T20:28:01.100] [22.batch] get_exit_code task 0 died by "
                    b"signal: 11\n",
                    subject_id="22",
                ),
            ),
        ),
        Subject("job", "lab", "23"): Artifacts(
            acct=(
                AcctRecord(
                    "23",
                    "",
                    "j23",
                    "debug",
                    "FAILED",
                    ExitCode(1, 0),
                    5000,
                    None,
                    0,
                    600,
                    "",
                    reason="BadConstraints",
                ),
            )  # fmt: skip
        ),
    }
    return snap, arts


class LabSource(Source):
    """A source that serves one snapshot and each subject's artifacts (no I/O)."""

    kind = "slurm"
    interval = 15.0

    def __init__(self, snap: Snapshot, arts: dict[Subject, Artifacts]) -> None:
        self.name, self.snap, self.arts = snap.source, snap, arts

    async def poll(self) -> Snapshot:
        return self.snap

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        return self.arts.get(subject, Artifacts())

    def log_locations(self, subject, snapshot):
        return []

    async def read_range(self, path, offset, length):
        return b""

    async def stat(self, path):
        raise FileNotFoundError(path)


def test_lab_situations_have_one_verdict_in_every_view():
    snap, arts = _lab_snapshot()
    hub = asyncio.run(_settled_hub([LabSource(snap, arts)], NOW))
    rows, bad = asyncio.run(_dashboard_vs_drilldown(hub))
    assert not bad, "\n".join(bad)
    assert not _alerts_agree(hub, NOW)
    v = {s.id: rows[s] for s in rows}
    # a COMPLETED job whose program was missing: a warning, in both views
    assert _norm(v["21"]) == ("command_not_found", "warning")
    assert v["21"].title.startswith("exit 0, but: nosuchprog: command not found")
    assert v["22"].title.startswith("SIGSEGV (signal 11)")
    assert v["23"].title.startswith("rejected at submit: BadConstraints")
    assert _norm(v["23"]) == ("submit_rejected_unsatisfiable", "warning")
    assert v["c2"].root_cause == "host_memory_error" and "nvidia-smi" not in v["c2"].remedy
    # UNKNOWN+DRAIN with no reason after a restart: no incident of its own
    assert v["c3"] is None or v["c3"].severity == "info"
    assert not [i for i in hub.incidents if i.subject.id == "c3"]
