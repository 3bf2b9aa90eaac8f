from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cockpit.model import (
    Finding,
    Pool,
    PoolNode,
    SlurmJob,
    SlurmNode,
    Snapshot,
    SourceError,
    Stage,
    Subject,
    TrainingJob,
)
from cockpit.watch.alerts import Alert, AlertConfig
from cockpit.watch.transitions import detect

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)


def snap(t=T0, jobs=(), nodes=(), tjobs=(), error=None, kind="slurm", source="hpc"):
    return Snapshot(
        source=source,
        kind=kind,
        taken_at=t,
        jobs=tuple(jobs),
        nodes=tuple(nodes),
        training_jobs=tuple(tjobs),
        error=error,
    )


def job(jid="42", state="RUNNING", reason="None", user="alice", **kw):
    return SlurmJob(
        job_id=jid, name="train", user=user, partition="gpu", state=state, reason=reason, **kw
    )


def rules(alerts):
    return [(a.rule, a.subject.id) for a in alerts]


def test_job_turning_failed_states_fire_once_with_finding():
    f = Finding(
        "oom_killed",
        "critical",
        Subject("job", "hpc", "42"),
        "killed for memory (MaxRSS 16G = ReqMem)",
    )
    for state in ("FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"):
        prev = snap(jobs=[job(state="RUNNING")])
        cur = snap(T1, jobs=[job(state=state, node_list="cn01")])
        out = detect(prev, cur, [f], T1)
        assert rules(out) == [("job_failed", "42")], state
        assert state in out[0].title and "cn01" in out[0].title
        assert out[0].finding is f and out[0].user == "alice" and out[0].time == T1
        # the next poll still shows the job FAILED: no new alert
        assert detect(cur, snap(T1 + timedelta(minutes=1), jobs=[job(state=state)]), [], T1) == []


def test_completed_and_cancelled_jobs_do_not_fire():
    prev = snap(jobs=[job(state="RUNNING"), job("43", state="RUNNING")])
    cur = snap(T1, jobs=[job(state="COMPLETED"), job("43", state="CANCELLED")])
    assert detect(prev, cur, [], T1) == []


def test_job_that_failed_between_polls_fires():
    out = detect(snap(jobs=[]), snap(T1, jobs=[job("50", state="FAILED")]), [], T1)
    assert rules(out) == [("job_failed", "50")]


def test_first_poll_is_a_baseline_not_a_flood():
    cur = snap(jobs=[job(state="FAILED")], nodes=[SlurmNode("cn03", "IDLE", flags=("DRAIN",))])
    assert detect(None, cur, [], T0) == []


def test_node_entering_drain_and_down_with_reason():
    prev = snap(nodes=[SlurmNode("cn03", "MIXED"), SlurmNode("cn04", "IDLE")])
    cur = snap(
        T1,
        nodes=[
            SlurmNode(
                "cn03", "MIXED", flags=("DRAIN",), reason="Kill task failed", reason_user="slurm"
            ),
            SlurmNode("cn04", "DOWN", flags=("NOT_RESPONDING",), reason="Not responding"),
        ],
    )
    out = detect(prev, cur, [], T1)
    assert rules(out) == [("node_unhealthy", "cn03"), ("node_unhealthy", "cn04")]
    assert (
        "DRAIN" in out[0].title
        and "Kill task failed" in out[0].title
        and out[0].severity == "warning"
    )
    assert (
        "DOWN" in out[1].title
        and "Not responding" in out[1].title
        and out[1].severity == "critical"
    )
    # staying drained is not news; drained -> drained+down is
    again = snap(T1, nodes=[SlurmNode("cn03", "DOWN", flags=("DRAIN",), reason="x"), cur.nodes[1]])
    assert rules(detect(cur, again, [], T1)) == [("node_unhealthy", "cn03")]
    assert "entered DOWN" in detect(cur, again, [], T1)[0].title


def test_drain_alert_takes_the_critical_severity_of_its_finding():
    """The incident view calls a 'Kill task failed' drain critical; its alert must not say WARN."""
    prev = snap(nodes=[SlurmNode("cn03", "MIXED")])
    cur = snap(T1, nodes=[SlurmNode("cn03", "MIXED", flags=("DRAIN",), reason="Kill task failed")])
    crit = Finding(
        "node_drain_kill_task_failed", "critical", Subject("node", "hpc", "cn03"), "drain"
    )
    assert detect(prev, cur, [crit], T1)[0].severity == "critical"
    assert detect(prev, cur, [], T1)[0].severity == "warning"


