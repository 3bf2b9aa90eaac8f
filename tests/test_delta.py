"""Each stage a poll pays for by what changed gives what a from-scratch run gives.

``cockpit.diagnosis.delta`` patches the last diagnosis for the subjects that changed, the
pipeline patches the verdicts and the job rows with it (``views.job_rows(..., dirty=)``), the
starvation rule keeps its candidates and findings until the clock moves their text, and the
squeue parser turns a row whose TIME alone ticked into the last row with the new elapsed.
Every one of them is checked here against the plain computation, over random polls, and the
counting tests check that one changed job costs one job's rules.
"""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cockpit.diagnosis import delta as delta_mod
from cockpit.diagnosis.context import build_context
from cockpit.diagnosis.correlate import correlate
from cockpit.diagnosis.engine import plan, run_steps, sort_findings
from cockpit.diagnosis.incremental import Reuse, _starvation_step, diagnose_site
from cockpit.diagnosis.rules import slurm_site
from cockpit.model import Artifacts, SlurmJob, Snapshot
from cockpit.runtime import pipeline
from cockpit.runtime.evidence import diagnose_with_evidence, evidence_subjects
from cockpit.views import RowMemo, job_rows

from .test_incremental import AT, REASONS, STATES, _scratch, demo_base


@pytest.fixture(scope="module")
def base() -> tuple[Snapshot, dict]:
    return demo_base()


SETTINGS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _tick(rnd: random.Random, snap: Snapshot, evidence: dict, spare: list) -> tuple:
    """One poll's change that keeps the site context (partitions, nodes): what the delta
    path takes; rows replaced by new objects, some only in their elapsed time."""
    jobs = list(snap.jobs)
    for _ in range(rnd.randrange(0, 8)):
        i = rnd.randrange(len(jobs))
        j = jobs[i]
        what = rnd.choice(("state", "reason", "exit", "copy", "elapsed", "elapsed"))
        if what == "state":
            jobs[i] = dataclasses.replace(j, state=rnd.choice(STATES))
        elif what == "reason":
            jobs[i] = dataclasses.replace(j, reason=rnd.choice(REASONS))
        elif what == "exit":
            jobs[i] = dataclasses.replace(j, exit_code=None)
        elif what == "copy":
            jobs[i] = dataclasses.replace(j)
        else:  # squeue's TIME ticked
            jobs[i] = dataclasses.replace(j, elapsed_s=(j.elapsed_s or 0) + rnd.randrange(1, 99))
    if rnd.random() < 0.2 and len(jobs) > 10:
        spare.append(jobs.pop(rnd.randrange(len(jobs))))
    if rnd.random() < 0.2 and spare:
        jobs.insert(rnd.randrange(len(jobs)), spare.pop())
    evidence = dict(evidence)
    if rnd.random() < 0.3 and evidence:
        s = rnd.choice(sorted(evidence, key=str))
        if rnd.random() < 0.5:
            del evidence[s]
        else:
            evidence[s] = dataclasses.replace(evidence[s])
    return dataclasses.replace(snap, jobs=tuple(jobs)), evidence


def _same_analysis(got: pipeline.Analysis, want: pipeline.Analysis, what: str) -> None:
    assert list(got.findings) == list(want.findings), f"{what}: findings"
    assert got.warnings == want.warnings, what
    assert got.verdicts == want.verdicts, f"{what}: verdicts"
    for pane in ("jobs", "nodes", "training"):
        assert list(got.rows[pane]) == list(want.rows[pane]), f"{what}: {pane} rows"
    g, w = got.rows["jobs"], want.rows["jobs"]
    assert g.key_index == w.key_index and g.haystack == w.haystack, f"{what}: row lookups"
    assert got.incidents == want.incidents, f"{what}: incidents"


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), polls=st.integers(2, 7))
def test_patched_polls_equal_from_scratch(base, seed: int, polls: int) -> None:
    snap, evidence = base
    rnd = random.Random(seed)
    carry = pipeline.Carry()
    now = AT
    spare: list = []
    for poll in range(polls):
        if poll:
            snap, evidence = _tick(rnd, snap, evidence, spare)
            now += timedelta(seconds=rnd.choice((0, 1, 5, 59, 60, 61, 600, 3600)))
            snap = dataclasses.replace(snap, taken_at=now)
        got = pipeline.analyse(snap, now, evidence, None, (None,), carry=carry)
        _same_analysis(got, _scratch(snap, evidence, now), f"poll {poll}")
        if rnd.random() < 0.5:  # the evidence round: a second pass over the same snapshot
            more = dict(evidence)
            if more:
                s = rnd.choice(sorted(more, key=str))
                more[s] = dataclasses.replace(more[s])
            got = pipeline.analyse(snap, now, more, None, (None,), carry=carry)
            _same_analysis(got, _scratch(snap, more, now), f"poll {poll}, evidence round")
            evidence = more


