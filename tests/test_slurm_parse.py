"""Parsers against the real Slurm 22.05 lab captures (tests/fixtures/lab/<scenario>/)."""

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from cockpit.errors import ParseError
from cockpit.model import ExitCode, SlurmJob
from cockpit.slurm.commands import SACCT_FIELDS, SEP, SQUEUE_FIELDS
from cockpit.slurm.parse import (
    parse_duration_s,
    parse_mem_mib,
    parse_req_mem,
    parse_sacct,
    parse_scontrol_job,
    parse_scontrol_nodes,
    parse_scontrol_partitions,
    parse_scontrol_records,
    parse_time,
    resolve_output_path,
)
from cockpit.slurm.parse_json import parse_sacct_json, parse_sinfo_json, parse_squeue_json
from cockpit.slurm.squeue import parse_squeue

LAB = Path(__file__).parent / "fixtures" / "lab"


def cap(scenario: str, name: str) -> str:
    return (LAB / scenario / name).read_text()


# --------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("s", "mib"),
    [
        ("100M", 100),
        ("4G", 4096),
        ("4Gn", 4096),
        ("2Gc", 2048),
        ("827096K", 808),
        ("0", 0),
        ("1T", 1048576),
        ("16?", None),
        ("", None),
        ("UNLIMITED", None),
        (None, None),
    ],
)
def test_parse_mem_mib(s, mib):
    assert parse_mem_mib(s) == mib


def test_req_mem_per_cpu_flag():
    assert parse_req_mem("2Gc") == (2048, True)
    assert parse_req_mem("4Gn") == (4096, False)


@pytest.mark.parametrize(
    ("s", "secs"),
    [
        ("00:10:00", 600),
        ("1-02:03:04", 93784),
        ("5:00", 300),
        ("0:26", 26),
        ("2-00", 172800),
        ("UNLIMITED", None),
        ("INVALID", None),
        ("Partition_Limit", None),
        ("", None),
        ("00:00.123", 0),
        ("30", 1800),
    ],
)
def test_parse_duration(s, secs):
    assert parse_duration_s(s) == secs


def test_parse_time_attaches_cluster_zone():
    cet = timezone(timedelta(hours=1))
    assert parse_time("2026-11-29T20:28:09", cet) == datetime(2026, 11, 29, 20, 28, 9, tzinfo=cet)
    for null in ("N/A", "Unknown", "None", "", "(null)"):
        assert parse_time(null, UTC) is None


# --------------------------------------------------------------------------- squeue


def test_squeue_capture_with_header_and_pipe():
    jobs, warnings = parse_squeue(cap("overview", "squeue_o.txt"))
    assert warnings == []
    by_id = {j.job_id: j for j in jobs}
    assert (
        by_id["5"].state == "PENDING"
        and by_id["5"].reason == "PartitionConfig"
        and by_id["5"].cpus == 8
    )
    assert by_id["5"].nodes == () and by_id["5"].start_time is None
    oom = parse_squeue(cap("oom", "squeue_o.txt"))[0][0]
    assert (oom.job_id, oom.state, oom.reason, oom.nodes) == (
        "4",
        "OUT_OF_MEMORY",
        "OutOfMemory",
        ("c3",),
    )
    assert oom.min_memory_mib == 100 and oom.time_limit_s == 120
    assert oom.submit_time == datetime(2026, 11, 29, 20, 28, 9, tzinfo=UTC)
    assert oom.work_dir == "/tmp/slurmlab/jobs"


def _native_row(**over: str) -> str:
    vals = {name: "" for _, name in SQUEUE_FIELDS}
    vals.update(
        job_id="42",
        partition="debug",
        name="a|b name",
        user="alice",
        state="RUNNING",
        reason="None",
        cpus="2",
        node_count="2",
        node_list="c[1-2]",
        min_memory="2Gc",
        time_limit="1-00:00:00",
        elapsed="10:00",
        submit_time="2026-11-29T20:00:00",
        start_time="2026-11-29T20:01:00",
        end_time="N/A",
        work_dir="/home/a",
        account="proj",
        qos="normal",
        dependency="(null)",
        priority="1000",
        comment="(null)",
        command="/home/a/run.sh --x=1",
    )
    vals.update(over)
    return SEP.join(vals[name] for _, name in SQUEUE_FIELDS)