def test_pending_on_never_runs_reason():
    prev = snap(jobs=[job(state="PENDING", reason="Priority")])
    cur = snap(T1, jobs=[job(state="PENDING", reason="PartitionConfig")])
    out = detect(prev, cur, [], T1)
    assert rules(out) == [("pending_never_runs", "42")] and "PartitionConfig" in out[0].title
    assert detect(cur, cur, [], T1) == []  # same reason next poll: quiet
    # Resources resolves by itself: no alert
    assert detect(prev, snap(T1, jobs=[job(state="PENDING", reason="Resources")]), [], T1) == []


def test_pending_never_runs_from_engine_label():
    f = Finding(
        "pending_partition_limit",
        "warning",
        Subject("job", "hpc", "42"),
        "asks 64 CPUs, nodes have 32",
    )
    cur = snap(T1, jobs=[job(state="PENDING", reason="Resources")])
    out = detect(snap(jobs=[]), cur, [f], T1)
    assert rules(out) == [("pending_never_runs", "42")] and out[0].finding is f


def test_source_down_and_recovered():
    err = SourceError("unreachable", "connection refused", "ssh login1")
    down = snap(T1, error=err)
    out = detect(snap(), down, [], T1)
    assert rules(out) == [("source_down", "hpc")] and "connection refused" in out[0].title
    assert out[0].subject.kind == "cluster" and out[0].severity == "critical"
    assert detect(down, snap(T1, error=err), [], T1) == []  # still down: quiet
    assert rules(detect(None, down, [], T1)) == [("source_down", "hpc")]  # down at start: say so
    up = detect(down, snap(T1), [], T1)
    assert rules(up) == [("source_recovered", "hpc")] and up[0].severity == "info"


def test_outage_in_between_compares_against_last_good():
    good = snap(jobs=[job(state="RUNNING")])
    down = snap(T1, error=SourceError("timeout", "squeue timed out"))
    back = snap(T1 + timedelta(minutes=1), jobs=[job(state="RUNNING"), job("43", state="FAILED")])
    out = detect(down, back, [], T1, last_good=good)
    assert rules(out) == [("source_recovered", "hpc"), ("job_failed", "43")]


def tjob(phase="Creating", since=T0, jid="t1", **kw):
    return TrainingJob(
        job_id=jid,
        name="bert",
        phase=phase,
        phase_since=since,
        pool_name="pool-a",
        user="bob",
        **kw,
    )


def test_modelarts_initializing_crosses_threshold_once():
    # the engine's threshold: 10 min on a public pool (3 on a dedicated one)
    start = T0 - timedelta(minutes=9, seconds=30)
    prev = snap(T0, tjobs=[tjob(since=start)], kind="modelarts", source="proj")
    cur = snap(T1, tjobs=[tjob(since=start)], kind="modelarts", source="proj")
    out = detect(prev, cur, [], T1)
    assert rules(out) == [("init_slow", "t1")]
    assert "Initializing for 10 min" in out[0].title and "pool-a" in out[0].title
    assert "(threshold 10 min)" in out[0].title
    later = snap(
        T1 + timedelta(minutes=1), tjobs=[tjob(since=start)], kind="modelarts", source="proj"
    )
    assert detect(cur, later, [], later.taken_at) == []
    # a custom threshold
    cfg = AlertConfig(initializing_s=20 * 60)
    assert detect(prev, cur, [], T1, config=cfg) == []


def test_running_with_open_preparing_stage_counts_as_initializing():
    stage = Stage("preparing", T0 - timedelta(minutes=20), None)
    prev = snap(
        T0,
        tjobs=[
            tjob("Running", since=None, stages=(stage,), create_time=T0 - timedelta(minutes=20))
        ],
        kind="modelarts",
    )
    cur = snap(
        T1,
        tjobs=[
            tjob("Running", since=None, stages=(stage,), create_time=T0 - timedelta(minutes=20))
        ],
        kind="modelarts",
    )
    # already past the threshold at the previous poll: not a crossing
    assert detect(prev, cur, [], T1) == []
    # appearing already past it (created while we were not looking) fires
    assert rules(detect(snap(T0, kind="modelarts"), cur, [], T1)) == [("init_slow", "t1")]


def test_modelarts_failed():
    prev = snap(T0, tjobs=[tjob("Running")], kind="modelarts")
    cur = snap(T1, tjobs=[tjob("Failed", secondary_phase="ImagePullFailed")], kind="modelarts")
    out = detect(prev, cur, [], T1)
    assert rules(out) == [("training_failed", "t1")] and "ImagePullFailed" in out[0].title