def test_the_patch_paths_are_taken(base) -> None:
    """The equivalence above is about the patch paths: they must actually run."""
    snap, evidence = base
    carry = pipeline.Carry()
    rnd = random.Random(1)
    now, spare = AT, []
    for poll in range(12):
        if poll:
            snap, evidence = _tick(rnd, snap, evidence, spare)
            now += timedelta(seconds=5)
        got = pipeline.analyse(snap, now, evidence, None, (None,), carry=carry)
        _same_analysis(got, _scratch(snap, evidence, now), f"poll {poll}")
    assert carry.diagnosis.patched >= 6
    assert carry.rows.patched >= 3


def _counting(monkeypatch) -> list:
    calls: list = []
    real = delta_mod.run_steps

    def counted(steps, subject, *a, **k):
        calls.append(subject)
        return real(steps, subject, *a, **k)

    monkeypatch.setattr(delta_mod, "run_steps", counted)
    return calls


def test_one_changed_job_runs_one_jobs_rules(base, monkeypatch) -> None:
    snap, evidence = base
    reuse = Reuse()
    diagnose_site(snap, evidence, AT, reuse)
    calls = _counting(monkeypatch)
    i = next(k for k, j in enumerate(snap.jobs) if j.state == "PENDING")
    j = snap.jobs[i]
    changed = dataclasses.replace(j, reason="JobHeldUser" if j.reason != "JobHeldUser" else "")
    later = AT + timedelta(seconds=5)
    new = dataclasses.replace(snap, jobs=(*snap.jobs[:i], changed, *snap.jobs[i + 1 :]))
    got = diagnose_site(new, evidence, later, reuse)
    assert reuse.patched == 1
    assert [s for s in calls if isinstance(s, SlurmJob)] == [changed]
    assert list(got) == list(diagnose_with_evidence(new, evidence, later))


def test_nothing_changed_runs_no_rule_and_returns_the_same_answer(base, monkeypatch) -> None:
    snap, evidence = base
    reuse = Reuse()
    first = diagnose_site(snap, evidence, AT, reuse)
    second = diagnose_site(snap, evidence, AT + timedelta(seconds=5), reuse)
    calls = _counting(monkeypatch)
    third = diagnose_site(
        dataclasses.replace(snap, jobs=tuple(snap.jobs)), evidence, AT + timedelta(seconds=9), reuse
    )
    assert [s for s in calls if isinstance(s, SlurmJob)] == []
    assert third is second and list(third) == list(first)


def test_a_running_job_whose_time_ticked_keeps_its_findings(base, monkeypatch) -> None:
    snap, evidence = base
    reuse = Reuse()
    diagnose_site(snap, evidence, AT, reuse)
    running = [i for i, j in enumerate(snap.jobs) if j.state == "RUNNING"]
    assert running, "the demo has running jobs"
    jobs = list(snap.jobs)
    for i in running:
        jobs[i] = dataclasses.replace(jobs[i], elapsed_s=(jobs[i].elapsed_s or 0) + 5)
    calls = _counting(monkeypatch)
    new = dataclasses.replace(snap, jobs=tuple(jobs))
    got = diagnose_site(new, evidence, AT + timedelta(seconds=5), reuse)
    ticked = {jobs[i].job_id for i in running}
    assert not [s for s in calls if isinstance(s, SlurmJob) and s.job_id in ticked]
    assert list(got) == list(diagnose_with_evidence(new, evidence, AT + timedelta(seconds=5)))


