"""Controller load: background evidence costs ONE sacct per poll, a
drill-down fetches once per poll (an ended job once), log scans are not redone every poll."""

from __future__ import annotations

import dataclasses

from cockpit.app import CockpitApp
from cockpit.demo.site import demo_sources
from cockpit.diagnosis import logscan
from cockpit.model import LogText, Snapshot, Subject
from cockpit.runtime.evidence import EvidenceCache, diagnose_with_evidence, evidence_subjects
from cockpit.runtime.hub import Hub
from cockpit.screens.subject import JobScreen
from cockpit.slurm.commands import SEP
from cockpit.slurm.parse import split_sacct
from cockpit.store.acks import AckStore
from tests.test_ui_flows import OOM_JOB, frozen


def _recording(src) -> list[tuple[str, ...]]:
    """Every command line ``src`` runs from now on (SlurmSource._run is the one door out)."""
    seen: list[tuple[str, ...]] = []
    run = src._run

    async def _run(argv):
        seen.append(tuple(argv))
        return await run(argv)

    src._run = _run
    return seen


def _sacct(seen) -> list[tuple[str, ...]]:
    """The evidence sacct calls (not the poll's own backfill, ``sacct -a -X --state=...``: one
    per poll whatever failed, see cockpit.slurm.backfill)."""
    return [a for a in seen if a[0] == "sacct" and not any(x.startswith("--state=") for x in a)]


def _show_job(seen, job_id: str | None = None) -> list[tuple[str, ...]]:
    return [
        a
        for a in seen
        if a[:3] == ("scontrol", "show", "job") and (job_id is None or a[-1] == job_id)
    ]


def test_split_sacct_gives_each_job_the_rows_its_own_sacct_would():
    row = lambda jid, state: SEP.join([jid, "x", "cpu", "ana", state]) + "\n"  # noqa: E731
    text = (
        row("100", "FAILED")
        + row("100.batch", "FAILED")
        + row("1000", "COMPLETED")
        + row("7_3", "TIMEOUT")
        + row("7_3.batch", "CANCELLED")
        + row("9+1", "FAILED")
    )
    got = split_sacct(text, ["100", "1000", "7", "7_3", "9", "55"])
    assert got["100"] == row("100", "FAILED") + row("100.batch", "FAILED")  # not 1000's rows
    assert got["1000"] == row("1000", "COMPLETED")
    assert (
        got["7"] == got["7_3"] == row("7_3", "TIMEOUT") + row("7_3.batch", "CANCELLED")
    )  # array task
    assert got["9"] == row("9+1", "FAILED")  # het component
    assert got["55"] == ""  # sacct printed nothing for it


async def test_newly_failed_jobs_cost_one_sacct_and_keep_their_named_causes():
    src = demo_sources(7, clock=frozen)[0]
    snap = await src.poll()
    jobs = [s for s in evidence_subjects(snap) if s.kind == "job"]
    assert len(jobs) >= 10
    seen = _recording(src)
    cache = EvidenceCache(budget=4, first_budget=100)
    evidence = await cache.refresh(src, snap)
    assert len(_sacct(seen)) == 1, _sacct(seen)  # one batched sacct, no per-job one, no history
    assert "-j" in _sacct(seen)[0] and set(
        _sacct(seen)[0][_sacct(seen)[0].index("-j") + 1].split(",")
    ) == {s.id for s in jobs}
    assert len(_show_job(seen)) == len(jobs)  # scontrol show job takes no list: one per job
    oom = evidence[Subject("job", src.name, OOM_JOB)]
    assert oom.acct and all(r.job_id == OOM_JOB for r in oom.acct)
    assert oom.history == ()  # the OOM history sacct is drill-down only
    # the split rows are what the job's own `sacct -j ID` returns
    alone = await src.acct([OOM_JOB])
    assert [dataclasses.astuple(r) for r in oom.acct] == [dataclasses.astuple(r) for r in alone]
    causes = {
        f.subject.id: f.root_cause for f in diagnose_with_evidence(snap, evidence, snap.taken_at)
    }
    assert causes[OOM_JOB] == "oom_killed"
    assert sum(
        c == "application_error" for s, c in causes.items() if s in {j.id for j in jobs}
    ) < len(jobs)

    # next poll: nothing newly failed, nothing fetched
    seen.clear()
    snap2 = await src.poll()
    await cache.refresh(src, snap2)
    assert _sacct(seen) == [] and _show_job(seen) == []


