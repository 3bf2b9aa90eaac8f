"""Before it fails: the sstat parse, the sampling budget, the memory and silent-output rules,
and the alerts they raise, over output captured from the Slurm 22.05 lab
(tests/fixtures/risk/: ``sstat -a -n -P -j 2,3,11,99999`` with the cockpit's fields while job 2
held ~280 MB under --mem=300M, job 3 slept after one line, job 11 ran ``srun -n 2`` holding
~100 MB per task under --mem=400M; 99999 did not exist)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cockpit.diagnosis.context import build_context
from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.rules.slurm_risk import job_output_silent, memory_near_request
from cockpit.model import (
    Artifacts,
    JobOutput,
    RiskProbe,
    RiskSettings,
    SlurmJob,
    Snapshot,
    Subject,
)
from cockpit.slurm.parse import parse_req_mem
from cockpit.slurm.risk import RiskSampler, job_memory, tres_mem_per_node_mib
from cockpit.slurm.sstat import parse_sstat, size_kib
from cockpit.watch.transitions import risk_alerts

FIX = Path(__file__).parent / "fixtures" / "risk"
NOW = datetime(2026, 12, 4, 21, 44, tzinfo=UTC)


def _lab_jobs() -> dict[str, SlurmJob]:
    """The captured squeue rows (%i|%m|%C|%D|%P|%T) as the cockpit's jobs."""
    out = {}
    for line in (FIX / "squeue-mem-22.05.txt").read_text().splitlines():
        jid, mem, cpus, nodes, part, state = line.split("|")
        mib, per_cpu = parse_req_mem(mem)
        out[jid] = SlurmJob(
            jid,
            f"job{jid}",
            "root",
            part,
            state,
            "None",
            cpus=int(cpus),
            node_count=int(nodes),
            nodes=("c1",),
            node_list="c1",
            min_memory_mib=mib,
            mem_per_cpu=per_cpu,
            elapsed_s=360,
            start_time=NOW - timedelta(seconds=360),
        )
    return out


def _steps():
    return parse_sstat((FIX / "sstat-22.05.txt").read_text())


def _snap(jobs, probe) -> Snapshot:
    return Snapshot("lab", "slurm", NOW, jobs=tuple(jobs), risk=probe)


def _ctx(snap):
    return build_context(snap, Artifacts(), NOW)


def test_sstat_lab_output_parses_every_step_with_its_figures():
    steps, skipped = _steps()
    assert skipped == 0
    by = {(s.job_id, s.step): s for s in steps}
    assert set(by) == {("2", "batch"), ("3", "batch"), ("11", "batch"), ("11", "0")}
    assert by[("2", "batch")].max_rss_kib == 293768 and by[("2", "batch")].max_rss_node == "c1"
    assert by[("11", "0")].ntasks == 2 and by[("11", "0")].nodes == 1
    # the job that did not exist is a line on stderr, not a row
    assert "couldn't get steps for job 99999" in (FIX / "sstat-22.05.stderr").read_text()


def test_sstat_sizes_with_suffixes_bytes_and_empty_fields():
    assert size_kib("293768K") == 293768
    assert size_kib("1.5M") == 1536
    assert size_kib("2G") == 2 * 1024 * 1024
    assert size_kib("300818432") == 293768  # --noconvert prints bytes
    assert size_kib("0") == 0
    assert size_kib("") is None and size_kib("n/a") is None
    # a step that has not reported yet, a parsable (-p) line with its trailing '|', a warning
    text = "7.batch||||||\n8.0|1G|c2|512M|2|c[2-3]|01:02:03|\nsstat: warning: odd\n"
    steps, skipped = parse_sstat(text)
    assert skipped == 1
    assert steps[0].max_rss_kib is None and steps[0].ntasks is None
    assert steps[1].nodes == 2 and steps[1].ave_cpu_s == 3723