def test_an_ended_jobs_elapsed_change_runs_its_rules(base, monkeypatch) -> None:
    """Ended jobs' rules read the elapsed time (a TIMEOUT's "ran for"): no shortcut there."""
    snap, evidence = base
    reuse = Reuse()
    diagnose_site(snap, evidence, AT, reuse)
    i = next(k for k, j in enumerate(snap.jobs) if j.state not in delta_mod.ELAPSED_BLIND)
    j = snap.jobs[i]
    changed = dataclasses.replace(j, elapsed_s=(j.elapsed_s or 0) + 7)
    calls = _counting(monkeypatch)
    new = dataclasses.replace(snap, jobs=(*snap.jobs[:i], changed, *snap.jobs[i + 1 :]))
    diagnose_site(new, evidence, AT, reuse)
    assert reuse.patched == 1
    assert [s for s in calls if isinstance(s, SlurmJob)] == [changed]


def test_job_rules_of_elapsed_blind_states_do_not_read_elapsed(base) -> None:
    """The audit behind ``delta.ELAPSED_BLIND``: for every job of the demo put in each of
    those states, its rules say the same whatever its elapsed time."""
    snap, _ = base
    ctx = build_context(snap, Artifacts(), AT)
    default, by_state = plan("job")
    for j in snap.jobs:
        for state in delta_mod.ELAPSED_BLIND:
            steps = by_state.get(state, default)
            a = dataclasses.replace(j, state=state, elapsed_s=10)
            b = dataclasses.replace(j, state=state, elapsed_s=86_400 * 3)
            assert run_steps(steps, a, ctx, []) == run_steps(steps, b, ctx, []), (j.job_id, state)


# ------------------------------------------------------------------ starvation


def _starving_site(rnd: random.Random, n: int = 60) -> Snapshot:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    jobs = []
    for i in range(n):
        running = rnd.random() < 0.5
        jobs.append(
            SlurmJob(
                job_id=str(1000 + i),
                name=f"j{i}",
                user="u",
                partition=rnd.choice(("a", "b")),
                state="RUNNING" if running else "PENDING",
                reason="None" if running else rnd.choice(("Resources", "Priority", "QOSMax")),
                cpus=rnd.choice((1, 4, 64)),
                node_count=rnd.choice((1, 1, 2)),
                submit_time=t0 + timedelta(seconds=rnd.randrange(0, 20_000)),
            )
        )
    return Snapshot("peer", "slurm", t0, jobs=tuple(jobs))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    steps=st.lists(st.integers(0, 4000), min_size=1, max_size=12),
)
def test_kept_starvation_equals_the_rule(seed: int, steps: list[int]) -> None:
    rnd = random.Random(seed)
    snap = _starving_site(rnd)
    reuse = Reuse()
    now = snap.taken_at + timedelta(seconds=rnd.randrange(0, 9000))
    for k, dt in enumerate(steps):
        now += timedelta(seconds=dt, microseconds=rnd.randrange(0, 10**6))
        if k and rnd.random() < 0.2:  # a job changes: new candidates
            jobs = list(snap.jobs)
            i = rnd.randrange(len(jobs))
            jobs[i] = dataclasses.replace(jobs[i], state=rnd.choice(("RUNNING", "PENDING")))
            snap = dataclasses.replace(snap, jobs=tuple(jobs))
        elif k and rnd.random() < 0.4:  # running jobs' TIME ticked: the same candidates
            snap = dataclasses.replace(
                snap,
                jobs=tuple(
                    dataclasses.replace(j, elapsed_s=(j.elapsed_s or 0) + dt)
                    if j.state == "RUNNING"
                    else j
                    for j in snap.jobs
                ),
            )
        ctx = build_context(snap, Artifacts(), now)
        got = _starvation_step(reuse)(snap, ctx)
        want = list(slurm_site.backfill_starvation(snap, ctx))
        assert got == want, (k, now)


