"""The incremental pipeline gives exactly what a from-scratch run gives.

A poller keeps each subject's findings from one poll to the next and runs rules only for the
subjects whose row or context changed (``cockpit.diagnosis.incremental``). Over random
sequences of polls of the demo cluster (jobs changing state, reason, exit code or nodes,
jobs leaving and arriving, nodes draining and coming back, a partition's limits changing,
evidence arriving or replaced, the clock moving) the findings, rule errors, verdicts, pane
rows and incidents must equal those of a run that starts from nothing at every poll.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cockpit.demo.site import DEMO_CLUSTER, DEMO_START, DemoSite, DemoTransport
from cockpit.diagnosis.incremental import Reuse, diagnose_site
from cockpit.model import Artifacts, Snapshot, Subject
from cockpit.runtime import pipeline
from cockpit.runtime.evidence import EvidenceCache, diagnose_with_evidence
from cockpit.slurm.source import SlurmSource

AT = DEMO_START + timedelta(minutes=10)  # the demo's OOM and drain have happened


@pytest.fixture(scope="module")
def base() -> tuple[Snapshot, dict[Subject, Artifacts]]:
    return demo_base()


def demo_base() -> tuple[Snapshot, dict[Subject, Artifacts]]:
    """The demo cluster polled once, trimmed to the jobs with evidence and 300 more, with the
    evidence a poller fetches for it."""
    site = DemoSite(seed=7, clock=lambda: AT)
    src = SlurmSource(
        DEMO_CLUSTER,
        DemoTransport(site),
        clock=site.clock,
        slurmctld_log="/var/log/slurm/slurmctld.log",
        slurmd_log="/var/log/slurm/slurmd-%n.log",
    )
    snap = asyncio.run(src.poll())
    assert snap.error is None and snap.jobs
    cache = EvidenceCache(first_budget=64)
    evidence = asyncio.run(cache.refresh(src, snap))
    wanted = {s.id for s in evidence if s.kind == "job"}
    jobs = [j for j in snap.jobs if j.job_id in wanted] + [
        j for j in snap.jobs if j.job_id not in wanted
    ][:300]
    assert evidence and any(s.kind == "node" for s in evidence), "the demo has sick nodes"
    return dataclasses.replace(snap, jobs=tuple(jobs)), evidence


STATES = ("PENDING", "RUNNING", "FAILED", "OUT_OF_MEMORY", "TIMEOUT", "NODE_FAIL", "COMPLETED")
REASONS = (
    "Priority",
    "Resources",
    "QOSMaxJobsPerUserLimit",
    "JobHeldUser",
    "None",
    "NonZeroExitCode",
)


def _mutate(
    rnd: random.Random, snap: Snapshot, evidence: dict[Subject, Artifacts], spare: list
) -> tuple[Snapshot, dict[Subject, Artifacts]]:
    """One poll's worth of random change; unchanged rows stay the same objects, as the
    squeue parser's carry hands them back."""
    jobs = list(snap.jobs)
    for _ in range(rnd.randrange(0, 6)):
        i = rnd.randrange(len(jobs))
        j = jobs[i]
        what = rnd.choice(("state", "reason", "exit", "nodes", "copy"))
        if what == "state":
            jobs[i] = dataclasses.replace(j, state=rnd.choice(STATES))
        elif what == "reason":
            jobs[i] = dataclasses.replace(j, reason=rnd.choice(REASONS))
        elif what == "exit":
            jobs[i] = dataclasses.replace(j, exit_code=None)
        elif what == "nodes":
            jobs[i] = dataclasses.replace(j, nodes=tuple(reversed(j.nodes)))
        else:  # an equal row parsed anew: a different object, same findings
            jobs[i] = dataclasses.replace(j)
    if rnd.random() < 0.3 and len(jobs) > 10:
        spare.append(jobs.pop(rnd.randrange(len(jobs))))
    if rnd.random() < 0.3 and spare:
        jobs.insert(rnd.randrange(len(jobs)), spare.pop())
    nodes = list(snap.nodes)
    if rnd.random() < 0.3:
        i = rnd.randrange(len(nodes))
        n = nodes[i]
        flags = () if n.is_drain else ("DRAIN",)
        nodes[i] = dataclasses.replace(n, flags=flags, reason="" if flags == () else "bad disk")
    if rnd.random() < 0.2:  # allocation changes every poll on a busy site: no verdict reads it
        i = rnd.randrange(len(nodes))
        nodes[i] = dataclasses.replace(nodes[i], cpus_alloc=(nodes[i].cpus_alloc or 0) + 1)
    parts = list(snap.partitions)
    if rnd.random() < 0.4 and parts:  # a partition's limits: pending jobs may never fit now
        i = rnd.randrange(len(parts))
        parts[i] = dataclasses.replace(parts[i], max_time_s=rnd.choice((None, 60, 86400)))
    if rnd.random() < 0.2:  # nodes resized: the largest node a job must fit on changes
        nodes = [dataclasses.replace(n, cpus_total=rnd.choice((1, n.cpus_total))) for n in nodes]
    evidence = dict(evidence)
    if rnd.random() < 0.3 and evidence:
        s = rnd.choice(sorted(evidence, key=str))
        if rnd.random() < 0.5:
            del evidence[s]
        else:  # fetched again: an equal but new Artifacts object
            evidence[s] = dataclasses.replace(evidence[s])
    new = dataclasses.replace(snap, jobs=tuple(jobs), nodes=tuple(nodes), partitions=tuple(parts))
    return new, evidence