def test_a_job_at_95_percent_of_its_request_is_a_warning_with_the_figures_and_remedy():
    jobs = _lab_jobs()
    steps, _ = _steps()
    mem = job_memory(jobs["2"], [s for s in steps if s.job_id == "2"], NOW, None)
    snap = _snap(jobs.values(), RiskProbe(RiskSettings(), memory=(mem,)))
    (f,) = list(memory_near_request(snap, _ctx(snap)))
    assert f.severity == "warning" and f.subject == Subject("job", "lab", "2")
    assert "MaxRSS 286M" in f.title and "--mem 300M" in f.title and "(95 %)" in f.title
    assert "--mem=512M" in f.remedy
    assert "MaxRSS=293768K" in f.evidence[0].text


def test_a_step_of_two_tasks_on_one_node_counts_both_and_stays_quiet_at_half():
    jobs = _lab_jobs()
    steps, _ = _steps()
    mem = job_memory(jobs["11"], [s for s in steps if s.job_id == "11"], NOW, None)
    assert mem.step == "0" and mem.tasks_per_node == 2
    assert mem.used_kib == 2 * 109334  # AveRSS x tasks on the node, above one task's MaxRSS
    snap = _snap(jobs.values(), RiskProbe(RiskSettings(), memory=(mem,)))
    assert list(memory_near_request(snap, _ctx(snap))) == []


def test_climbing_past_the_first_figure_or_98_percent_is_critical():
    jobs = _lab_jobs()
    steps, _ = _steps()
    first = job_memory(jobs["2"], [s for s in steps if s.job_id == "2"], NOW, None)
    assert first.near_kib == 293768
    higher = [s for s in parse_sstat("2.batch|296000K|c1|296000K|1|c1|00:00:02\n")[0]]
    second = job_memory(jobs["2"], higher, NOW, first)
    snap = _snap(jobs.values(), RiskProbe(RiskSettings(), memory=(second,)))
    (f,) = list(memory_near_request(snap, _ctx(snap)))
    assert f.severity == "critical" and "still climbing" in f.title
    # the same figure at a stricter critical share is critical without a climb
    snap = _snap(jobs.values(), RiskProbe(RiskSettings(memory_critical=0.95), memory=(first,)))
    (f,) = list(memory_near_request(snap, _ctx(snap)))
    assert f.severity == "critical"


def test_the_warning_resolves_when_the_job_is_no_longer_running():
    jobs = _lab_jobs()
    steps, _ = _steps()
    mem = job_memory(jobs["2"], [s for s in steps if s.job_id == "2"], NOW, None)
    import dataclasses

    ended = dataclasses.replace(jobs["2"], state="CANCELLED")
    snap = _snap([ended], RiskProbe(RiskSettings(), memory=(mem,)))
    assert list(memory_near_request(snap, _ctx(snap))) == []


def _silent_probe(age_s: float, **settings) -> RiskProbe:
    out = JobOutput(
        "3",
        "/tmp/h36/quiet-3.out",
        11,
        NOW - timedelta(seconds=age_s),
        "hello once",
        1,
    )
    return RiskProbe(RiskSettings(**settings), outputs=(out,))


def test_stdout_silent_past_the_threshold_names_its_last_line_and_time():
    jobs = _lab_jobs()
    snap = _snap(jobs.values(), _silent_probe(40 * 60))
    (f,) = list(job_output_silent(snap, _ctx(snap)))
    assert f.root_cause == "job_output_silent" and f.severity == "warning"
    since = NOW - timedelta(minutes=40)
    assert f"no output since {since:%H:%M}" in f.title and "hello once" in f.title
    assert f.evidence[0].path == "/tmp/h36/quiet-3.out" and f.evidence[0].line == 1
    # under the threshold, or a partition given longer: nothing to say
    snap = _snap(jobs.values(), _silent_probe(20 * 60))
    assert list(job_output_silent(snap, _ctx(snap))) == []
    snap = _snap(jobs.values(), _silent_probe(40 * 60, log_silent_partitions=(("debug", 3600),)))
    assert list(job_output_silent(snap, _ctx(snap))) == []
    # a job that never printed is not silent: it may log elsewhere
    empty = RiskProbe(outputs=(JobOutput("3", "/x/slurm-3.out", 0, NOW - timedelta(hours=2)),))
    snap = _snap(jobs.values(), empty)
    assert list(job_output_silent(snap, _ctx(snap))) == []