# ------------------------------------------------------------------ rows, correlation, evidence


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    steps=st.lists(st.integers(0, 200), min_size=1, max_size=10),
)
def test_patched_job_rows_follow_the_clock(seed: int, steps: list[int]) -> None:
    """Pending jobs' waits cross minute boundaries (and the hour) on their own schedule."""
    rnd = random.Random(seed)
    snap = _starving_site(rnd, 40)
    memo = RowMemo()
    now = snap.taken_at + timedelta(seconds=rnd.randrange(3000, 26_000))
    job_rows(snap, {}, now, memo)
    for dt in steps:
        now += timedelta(seconds=dt, microseconds=rnd.randrange(0, 10**6))
        got = job_rows(snap, {}, now, memo, dirty=frozenset())
        want = job_rows(snap, {}, now)
        assert list(got) == list(want) and got.haystack == want.haystack


def test_presorted_correlation_is_the_same(base) -> None:
    snap, evidence = base
    found = list(diagnose_with_evidence(snap, evidence, AT))
    assert correlate(found, presorted=True) == correlate(found)


def test_evidence_subjects_of_kept_rows(base) -> None:
    snap, _ = base
    first = evidence_subjects(snap)
    again = evidence_subjects(dataclasses.replace(snap, jobs=tuple(snap.jobs)))
    failed = tuple(dataclasses.replace(j, state="FAILED") for j in snap.jobs[:5])
    changed = dataclasses.replace(snap, jobs=failed + snap.jobs[5:])
    assert first == again
    assert evidence_subjects(changed) != first or all(j.state == "FAILED" for j in snap.jobs[:5])


@pytest.mark.parametrize("polls", [4, 12])
def test_squeue_rows_whose_time_ticked(polls: int) -> None:
    """A row that differs from the last poll's only in TIME is the last job with the new
    elapsed; the parse equals a parse without carry."""
    from cockpit.slurm.commands import SEP, SQUEUE_FIELDS
    from cockpit.slurm.squeue import DRIFT_S, SqueueCarry, parse_squeue

    n = len(SQUEUE_FIELDS)
    rnd = random.Random(5)

    def row(i: int, state: str, elapsed: str) -> str:
        f = [""] * n
        names = [name for _, name in SQUEUE_FIELDS]
        vals = {
            "job_id": str(100 + i),
            "partition": "p",
            "name": f"n{i}",
            "user": "u",
            "state": state,
            "reason": "None",
            "cpus": "4",
            "node_count": "1",
            "node_list": f"c{i:02d}",
            "min_memory": "4G",
            "time_limit": "1-00:00:00",
            "elapsed": elapsed,
            "submit_time": "2026-11-01T10:00:00",
            "start_time": "2026-11-01T10:05:00",
            "end_time": "2026-11-02T10:05:00",
        }
        for k, v in vals.items():
            f[names.index(k)] = v
        return SEP.join(f)

    carry, timed = SqueueCarry(), SqueueCarry()
    secs = [rnd.randrange(0, 5000) for _ in range(30)]
    states = [rnd.choice(("RUNNING", "PENDING", "COMPLETED", "SUSPENDED")) for _ in range(30)]
    last = None
    now = 1_796_000_000.0
    for _ in range(polls):
        step = rnd.randrange(1, 4)
        now += step
        # a running job's time moves with the clock, or, suspended between polls, stands
        secs = [
            s + (step if st == "RUNNING" and rnd.random() < 0.8 else 0)
            for s, st in zip(secs, states, strict=True)
        ]
        text = "\n".join(
            row(i, state, f"{s // 60}:{s % 60:02d}")
            for i, (state, s) in enumerate(zip(states, secs, strict=True))
        )
        jobs, warnings = parse_squeue(text, carry=carry)
        plain = parse_squeue(text)
        assert (jobs, warnings) == plain
        # carried on by the clock: the same jobs, each at squeue's TIME within DRIFT_S
        got, _ = parse_squeue(text, carry=timed, now=now)
        for a, b in zip(got, plain[0], strict=True):
            assert dataclasses.replace(a, elapsed_s=b.elapsed_s, elapsed_at=None) == b
            assert abs(a.elapsed_by(now) - b.elapsed_s) <= DRIFT_S
        if last is not None:
            for a, b in zip(last, jobs, strict=True):
                if a.elapsed_s == b.elapsed_s:
                    assert a is b  # the same row: the same object
        last = jobs


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), polls=st.integers(2, 8))
def test_kept_groups_correlate_as_from_scratch(base, seed: int, polls: int) -> None:
    """``correlate(..., memo=)`` keeps a group's incident while its members are the same
    objects and patches the groups of findings replaced in place; random findings leave,
    come back, are copied or have their title or severity changed (a starved job's minutes,
    a cause refined)."""
    snap, evidence = base
    every = list(diagnose_with_evidence(snap, evidence, AT))
    rnd = random.Random(seed)
    memo: dict = {}
    now = list(every)
    for _ in range(polls):
        if rnd.random() < 0.3:
            now = [f for f in every if rnd.random() < 0.9]
        else:  # replaced in place: the patch path
            now = [
                dataclasses.replace(
                    f,
                    title=f.title + rnd.choice(("", "!")),
                    severity=rnd.choice((f.severity, f.severity, "warning", "critical")),
                )
                if rnd.random() < 0.05
                else f
                for f in now
            ]
        now = sort_findings(now)  # as a diagnosis hands them (presorted)
        assert correlate(now, presorted=True, memo=memo) == correlate(now)