def _scratch(snap, evidence, now) -> pipeline.Analysis:
    return pipeline.analyse(snap, now, evidence, None, (None,), carry=pipeline.Carry())


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1), polls=st.integers(2, 5))
def test_incremental_polls_equal_from_scratch(base, seed: int, polls: int) -> None:
    snap, evidence = base
    rnd = random.Random(seed)
    carry = pipeline.Carry()
    now: datetime = AT
    spare: list = []
    for poll in range(polls):
        if poll:
            snap, evidence = _mutate(rnd, snap, evidence, spare)
            now += timedelta(seconds=rnd.choice((0, 5, 61, 3600)))
            snap = dataclasses.replace(snap, taken_at=now)
        got = pipeline.analyse(snap, now, evidence, None, (None,), carry=carry)
        want = _scratch(snap, evidence, now)
        assert list(got.findings) == list(want.findings), f"poll {poll}: findings differ"
        assert got.warnings == want.warnings
        assert got.verdicts == want.verdicts
        assert got.rows == want.rows
        assert got.incidents == want.incidents
        # and the engine's own from-scratch answer (what `cockpit diagnose` and bundles use)
        ref = diagnose_with_evidence(snap, evidence, now)
        assert list(diagnose_site(snap, evidence, now, Reuse())) == list(ref)


def test_nothing_changed_runs_no_rule(base) -> None:
    """A poll where no row, node, partition or evidence changed runs no job or node rule."""
    snap, evidence = base
    reuse = Reuse()
    first = diagnose_site(snap, evidence, AT, reuse)
    runs = reuse.runs
    again = diagnose_site(
        dataclasses.replace(snap, taken_at=AT + timedelta(seconds=5)),
        evidence,
        AT + timedelta(seconds=5),
        reuse,
    )
    assert reuse.runs == runs
    assert [f.key for f in again] == [f.key for f in first]


def test_partition_limits_change_kept_job_findings(base) -> None:
    """Site context invalidates kept findings: a MaxTime lowered under the pending jobs' time
    limits makes them "never runs", though no job row changed."""
    snap, evidence = base
    reuse = Reuse()
    before = diagnose_site(snap, evidence, AT, reuse)
    tight = tuple(dataclasses.replace(p, max_time_s=60) for p in snap.partitions)
    changed = dataclasses.replace(snap, partitions=tight)
    got = diagnose_site(changed, evidence, AT, reuse)
    assert list(got) == list(diagnose_with_evidence(changed, evidence, AT))
    assert list(got) != list(before)


def test_a_drained_node_changes_its_own_finding(base) -> None:
    snap, evidence = base
    reuse = Reuse()
    diagnose_site(snap, evidence, AT, reuse)
    n = snap.nodes[0]
    drained = dataclasses.replace(n, flags=("DRAIN",), reason="bad disk")
    changed = dataclasses.replace(snap, nodes=(drained, *snap.nodes[1:]))
    got = diagnose_site(changed, evidence, AT, reuse)
    assert list(got) == list(diagnose_with_evidence(changed, evidence, AT))
    assert any(f.subject.id == n.name for f in got)


def test_kept_kinds_rules_are_the_audited_ones():
    """Job and node findings are kept while the row and the context do not change: that holds
    for rules that read neither the clock nor other jobs (``incremental``'s docstring lists
    what they may read). A rule added for jobs or nodes from another module must be checked
    against that list (and added here, or the context token extended)."""
    from cockpit.diagnosis.engine import rules_for
    from cockpit.diagnosis.incremental import KEPT_KINDS

    audited = {
        "cockpit.diagnosis.rules.slurm_pending",
        "cockpit.diagnosis.rules.slurm_ended",
        "cockpit.diagnosis.rules.slurm_nodes",
        "cockpit.diagnosis.rules.storage",
    }
    for kind in KEPT_KINDS:
        assert {fn.__module__ for fn in rules_for(kind)} <= audited, kind