def test_squeue_native_format_unit_separator():
    text = (
        _native_row()
        + "\n"
        + _native_row(job_id="43_7", state="PENDING", reason="Priority", node_list="")
        + "\n"
    )
    jobs, warnings = parse_squeue(text)
    assert warnings == []
    j = jobs[0]
    assert j.name == "a|b name"  # '|' in a name is harmless with \x1f
    assert j.nodes == ("c1", "c2") and j.min_memory_mib == 2048 and j.mem_per_cpu
    assert j.time_limit_s == 86400 and j.elapsed_s == 600 and j.end_time is None
    assert j.dependency == "" and j.priority == 1000 and j.command == "/home/a/run.sh --x=1"
    assert jobs[1].job_id == "43_7" and jobs[1].reason == "Priority"


def test_squeue_skips_malformed_rows_and_says_so():
    text = _native_row() + "\ngarbage line\n" + _native_row(job_id="x1") + "\n"
    jobs, warnings = parse_squeue(text)
    assert [j.job_id for j in jobs] == ["42"]
    assert len(warnings) == 2 and "row 2" in warnings[0] and "x1" in warnings[1]


def test_squeue_wholly_unusable_raises():
    with pytest.raises(ParseError):
        parse_squeue("squeue: error: Invalid user\nsomething else\n")
    assert parse_squeue("") == ([], [])


# --------------------------------------------------------------------------- scontrol


def test_scontrol_records_values_with_spaces():
    recs = parse_scontrol_records(cap("drained", "scontrol_show_node.txt"))
    assert len(recs) == 4
    assert recs[0]["OS"] == "Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0"
    assert recs[1]["Reason"] == "lab: ECC errors on DIMM B2 [root@2026-11-29T20:28:33]"
    assert recs[1]["CfgTRES"] == "cpu=2,mem=1000M,billing=2"


def test_scontrol_records_multiline_form():
    text = (
        "NodeName=c2 Arch=x86_64 CoresPerSocket=1\n"
        "   CPUAlloc=0 CPUTot=2 CPULoad=0.19\n"
        "   OS=Linux 6.1.0 #1 SMP Debian\n"
        "   State=IDLE+DRAIN ThreadsPerCore=1\n"
        "   Reason=bad GPU=3 on board [root@2026-11-29T20:28:33]\n"
        "\n"
        "NodeName=c3 Arch=x86_64\n"
        "   State=MIXED\n"
    )
    recs = parse_scontrol_records(text)
    assert [r["NodeName"] for r in recs] == ["c2", "c3"]
    assert recs[0]["OS"] == "Linux 6.1.0 #1 SMP Debian"
    assert recs[0]["Reason"] == "bad GPU=3 on board [root@2026-11-29T20:28:33]"
    assert recs[0]["CPUTot"] == "2"


def test_nodes_full_reason_user_time_and_flags():
    nodes = {n.name: n for n in parse_scontrol_nodes(cap("drained", "scontrol_show_node.txt"))[0]}
    c2 = nodes["c2"]
    assert c2.reason == "lab: ECC errors on DIMM B2"  # sinfo -R would cut it at 20 chars
    assert c2.reason_user == "root" and c2.reason_time == datetime(
        2026, 11, 29, 20, 28, 33, tzinfo=UTC
    )
    assert c2.state_label == "IDLE+DRAIN" and c2.is_drain
    assert (
        nodes["c1"].state == "MIXED"
        and nodes["c1"].alloc_memory_mib == 100
        and nodes["c1"].cpus_alloc == 1
    )
    assert nodes["c3"].partitions == ("batch", "maint") and nodes["c3"].real_memory_mib == 2000
    down = {n.name: n for n in parse_scontrol_nodes(cap("node_down", "scontrol_show_node.txt"))[0]}[
        "c3"
    ]
    assert down.state == "DOWN" and "NOT_RESPONDING" in down.flags and down.is_down
    assert down.state_label == "DOWN*" and down.reason == "Not responding"