def test_a_replaced_finding_patches_its_group(base, monkeypatch) -> None:
    from cockpit.diagnosis import correlate as correlate_mod

    snap, evidence = base
    every = list(diagnose_with_evidence(snap, evidence, AT))
    # the demo's two OOM jobs as one failure (one signature): a group to patch
    ooms = [i for i, f in enumerate(every) if f.root_cause == "oom_killed"]
    assert len(ooms) >= 2, "the demo has two OOM jobs"
    for i in ooms:
        every[i] = dataclasses.replace(every[i], title="OUT_OF_MEMORY: ReqMem 64G")
    memo: dict = {}
    correlate(every, presorted=True, memo=memo)
    grouped = [k for k, (_, members) in memo["struct"]["groups"].items() if len(members) > 1]
    assert grouped, "jobs sharing a cause and a signature"
    member = memo["struct"]["groups"][grouped[0]][1][-1]
    i = every.index(member)
    now = list(every)
    now[i] = dataclasses.replace(member, confidence=member.confidence / 2)  # same group
    folds: list = []
    real = correlate_mod._fold_bulk
    monkeypatch.setattr(correlate_mod, "_fold_bulk", lambda *a: folds.append(1) or real(*a))
    got = correlate(now, presorted=True, memo=memo)
    assert folds == []  # patched: nothing folded again
    assert got == correlate(now)
    assert folds == [1]


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_alerts_look_only_at_changed_rows_and_miss_nothing(base, seed: int) -> None:
    """``watch.transitions.detect`` skips the rows that are last poll's objects; the alerts
    equal those found by comparing every row (last poll's rows copied: nothing is skipped,
    and reversed: the rows looked up by id)."""
    from cockpit.watch.transitions import detect

    snap, evidence = base
    rnd = random.Random(seed)
    prev = snap
    cur, _ = _tick(rnd, snap, evidence, [])
    jobs = list(cur.jobs)
    for _ in range(rnd.randrange(1, 6)):  # jobs failing and pending on something hopeless
        i = rnd.randrange(len(jobs))
        jobs[i] = dataclasses.replace(
            jobs[i],
            state=rnd.choice(("FAILED", "PENDING", "OUT_OF_MEMORY")),
            reason=rnd.choice(("PartitionTimeLimit", "Resources", "JobHeldAdmin")),
        )
    cur = dataclasses.replace(cur, jobs=tuple(jobs))
    findings = list(diagnose_with_evidence(cur, evidence, AT))
    got = detect(prev, cur, findings, AT)
    copied = dataclasses.replace(prev, jobs=tuple(dataclasses.replace(j) for j in prev.jobs))
    flipped = dataclasses.replace(prev, jobs=tuple(reversed(prev.jobs)))
    assert got == detect(copied, cur, findings, AT)
    key = [(a.rule, a.subject) for a in got]
    assert sorted(key, key=str) == sorted(
        [(a.rule, a.subject) for a in detect(flipped, cur, findings, AT)], key=str
    )
    # a job left and the others moved up (a real site's every poll): only the rows that are
    # not last poll's objects are looked at, and the alerts are those of comparing every row
    left = dataclasses.replace(prev, jobs=prev.jobs[1:])
    left_copied = dataclasses.replace(left, jobs=tuple(dataclasses.replace(j) for j in left.jobs))
    assert detect(left, cur, findings, AT) == detect(left_copied, cur, findings, AT)