def test_the_engine_names_both_risks_as_the_jobs_verdicts():
    jobs = _lab_jobs()
    steps, _ = _steps()
    mem = job_memory(jobs["2"], [s for s in steps if s.job_id == "2"], NOW, None)
    probe = RiskProbe(RiskSettings(), memory=(mem,), outputs=_silent_probe(3600).outputs)
    found = {f.subject.id: f.root_cause for f in diagnose(_snap(jobs.values(), probe), now=NOW)}
    assert found["2"] == "memory_near_request" and found["3"] == "job_output_silent"


def test_the_budget_bounds_the_sample_and_near_jobs_go_first():
    sampler = RiskSampler(RiskSettings(sample_budget=50))
    running = [
        SlurmJob(
            str(1000 + i),
            "x",
            "u",
            "cpu",
            "RUNNING",
            "None",
            cpus=1,
            node_count=1,
            min_memory_mib=1000 + (i % 7),
            elapsed_s=i,
        )
        for i in range(10_000)
    ]
    first = sampler.memory_candidates(running)
    assert len(first) == 50
    # the largest requests first, then the longest running
    assert all(j.min_memory_mib == 1006 for j in first)
    # a job sampled near its request before goes ahead of all the never-sampled ones
    steps = parse_sstat("5000.batch|950000K|c1|950000K|1|c1|00:00:01\n")[0]
    near = next(j for j in running if j.job_id == "5000")
    sampler.memory["5000"] = job_memory(near, steps, NOW, None)
    sampler.mem_asked["5000"] = NOW.timestamp()
    assert sampler.memory_candidates(running)[0].job_id == "5000"
    # stdout: only jobs older than their threshold are looked at, at most the budget
    picked = sampler.output_candidates(running, NOW.timestamp())
    assert len(picked) == 50 and min(j.elapsed_s for j in picked) >= 1800
    assert picked[0].elapsed_s == 9999  # the longest running first
    young = [j for j in running if j.elapsed_s < 1800]
    assert sampler.output_candidates(young, NOW.timestamp()) == []
    # a row carried from an earlier poll: its elapsed time runs on from when it was read
    import dataclasses

    carried = dataclasses.replace(young[0], elapsed_s=5, elapsed_at=NOW.timestamp() - 1900)
    assert sampler.output_candidates([carried], NOW.timestamp()) == [carried]


def test_risk_alerts_fire_once_per_job_and_once_more_when_critical():
    jobs = _lab_jobs()
    steps, _ = _steps()
    mem = job_memory(jobs["2"], [s for s in steps if s.job_id == "2"], NOW, None)
    snap = _snap(jobs.values(), RiskProbe(RiskSettings(), memory=(mem,)))
    findings = diagnose(snap, now=NOW)
    # the first poll is the baseline; a job named later fires once, then never again
    alerts, keys = risk_alerts(None, snap, findings, NOW)
    assert alerts == []
    alerts, keys = risk_alerts(frozenset(), snap, findings, NOW)
    assert [a.rule for a in alerts] == ["memory_near"]
    assert "job 2 (job2, root) at risk" in alerts[0].title
    again, keys = risk_alerts(keys, snap, findings, NOW)
    assert again == []
    worse = _snap(jobs.values(), RiskProbe(RiskSettings(memory_critical=0.95), memory=(mem,)))
    alerts, keys = risk_alerts(keys, worse, diagnose(worse, now=NOW), NOW)
    assert [(a.rule, a.severity) for a in alerts] == [("memory_critical", "critical")]


def _training(phase: str, preview: str, changed: datetime | None) -> Snapshot:
    from cockpit.model import TrainingJob

    job = TrainingJob(
        "6f1c-uuid",
        "llama-ft",
        phase,
        log_preview=preview,
        log_task="worker-0",
        log_changed_at=changed,
        create_time=NOW - timedelta(hours=3),
    )
    return Snapshot("ma", "modelarts", NOW, training_jobs=(job,))