def test_partitions_limits():
    parts = {
        p.name: p
        for p in parse_scontrol_partitions(cap("drained", "scontrol_show_partition.txt"))[0]
    }
    assert (
        parts["debug"].default
        and parts["debug"].nodes == ("c1", "c2")
        and parts["debug"].max_time_s == 600
    )
    assert parts["tiny"].max_cpus_per_node == 1 and parts["debug"].max_cpus_per_node is None
    assert parts["maint"].state == "DOWN" and parts["batch"].total_cpus == 5
    assert parts["debug"].max_mem_per_node_mib is None and parts["debug"].qos == ""


def test_scontrol_job_paths_and_exit_code():
    job = parse_scontrol_job(cap("timeout", "scontrol_show_job.txt"))[0][0]
    assert job.state == "TIMEOUT" and job.exit_code == ExitCode(0, 15)
    assert job.stdout_path == "/tmp/slurmlab/jobs/slurm-1.out" and job.user == "root"
    assert (
        job.time_limit_s == 60
        and job.elapsed_s == 87
        and job.mem_per_cpu
        and job.min_memory_mib == 100
    )
    pend = parse_scontrol_job(cap("pending_resources", "scontrol_show_job_priority.txt"))[0][0]
    assert pend.reason == "Priority" and pend.start_time is None and pend.nodes == ()


def test_scontrol_job_unusable_raises():
    with pytest.raises(ParseError):
        parse_scontrol_job("JobName=x JobState=RUNNING\n")


# --------------------------------------------------------------------------- sacct


def test_sacct_cancelled_by_and_maxrss():
    recs, _ = parse_sacct(cap("oom_nocgroup", "sacct_P.txt"))
    job, batch = recs
    assert (job.job_id, job.step, job.state, job.exit_code) == ("2", "", "FAILED", ExitCode(0, 9))
    assert job.req_mem_mib == 100 and job.timelimit_s == 120 and not job.placeholder
    assert (batch.step, batch.state, batch.cancelled_by, batch.max_rss_mib) == (
        "batch",
        "CANCELLED",
        "0",
        808,
    )


def test_sacct_placeholder_row():
    recs, _ = parse_sacct(cap("oom_nocgroup", "sacct_P_immediate.txt"))
    assert recs[0].placeholder and recs[0].job_name == "allocation" and recs[0].req_mem_mib is None
    assert not recs[1].placeholder


def test_sacct_oom_and_headerless_unit_separator():
    recs, _ = parse_sacct(cap("oom", "sacct_P.txt"))
    assert recs[0].state == "OUT_OF_MEMORY" and recs[0].exit_code == ExitCode(0, 125)
    row = dict.fromkeys(SACCT_FIELDS, "")
    row.update(
        JobID="7_3.batch",
        JobName="x",
        State="CANCELLED by 1000",
        ExitCode="0:15",
        ReqMem="4Gn",
        MaxRSS="2G",
        Elapsed="1-00:00:01",
        Start="2026-11-29T20:00:00",
        End="Unknown",
    )
    recs, warnings = parse_sacct(SEP.join(row.values()) + "\n")
    r = recs[0]
    assert (r.job_id, r.step, r.cancelled_by, r.req_mem_mib, r.max_rss_mib, r.elapsed_s) == (
        "7_3",
        "batch",
        "1000",
        4096,
        2048,
        86401,
    )
    assert r.end_time is None and warnings == []