async def test_oom_drilldown_gets_history_once_and_the_dashboard_remedy_reads_without_it():
    src = demo_sources(7, clock=frozen)[0]
    hub = Hub([src], clock=frozen)
    st = hub.states[src.name]
    await hub.poll_once(st)  # the poll plus its evidence round
    oom = Subject("job", src.name, OOM_JOB)
    dash = next(f for f in st.findings if f.subject == oom)
    assert (
        dash.root_cause == "oom_killed" and "--mem=" in dash.remedy and "history" not in dash.remedy
    )
    seen = _recording(src)
    arts, findings = await hub.artifacts(oom)
    assert _show_job(seen) == []  # the poller's evidence, not a second fetch
    assert len(_sacct(seen)) == 1 and "--name" in _sacct(seen)[0]  # only the history
    assert arts.history
    mine = next(f for f in findings if f.subject == oom)
    assert "sacct history" in mine.remedy
    # the job screen's right-sizing asks for the same rows: no second sacct
    job = hub.lookup(oom)
    assert await hub.history(src.name, job.user, job.name) == arts.history
    assert len(_sacct(seen)) == 1


async def test_job_screen_fetches_once_per_poll_and_an_ended_job_once(tmp_path):
    sources = demo_sources(7, clock=frozen)
    src = sources[0]
    src.interval = 3600.0  # only the polls below (the poll loop would add one after 15 s)
    app = CockpitApp(sources, clock=frozen, acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(140, 40)) as pilot:
        await app.hub.first_round.wait()
        st = app.hub.states[src.name]
        running = next(j.job_id for j in st.snapshot.jobs if j.state == "RUNNING")
        seen = _recording(src)
        app.open_subject(Subject("job", src.name, running))
        await pilot.pause(0.3)
        assert isinstance(app.screen, JobScreen)
        for poll in range(1, 3):
            await app.hub.poll_once(
                st
            )  # two publishes (poll, evidence round): two screen refreshes
            await pilot.pause(0.3)
            # a running job's log grows: fetched again each poll, but once
            assert len(_show_job(seen, running)) == 1 + poll
            assert len([a for a in _sacct(seen) if running in a]) == 1 + poll
        failed = next(j.job_id for j in st.snapshot.jobs if j.state == "FAILED")
        app.open_subject(Subject("job", src.name, failed))
        await pilot.pause(0.3)
        before = len(seen)
        for _ in range(2):
            await app.hub.poll_once(st)
            await pilot.pause(0.3)
        # an ended job's evidence (the poller's) is kept while its state holds: no fetch at all
        assert _show_job(seen[before:], failed) == [] and not [
            a for a in _sacct(seen[before:]) if failed in a
        ]


def test_log_scans_survive_across_polls_for_the_same_bytes(monkeypatch):
    from cockpit.diagnosis.context import SCAN_CACHE

    SCAN_CACHE.clear()
    calls: list[int] = []
    first_error, iter_errors = logscan.first_error, logscan.iter_errors

    def counting_first(buf, **kw):
        calls.append(len(buf))
        return first_error(buf, **kw)

    def counting_iter(buf, **kw):
        calls.append(len(buf))
        return iter_errors(buf, **kw)

    monkeypatch.setattr(logscan, "first_error", counting_first)
    monkeypatch.setattr(logscan, "iter_errors", counting_iter)
    from datetime import UTC, datetime

    from cockpit.model import Artifacts, SlurmNode

    now = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
    node = SlurmNode(
        name="c1",
        state="DOWN",
        flags=("NOT_RESPONDING",),
        reason="Not responding",
        partitions=("cpu",),
    )
    snap = Snapshot("hpc", "slurm", now, nodes=(node,))
    data = b"[2026-11-29T19:59:00] error: slurmd: Unable to register: Connection refused\n" * 50
    ev = {
        Subject("node", "hpc", "c1"): Artifacts(
            logs=(LogText("slurmd.log", "slurmd", data, subject_id="c1"),)
        )
    }
    first = diagnose_with_evidence(snap, ev, now)
    scanned = len(calls)
    assert scanned >= 1
    for _ in range(3):  # the following polls: the same evidence, nothing rescanned
        assert diagnose_with_evidence(snap, ev, now) == first
    assert len(calls) == scanned
    # other bytes are scanned (the cache is keyed by content, not by the LogText object)
    other = {
        s: Artifacts(logs=(LogText("slurmd.log", "slurmd", data + b"x\n", subject_id="c1"),))
        for s in ev
    }
    diagnose_with_evidence(snap, other, now)
    assert len(calls) > scanned