def test_job_rows_keep_their_objects_while_the_table_draws_time_passing() -> None:
    """A running job's TIME counts on from squeue's elapsed and a pending job's wait from its
    submission (to the minute past an hour), drawn at each poll's time; the rows themselves
    are the last poll's objects, so nothing downstream pays for the clock."""
    from cockpit.views import JOB_COLUMNS

    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    run = SlurmJob(
        "7", "train", "ana", "gpu", "RUNNING", "None", elapsed_s=600, elapsed_at=t0.timestamp()
    )
    wait = SlurmJob(
        "8", "eval", "ana", "gpu", "PENDING", "Priority", submit_time=t0 - timedelta(seconds=4000)
    )
    done = SlurmJob("9", "prep", "ana", "gpu", "COMPLETED", "None", elapsed_s=42)
    snap = Snapshot("c", "slurm", t0, jobs=(run, wait, done))
    memo = RowMemo()
    clock = next(c.clock for c in JOB_COLUMNS if c.label == "TIME")
    at = JOB_COLUMNS.index(next(c for c in JOB_COLUMNS if c.label == "TIME"))

    def drawn(rows) -> dict[str, str]:
        return {
            r.cells[0]: clock(int(rows.as_of - r.tick[0]), r.tick[1]) if r.tick else r.cells[at]
            for r in rows
        }

    first = job_rows(snap, {}, t0 + timedelta(seconds=30), memo)
    assert drawn(first) == {"7": "10:30", "8": "1:07:00", "9": "0:42"}
    later = job_rows(snap, {}, t0 + timedelta(seconds=95), memo, dirty=frozenset())
    assert drawn(later) == {"7": "11:35", "8": "1:08:00", "9": "0:42"}
    assert all(a is b for a, b in zip(first, later, strict=True))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_starvation_candidates_are_the_rule_read_plainly(seed: int) -> None:
    """Large jobs pending on Resources/Priority with 3+ later jobs of their partition running,
    in queue order, as the rule's text says, whatever the mix of states, sizes and gaps."""
    import bisect

    rnd = random.Random(seed)
    snap = _starving_site(rnd, 80)
    jobs = tuple(
        dataclasses.replace(
            j,
            state=rnd.choice((j.state, j.state, "COMPLETED", "SUSPENDED")),
            cpus=rnd.choice((j.cpus, None)),
            submit_time=rnd.choice((j.submit_time, j.submit_time, None)),
        )
        for j in snap.jobs
    )
    running = [j for j in jobs if j.state == "RUNNING" and j.submit_time is not None]
    sizes = sorted(j.cpus for j in running if j.cpus)
    median = sizes[len(sizes) // 2] if sizes else 1
    want = []
    for j in jobs if running else ():
        if j.state != "PENDING" or j.reason not in ("Resources", "Priority"):
            continue
        if j.submit_time is None:
            continue
        if not ((j.cpus or 0) >= max(4 * median, 8) or (j.node_count or 1) >= 2):
            continue
        later = sorted(r.submit_time for r in running if r.partition == j.partition)
        n = len(later) - bisect.bisect_right(later, j.submit_time)
        if n >= 3:
            want.append((j, n))
    assert slurm_site.starvation_candidates(jobs) == want