def test_sacct_bad_rows():
    recs, warnings = parse_sacct("JobID|State\n5|RUNNING\nnope|RUNNING\n1|2|3\n")
    assert [r.job_id for r in recs] == ["5"] and len(warnings) == 2
    with pytest.raises(ParseError):
        parse_sacct("JobID|State\nnope|RUNNING\n")


# --------------------------------------------------------------------------- JSON


def test_squeue_json_wait_status_and_times():
    jobs = {j.job_id: j for j in parse_squeue_json(cap("exit127", "squeue_json.txt"))[0]}
    assert jobs["3"].state == "FAILED" and jobs["3"].exit_code == ExitCode(127, 0)
    assert (
        jobs["1"].time_limit_s == 60 and jobs["1"].mem_per_cpu and jobs["1"].min_memory_mib == 100
    )
    assert jobs["2"].elapsed_s == 2 and jobs["2"].submit_time.tzinfo is not None


def test_squeue_json_agrees_with_delimited():
    by_text = {j.job_id: j for j in parse_squeue(cap("overview", "squeue_o.txt"))[0]}
    by_json = {j.job_id: j for j in parse_squeue_json(cap("overview", "squeue_json.txt"))[0]}
    assert by_text.keys() == by_json.keys()
    for jid, j in by_text.items():
        k: SlurmJob = by_json[jid]
        assert (j.state, j.reason, j.partition, j.nodes) == (
            k.state,
            k.reason,
            k.partition,
            k.nodes,
        )
        assert k.cpus in (j.cpus, None)  # JSON reports no cpus for a job rejected at submit


def test_sinfo_json_nodes():
    nodes = {n.name: n for n in parse_sinfo_json(cap("drained", "sinfo_json.txt"))[0]}
    assert nodes["c2"].is_drain and nodes["c2"].reason == "lab: ECC errors on DIMM B2"
    assert nodes["c2"].reason_user == "root" and nodes["c2"].reason_time is not None
    assert nodes["c2"].cpu_load == pytest.approx(0.19)


def test_sacct_json():
    recs = parse_sacct_json(cap("oom_nocgroup", "sacct_json.txt"))[0]
    assert (
        recs[0].state == "FAILED"
        and recs[0].exit_code == ExitCode(0, 9)
        and recs[0].req_mem_mib == 100
    )
    assert recs[1].step == "batch" and recs[1].max_rss_mib == 808 and recs[1].cancelled_by == "root"


def test_json_errors():
    with pytest.raises(ParseError):
        parse_squeue_json("squeue: error: unable to contact")
    with pytest.raises(ParseError):
        parse_sinfo_json('{"meta": {}}')


# --------------------------------------------------------------------------- paths


def test_resolve_output_path():
    j = SlurmJob(
        job_id="12",
        name="train",
        user="bob",
        partition="p",
        state="RUNNING",
        reason="None",
        nodes=("c3",),
        work_dir="/home/bob",
    )
    assert resolve_output_path("", j) == "/home/bob/slurm-12.out"
    assert resolve_output_path("/logs/%x-%j-%u-%N.%%.log", j) == "/logs/train-12-bob-c3.%.log"
    a = SlurmJob(
        job_id="40_3",
        name="arr",
        user="bob",
        partition="p",
        state="RUNNING",
        reason="None",
        work_dir="/w",
    )
    assert resolve_output_path("", a) == "/w/slurm-40_3.out"
    assert resolve_output_path("out-%A_%4a.txt", a) == "/w/out-40_0003.txt"


def test_nodes_whose_line_did_not_change_are_last_polls_objects():
    """A poll re-reads every node; the unchanged ones must come back as the same objects, so
    diagnosis and the node pane see at once that nothing moved (a 600-node site: 20 ms a poll)."""
    text = cap("drained", "scontrol_show_node.txt")
    memo: dict = {}
    first, w1 = parse_scontrol_nodes(text, memo=memo)
    assert first == parse_scontrol_nodes(text)[0] and not w1
    lines = text.split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("NodeName=c1 "))
    lines[at] = lines[at].replace("CPUAlloc=1", "CPUAlloc=2")
    second, w2 = parse_scontrol_nodes("\n".join(lines), memo=memo)
    by_name = {n.name: n for n in first}
    assert [n.name for n in second] == [n.name for n in first] and not w2
    for n in second:
        if n.name == "c1":
            assert n is not by_name["c1"] and n.cpus_alloc == 2
        else:
            assert n is by_name[n.name]