def test_cluster_without_log_paths_gets_the_default_paths(tmp_path):
    """A slots dataclass's class attribute is a member_descriptor: the loader handed that to
    SlurmSource as the slurmd.log path, and every job's evidence fetch raised AttributeError."""
    from cockpit.config import load_config

    cfg = tmp_path / "c.toml"
    cfg.write_text('[clusters.hpc]\ntransport = "local"\n')
    from cockpit.connect import build_cluster

    c = load_config(cfg).clusters["hpc"]
    assert (c.slurmd_log, c.slurmctld_log) == ("", "")  # what the cluster's slurm.conf says
    src = build_cluster(c)  # until it is asked (the first evidence): Slurm's defaults
    assert src.slurmd_log == "/var/log/slurm/slurmd.log"
    assert src.slurmctld_log == "/var/log/slurm/slurmctld.log"


def test_scan_cache_is_bounded_by_the_text_it_holds():
    """Results keep decoded error lines (up to 64 KiB each): a few logs of huge lines must not
    pin hundreds of MiB; the oldest results go first, recent ones stay."""
    from cockpit.diagnosis.context import ScanCache
    from cockpit.diagnosis.logscan import ScanHit

    cache = ScanCache(max_entries=100, max_chars=300_000)
    big = [ScanHit(1, 0, "x" * 60_000, "p", "l", "error")] * 2  # 120k characters per result
    for i in range(5):
        cache.get(("hits",), b"log %d" % i, lambda: big)
    assert cache._chars <= 300_000 and len(cache._d) == 2  # noqa: SLF001
    calls = []
    cache.get(("hits",), b"log 4", lambda: calls.append(1) or big)
    assert not calls  # the newest is still cached
    cache.get(("hits",), b"log 0", lambda: calls.append(1) or big)
    assert calls == [1]  # the oldest was evicted


async def test_evidence_drill_down_only_fetches_nothing_in_the_background(tmp_path):
    """``evidence = "drill-down"`` (the lightest controller load): polls run
    squeue and scontrol only; sacct and scontrol show job run for the job the operator opens."""
    from cockpit.config import load_config
    from cockpit.connect import build_cluster

    cfg = tmp_path / "c.toml"
    cfg.write_text('[clusters.hpc]\ntransport = "local"\nevidence = "drill-down"\n')
    assert build_cluster(load_config(cfg).clusters["hpc"]).background_evidence is False
    cfg.write_text('[clusters.hpc]\ntransport = "local"\n')
    assert build_cluster(load_config(cfg).clusters["hpc"]).background_evidence is True

    src = demo_sources(7, clock=frozen)[0]
    src.background_evidence = False
    seen = _recording(src)
    hub = Hub([src], clock=frozen)
    st = hub.states[src.name]
    for _ in range(2):
        await hub.poll_once(st)
    assert _sacct(seen) == [] and _show_job(seen) == []
    assert {a[0] for a in seen} == {"squeue", "scontrol"}
    oom = Subject("job", src.name, OOM_JOB)
    dash = next(f for f in st.findings if f.subject == oom)
    assert dash.title == "OUT_OF_MEMORY: ReqMem 64G on cn007"  # from squeue alone: no MaxRSS yet
    arts, findings = await hub.artifacts(oom)  # the operator opens the job
    assert len(_show_job(seen, OOM_JOB)) == 1 and any(OOM_JOB in ",".join(a) for a in _sacct(seen))
    assert (
        next(f for f in findings if f.subject == oom).title
        == "OUT_OF_MEMORY: MaxRSS 64.1G of ReqMem 64G on cn007"
    )


def test_evidence_setting_is_checked(tmp_path):
    import pytest

    from cockpit.config import load_config
    from cockpit.errors import ConfigError

    cfg = tmp_path / "c.toml"
    cfg.write_text('[clusters.hpc]\ntransport = "local"\nevidence = "always"\n')
    with pytest.raises(ConfigError, match="clusters.hpc.evidence"):
        load_config(cfg)