def _pool(*phases: str) -> Pool:
    nodes = tuple(PoolNode(f"node-{i}", ph) for i, ph in enumerate(phases))
    return Pool("pool-1", "a100-dedicated", nodes=nodes)


def test_pool_node_turning_abnormal_alerts_with_the_pools_verdict():
    """A dedicated pool's node going Abnormal takes no training job: a critical incident on
    the dashboard, so a page too (it was on no channel: no rule looked at pools)."""
    ok = replace(snap(T0, kind="modelarts"), pools=(_pool("Available", "Available"),))
    bad = replace(snap(T1, kind="modelarts"), pools=(_pool("Available", "Abnormal"),))
    f = Finding("pool_node_abnormal", "critical", Subject("pool", "hpc", "pool-1"), "Pool x")
    out = detect(ok, bad, [f], T1)
    assert rules(out) == [("node_unhealthy", "pool-1")]
    assert "node-1" in out[0].title and "node-0" not in out[0].title
    assert out[0].severity == "critical" and out[0].finding is f
    # still Abnormal at the next poll: nothing new; a second node turning is news again
    assert detect(bad, replace(bad, taken_at=T1 + timedelta(minutes=1)), [f], T1) == []
    worse = replace(bad, pools=(_pool("Abnormal", "Abnormal"),))
    out = detect(bad, worse, [f], T1)
    assert rules(out) == [("node_unhealthy", "pool-1")] and "node-0" in out[0].title


def test_repeated_failures_counts_history_within_window():
    cfg = AlertConfig(failures_count=3, failures_window_s=3600)
    old = [
        Alert(
            T0 - timedelta(minutes=m),
            "job_failed",
            "warning",
            Subject("job", "hpc", str(i)),
            "x",
            None,
            "hpc",
            "alice",
        )
        for i, m in ((1, 30), (2, 10))
    ]
    prev = snap(jobs=[job("3")])
    cur = snap(T1, jobs=[job("3", state="FAILED")])
    out = detect(prev, cur, [], T1, config=cfg, recent=old)
    assert rules(out) == [("job_failed", "3"), ("repeated_failures", "alice")]
    assert out[1].subject.kind == "user" and "3 jobs of alice" in out[1].title
    # one of the earlier failures outside the window: only 2 -> no repeated alert
    stale = [replace(old[0], time=T0 - timedelta(hours=2)), old[1]]
    assert rules(detect(prev, cur, [], T1, config=cfg, recent=stale)) == [("job_failed", "3")]
    # other users' failures do not count
    bob = [replace(a, user="bob") for a in old]
    assert rules(detect(prev, cur, [], T1, config=cfg, recent=bob)) == [("job_failed", "3")]


def test_repeated_failures_count_when_jobs_ended_not_when_a_first_run_saw_them():
    # `watch --once` on a new machine sees failures from hours ago all at once: "4 jobs of kim
    # failed within 60 min" named jobs that died 1.5 h before
    cfg = AlertConfig(failures_count=3, failures_window_s=3600)

    def failed(i: str, ended_ago: timedelta) -> Alert:
        f = Finding("x", "critical", Subject("job", "hpc", i), "x", first_seen=T1 - ended_ago)
        return Alert(T1, "job_failed", "critical", Subject("job", "hpc", i), "x", f, "hpc", "alice")

    long_ago = [failed(str(i), timedelta(minutes=90)) for i in range(1, 4)]
    prev = snap(jobs=[job("9")])
    cur = snap(T1, jobs=[job("9", state="FAILED")])
    out = detect(prev, cur, [], T1, config=cfg, recent=long_ago)
    assert "repeated_failures" not in {r for r, _ in rules(out)}
    recent = [failed(str(i), timedelta(minutes=10)) for i in range(1, 4)]
    out = detect(prev, cur, [], T1, config=cfg, recent=recent)
    assert "repeated_failures" in {r for r, _ in rules(out)}


def test_repeated_failures_name_the_jobs_in_the_order_people_count_them():
    # as text the list read "1, 10, 11, 15, 2, 4" (a new-user trial on the lab)
    cfg = AlertConfig(failures_count=3, failures_window_s=3600)
    old = [
        Alert(T0, "job_failed", "warning", Subject("job", "hpc", i), "x", None, "hpc", "alice")
        for i in ("10", "2", "11")
    ]
    prev = snap(jobs=[job("4")])
    cur = snap(T1, jobs=[job("4", state="FAILED")])
    out = detect(prev, cur, [], T1, config=cfg, recent=old)
    assert out[-1].title.endswith(": 2, 4, 10, 11"), out[-1].title