def test_a_running_training_job_whose_log_stopped_is_silent_with_its_last_line():
    preview = "step 100 loss 2.31\nstep 200 loss 2.12\n"
    found = [
        f
        for f in diagnose(_training("Running", preview, NOW - timedelta(minutes=45)), now=NOW)
        if f.root_cause == "training_log_silent"
    ]
    (f,) = found
    assert f.severity == "warning" and "step 200 loss 2.12" in f.title
    assert f"since {NOW - timedelta(minutes=45):%H:%M}" in f.title and f.evidence[0].line == 2
    # a log that moved 5 min ago, or a job still Initializing (its own rule), is not
    for snap in (
        _training("Running", preview, NOW - timedelta(minutes=5)),
        _training("Pending", preview, NOW - timedelta(minutes=45)),
    ):
        assert not [f for f in diagnose(snap, now=NOW) if f.root_cause == "training_log_silent"]
    # the alert names the training job by its name
    snap = _training("Running", preview, NOW - timedelta(minutes=45))
    alerts, _ = risk_alerts(frozenset(), snap, diagnose(snap, now=NOW), NOW)
    assert [(a.rule, a.title.split(" at risk")[0]) for a in alerts] == [
        ("output_silent", "training job llama-ft")
    ]


def test_allocated_tres_names_the_memory_per_node_whatever_the_unit():
    # squeue -O tres-alloc as the 22.05 and 26.05 labs printed it for --mem-per-cpu jobs
    assert tres_mem_per_node_mib("cpu=2,mem=600M,node=1,billing=2") == 600
    assert tres_mem_per_node_mib("cpu=8,mem=1.50G,node=2,billing=8,gres/gpu=2") == 768
    assert tres_mem_per_node_mib("cpu=2,node=1") is None
    assert tres_mem_per_node_mib("") is None


def test_a_mem_per_cpu_job_is_measured_against_what_it_holds_not_the_per_cpu_figure():
    # squeue's %m printed 150M for `-c 2 --mem-per-cpu=150M`; the job holds 300M on its node
    job = SlurmJob("7", "debug", "w", "u", "RUNNING", "None", 2, 1, "c1", min_memory_mib=150)
    steps = [dataclasses.replace(s, job_id="7") for s in _steps()[0] if s.job_id == "2"]
    assert job_memory(job, steps, NOW, None).request_mib == 150  # the figure alone: 191 %
    held = job_memory(job, steps, NOW, None, held_mib=300)
    assert held.request_mib == 300 and held.mem_per_cpu_mib == 150
    snap = _snap([job], RiskProbe(RiskSettings(), memory=(held,)))
    (f,) = list(memory_near_request(snap, _ctx(snap)))
    assert "MaxRSS 286M of 300M per node (--mem-per-cpu 150M) (95 %)" in f.title, f.title
    roomy = job_memory(job, steps, NOW, None, held_mib=400)  # 200M per CPU: 72 %
    snap = _snap([job], RiskProbe(RiskSettings(), memory=(roomy,)))
    assert list(memory_near_request(snap, _ctx(snap))) == []


class _Squeue:
    """A transport answering the sampler's sstat and ``squeue -O`` as the 22.05 lab printed
    them for an array job of two tasks, ``-a 0-1 -c 2 --mem-per-cpu=150M`` holding ~200 MB
    each: squeue's %i names the tasks 28_0 and 28_1, sstat their own job ids 29 and 28."""

    def __init__(self, alloc: tuple[bytes, bytes, int] | None = None) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.alloc = alloc

    async def run(self, argv, timeout=None):
        from cockpit.transport import CommandResult

        self.calls.append(tuple(argv))
        if argv[0] == "stat":  # each task's stdout, written 10 min ago
            at = int((NOW - timedelta(minutes=10)).timestamp())
            out = "".join(f"8 {at} {p}\n" for p in argv[argv.index("--") + 1 :])
            return CommandResult(tuple(argv), out.encode(), b"", 0)
        if argv[0] == "sstat":
            out = b"29.batch|211848K|c1|211848K|1|c1|00:00:00\n"
            out += b"28.batch|211844K|c2|211844K|1|c2|00:00:00\n"
            return CommandResult(tuple(argv), out, b"", 0)
        spec = argv[argv.index("-O") + 1]
        if "tres-alloc" in spec:
            if self.alloc is not None:
                return CommandResult(tuple(argv), *self.alloc)
            # what 22.05 prints for each field the cockpit may ask
            rows = {"28_0": ("28_0", "29"), "28_1": ("28_1", "28")}
            names = [f.split(":")[0].lower() for f in spec.split(",")]
            lines = []
            for task, raw in rows.values():
                vals = {"jobid": raw, "jobarrayid": task, "tres-alloc": "cpu=2,mem=300M,node=1"}
                lines.append("|".join(vals[n] for n in names))
            return CommandResult(tuple(argv), ("\n".join(lines) + "\n").encode(), b"", 0)
        if "StdOut" in spec:  # as 22.05 printed it for `-o /jobs/train-%A_%a.out`
            names = [f.split(":")[0].lower() for f in spec.split(",")]
            lines = []
            for task, raw in (("28_0", "29"), ("28_1", "28")):
                vals = {"jobid": raw, "jobarrayid": task, "userid": "1000", "groupid": "1000"}
                vals["stdout"] = "/jobs/train-%A_%a.out"
                lines.append("|".join(vals[n] for n in names))
            return CommandResult(tuple(argv), ("\n".join(lines) + "\n").encode(), b"", 0)
        return CommandResult(tuple(argv), b"", b"", 0)