@pytest.mark.parametrize(
    "text",
    [
        "NodeName=c1 State=IDLE CPUTot=4\nNodeName= State=IDLE\nNodeName=c3 CPUTot=x State=IDLE",
        "NodeName=c1 State=IDLE CPUTot=4\n\nState=IDLE CPUTot=2\n",
    ],
)
def test_nodes_memo_reports_bad_records_as_the_plain_parse_does(text):
    memo: dict = {}
    for _ in range(2):  # the second read comes from the memo
        assert parse_scontrol_nodes(text, memo=memo) == parse_scontrol_nodes(text)


@pytest.mark.parametrize("text", ["NodeName= State=IDLE", "garbage=here only"])
def test_nodes_memo_raises_as_the_plain_parse_does(text):
    with pytest.raises(ParseError) as plain:
        parse_scontrol_nodes(text)
    with pytest.raises(ParseError) as memoized:
        parse_scontrol_nodes(text, memo={})
    assert str(memoized.value) == str(plain.value)


def test_a_running_job_is_the_same_row_while_squeue_time_follows_the_clock() -> None:
    """squeue prints a running job's TIME anew each poll. While it is what the last read
    carried on by the clock says, the job is last poll's object (nothing the diagnosis or
    the rows read changed) and ``elapsed_by`` gives squeue's value; when it strays (suspended
    and resumed between two polls) the job is read anew. A suspended job's time stands."""
    from cockpit.slurm.squeue import SqueueCarry

    t0 = 1_796_000_000.0

    def poll(run: str, susp: str) -> str:
        return "\n".join(
            (
                _native_row(elapsed=run),
                _native_row(job_id="43", state="SUSPENDED", elapsed=susp),
                _native_row(job_id="44", state="PENDING", reason="Priority", elapsed="0:00"),
            )
        )

    carry = SqueueCarry()
    first, _ = parse_squeue(poll("10:00", "3:00"), carry=carry, now=t0)
    assert first[0].elapsed_at == t0 and first[1].elapsed_at is None
    again, _ = parse_squeue(poll("10:05", "3:00"), carry=carry, now=t0 + 5)
    assert again[0] is first[0] and again[1] is first[1] and again[2] is first[2]
    assert again[0].elapsed_by(t0 + 5) == 605
    late, _ = parse_squeue(poll("10:09", "3:00"), carry=carry, now=t0 + 12)  # 3 s of latency
    assert late[0] is first[0]
    # suspended for a minute between polls: squeue's TIME is 50 s behind the carried clock
    resumed, _ = parse_squeue(poll("10:20", "3:00"), carry=carry, now=t0 + 80)
    assert resumed[0] is not first[0]
    assert resumed[0].elapsed_s == 620 and resumed[0].elapsed_by(t0 + 90) == 630
    assert resumed[0].job_id == "42" and resumed[0].nodes == first[0].nodes
    assert resumed[1].elapsed_by(t0 + 90) == 180
    # a capture parsed with no time of its own: TIME as printed
    plain, _ = parse_squeue(poll("10:20", "3:00"))
    assert plain[0].elapsed_at is None and plain[0].elapsed_by(t0 + 999) == 620