def _fake_src(transport):
    from collections import Counter
    from types import SimpleNamespace

    return SimpleNamespace(transport=transport, command_counts=Counter(), command_timeout=5)


def _array_tasks() -> list[SlurmJob]:
    return [
        SlurmJob(
            f"28_{k}", "debug", "w", "u", "RUNNING", "None", 2, 1, f"c{k + 1}", min_memory_mib=150
        )
        for k in (0, 1)
    ]


def test_an_array_task_is_measured_against_what_it_holds():
    """squeue's JobID and sstat name an array task by its own job id (29), the queue by
    28_0: the task's memory must still be sampled, against the 300M it holds (69 %)."""
    import asyncio

    sampler = RiskSampler()
    tr = _Squeue()
    probe, warnings = asyncio.run(sampler.sample(_fake_src(tr), _array_tasks(), NOW))
    assert warnings == []
    got = {m.job_id: (m.request_mib, m.used_kib) for m in probe.memory}
    assert got == {"28_0": (300, 211848), "28_1": (300, 211844)}
    snap = _snap(_array_tasks(), probe)
    assert list(memory_near_request(snap, _ctx(snap))) == []


def test_a_squeue_that_refuses_tres_alloc_is_said_once_not_every_poll():
    """A squeue that does not know the field (exit 1, its error on stderr): one warning, then
    the jobs keep squeue's MIN_MEMORY as their request without asking every poll."""
    import asyncio

    err = b"squeue: error: Invalid job format specification: tres-alloc\n"
    sampler = RiskSampler()
    tr = _Squeue(alloc=(b"", err, 1))
    src = _fake_src(tr)
    jobs = _array_tasks()
    said = []
    for poll in range(4):
        _, warnings = asyncio.run(sampler.sample(src, jobs, NOW + timedelta(seconds=15 * poll)))
        said += warnings
    assert len(said) == 1 and "Invalid job format specification" in said[0], said
    asked = [c for c in tr.calls if c[0] == "squeue" and "tres-alloc" in c[-1]]
    assert len(asked) == 1, asked


def test_an_array_tasks_stdout_is_found_so_its_silence_is_seen():
    """squeue's JobID names an array task by its own id (29): the task's StdOut pattern must
    still be resolved for 28_0, else its stdout is never looked at."""
    import asyncio

    class _Src:
        def __init__(self, tr):
            from collections import Counter

            self.transport, self.command_counts, self.command_timeout = tr, Counter(), 5
            self.owners: dict = {}

        def note_owner(self, jid, owner):
            self.owners[jid] = owner

        def note_job_paths(self, jid, path):
            pass

    sampler = RiskSampler(RiskSettings(log_silent_s=300))
    tasks = [dataclasses.replace(j, elapsed_s=3600) for j in _array_tasks()]
    probe, warnings = asyncio.run(sampler.sample(_Src(_Squeue()), tasks, NOW))
    assert warnings == []
    got = {o.job_id: o.path for o in probe.outputs}
    assert got == {"28_0": "/jobs/train-28_0.out", "28_1": "/jobs/train-28_1.out"}, got