def test_whose_time_runs_on_is_read_from_squeue_itself() -> None:
    """Slurm holds a completing job's time; a build (or a fake) that moves it with the clock
    is followed: after one read that shows it moving, the job is carried on like a running
    one (the same object while the clock explains its TIME), and read anew, fixed, once its
    TIME stands still."""
    from cockpit.slurm.squeue import SqueueCarry

    t0 = 1_796_000_000.0
    carry = SqueueCarry()

    def poll(t: float, elapsed: str) -> SlurmJob:
        jobs, _ = parse_squeue(
            _native_row(state="COMPLETING", elapsed=elapsed), carry=carry, now=t0 + t
        )
        return jobs[0]

    a = poll(0, "10:00")
    assert a.elapsed_at is None
    b = poll(5, "10:05")  # it moved with the clock
    assert b.elapsed_at == t0 + 5 and b.elapsed_by(t0 + 5) == 605
    c = poll(10, "10:10")
    assert c is b and c.elapsed_by(t0 + 10) == 610
    d = poll(20, "10:10")  # it stopped
    assert d is not c and d.elapsed_at is None and d.elapsed_by(t0 + 99) == 610


def test_a_running_job_is_carried_on_in_a_header_led_capture() -> None:
    """A header-led capture (``squeue -o "%i|%P|%T|%M|%j"``, TIME before the name): the same
    job while the clock explains its TIME, a new one when another field changes."""
    from cockpit.slurm.squeue import SqueueCarry

    t0 = 1_796_000_000.0
    carry = SqueueCarry()

    def poll(t: float, elapsed: str, name: str = "train") -> SlurmJob:
        text = f"JOBID|PARTITION|STATE|TIME|NAME\n77|gpu|RUNNING|{elapsed}|{name}\n"
        jobs, warnings = parse_squeue(text, carry=carry, now=t0 + t)
        assert warnings == []
        return jobs[0]

    a = poll(0, "1:00:00")
    b = poll(5, "1:00:05")
    assert b is a and b.elapsed_by(t0 + 5) == 3605
    c = poll(10, "1:00:10", name="train-2")
    assert c is not a and c.name == "train-2" and c.elapsed_by(t0 + 10) == 3610


def test_a_running_time_that_squeue_holds_is_shown_as_printed() -> None:
    """squeue printing the same TIME poll after poll (a stalled controller's cache, a replay):
    once the carried clock is further off than DRIFT_S the job is read anew as printed and
    stays that one object while the text does not change; it runs on again when it moves."""
    from cockpit.slurm.squeue import SqueueCarry

    t0 = 1_796_000_000.0
    carry = SqueueCarry()

    def poll(t: float, elapsed: str) -> SlurmJob:
        return parse_squeue(_native_row(elapsed=elapsed), carry=carry, now=t0 + t)[0][0]

    a = poll(0, "10:00")
    assert poll(5, "10:00") is a  # within DRIFT_S of the carried clock
    b = poll(10, "10:00")
    assert b is not a and b.elapsed_at is None and b.elapsed_by(t0 + 60) == 600
    assert poll(15, "10:00") is b and poll(20, "10:00") is b
    c = poll(25, "10:05")
    assert c.elapsed_at == t0 + 25 and c.elapsed_by(t0 + 30) == 610


def test_scontrol_node_reason_after_slurm_23s_indented_blank_line():
    """Slurm 23+ prints an indented blank line before Reason=; a paste may keep it blank or
    make it empty: the reason still belongs to the node."""
    from cockpit.slurm.parse import parse_scontrol_nodes

    for blank in ("   ", ""):
        text = (
            "NodeName=gpu7 Arch=x86_64 CoresPerSocket=1\n"
            "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n"
            "   CurrentWatts=0 AveWatts=0\n"
            f"{blank}\n"
            "   Reason=gres/gpu count reported lower than configured (0 < 1) "
            "[slurm@2024-12-19T11:03:34]\n"
            "\n"
            "NodeName=gpu8 Arch=x86_64 CoresPerSocket=1\n"
            "   State=IDLE ThreadsPerCore=1\n"
        )
        nodes, warnings = parse_scontrol_nodes(text)
        assert [n.name for n in nodes] == ["gpu7", "gpu8"], warnings
        assert nodes[0].reason.startswith("gres/gpu count reported lower than configured")
        assert not nodes[1].reason
