"""The embedded demo site: deterministic, realistic, answers exactly the Slurm commands
and ModelArts calls the real sources make, and every scenario is diagnosable."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from cockpit.demo.scenarios import SCENARIOS
from cockpit.demo.site import (
    DEMO_START,
    DemoModelArtsApi,
    DemoSite,
    DemoTransport,
    demo_sources,
)
from cockpit.model import Subject
from cockpit.slurm import commands as sc
from cockpit.transport import RemoteFileError

ALL_COMMANDS = (
    sc.SQUEUE_ARGV,
    sc.NODES_ARGV,
    sc.PARTITIONS_ARGV,
    sc.sacct_argv(["48102", "48103", "48106", "48140", "48200"]),
    sc.sacct_history_argv("kim", "ensemble-m01"),
    sc.scontrol_job_argv("48102"),
    sc.scontrol_job_argv("48101"),
    sc.df_argv(["/home", "/scratch"]),
    sc.df_argv(["/home"], inodes=True),
)


def frozen(offset_s: int = 0):
    at = DEMO_START + timedelta(seconds=offset_s)
    return lambda: at


def run(coro):
    return asyncio.run(coro)


async def _outputs(site: DemoSite) -> list[bytes]:
    tr = DemoTransport(site)
    out = []
    for argv in ALL_COMMANDS:
        r = await tr.run(argv)
        assert r.exit_status == 0, (argv, r.stderr)
        out.append(r.stdout)
    api = DemoModelArtsApi(site)
    out.append(repr(api.list_training_jobs(0, 50)).encode())
    out.append(repr(api.list_pool_nodes("pool-7f3a9c21")).encode())
    return out


def test_same_seed_and_time_give_identical_bytes_for_every_command():
    a = run(_outputs(DemoSite(7, frozen(90))))
    b = run(_outputs(DemoSite(7, frozen(90))))
    assert a == b
    assert all(a[:6])  # nothing empty among the Slurm answers


def test_the_site_evolves_with_the_clock():
    early = run(_outputs(DemoSite(7, frozen(0))))
    late = run(_outputs(DemoSite(7, frozen(15 * 60))))
    assert early[0] != late[0]  # squeue changed

    async def states(offset: int) -> tuple[dict, dict, dict]:
        slurm, ma = demo_sources(7, clock=frozen(offset))
        snap, masnap = await slurm.poll(), await ma.poll()
        return (
            {j.job_id: j.state for j in snap.jobs},
            {n.name: n for n in snap.nodes},
            {t.name: t.phase for t in masnap.training_jobs},
        )

    jobs0, nodes0, ma0 = run(states(0))
    jobs1, nodes1, ma1 = run(states(15 * 60))
    # an OOM happens a few minutes in, a node drains at +8 min, a queued training job starts
    assert "48130" not in jobs0 and jobs1["48130"] == "OUT_OF_MEMORY"
    assert not nodes0["cn040"].is_drain and nodes1["cn040"].is_drain
    assert ma0["vit-small-queued"] == "Pending" and ma1["vit-small-queued"] == "Running"
    started = [
        j for j, st in jobs1.items() if st == "RUNNING" and jobs0.get(j) in (None, "PENDING")
    ]
    finished = [j for j, st in jobs1.items() if st == "COMPLETED" and jobs0.get(j) == "RUNNING"]
    assert started and finished


def test_real_parsers_read_a_realistic_site_without_warnings():
    async def go():
        slurm, ma = demo_sources(7, clock=frozen(0))
        return await slurm.poll(), await ma.poll()

    snap, masnap = run(go())
    assert snap.ok and not snap.warnings, (snap.error, snap.warnings[:3])
    assert masnap.ok and not masnap.warnings, (masnap.error, masnap.warnings[:3])
    assert len(snap.jobs) >= 300 and len(snap.nodes) >= 40 and len(snap.partitions) >= 3
    assert len({j.user for j in snap.jobs}) >= 10
    waiting = {(j.partition, j.reason) for j in snap.jobs if j.state == "PENDING"}
    assert {r for _, r in waiting} >= {
        "Resources",
        "Priority",
        "PartitionConfig",
        "QOSMaxJobsPerUserLimit",
    }
    running_parts = {j.partition for j in snap.jobs if j.state == "RUNNING"}
    assert running_parts >= {"cpu", "gpu", "bigmem"}
    nodes = {n.name: n for n in snap.nodes}
    assert nodes["cn013"].reason == "Kill task failed" and nodes["cn013"].is_drain
    assert nodes["cn031"].state_label == "DOWN*" and nodes["cn031"].reason == "Not responding"
    assert nodes["cn022"].reason == "Low RealMemory"
    cpu = next(p for p in snap.partitions if p.name == "cpu")
    assert cpu.max_cpus_per_node == 48
    phases = {t.name: (t.phase, t.console_phase) for t in masnap.training_jobs}
    assert phases["detr-coco-obs"] == ("Pending", "Initializing")
    assert phases["bert-base-zh"][0] == "Running" and phases["whisper-ft-done"][0] == "Completed"
    pool = next(p for p in masnap.pools if p.pool_id == "pool-7f3a9c21")
    assert [n.phase for n in pool.nodes].count("Abnormal") == 1


def test_text_is_what_slurm_22_05_prints():
    site = DemoSite(7, frozen(0))
    tr = DemoTransport(site)
    node = run(tr.run(("scontrol", "show", "node", "-o", "cn013"))).stdout.decode()
    assert "State=IDLE+DRAIN " in node and node.rstrip().endswith(
        "Reason=Kill task failed [slurm@2026-11-29T18:55:00]"
    )
    down = run(tr.run(("scontrol", "show", "node", "-o", "cn031"))).stdout.decode()
    assert "State=DOWN+NOT_RESPONDING " in down
    acct = run(tr.run(sc.sacct_argv(["48102"]))).stdout.decode().splitlines()
    assert acct[0].split(sc.SEP)[4:8] == ["OUT_OF_MEMORY", "0:125", "64G", ""]
    assert (
        acct[1].split(sc.SEP)[:2] == ["48102.batch", "batch"]
        and acct[1].split(sc.SEP)[7] == "67200000K"
    )
    job = run(tr.run(sc.scontrol_job_argv("48101"))).stdout.decode()
    assert (
        "JobState=PENDING Reason=PartitionConfig" in job
        and "NumCPUs=64" in job
        and "StartTime=Unknown" in job
    )
    q = run(tr.run(("squeue", "-h", "-j", "48103", "-o", "%.8i|%T|%M|%l|%r"))).stdout.decode()
    assert q == "   48103|TIMEOUT|4:00:00|4:00:00|TimeLimit\n"


def test_unknown_commands_fail_like_a_shell():
    tr = DemoTransport(DemoSite(7, frozen(0)))
    r = run(tr.run(("sinfo", "-R")))
    assert r.exit_status == 127 and b"command not found" in r.stderr
    r = run(tr.run(sc.scontrol_job_argv("999999")))
    assert r.exit_status == 1 and b"Invalid job id" in r.stderr


def test_logs_are_served_by_ranges_consistently_with_stat():
    site = DemoSite(7, frozen(0))
    tr = DemoTransport(site)
    for path in (
        "/var/log/slurm/slurmctld.log",
        "/var/log/slurm/slurmd-cn018.log",
        "/home/chen/rnaseq/slurm-48102.out",
    ):
        st = run(tr.stat(path))
        whole = run(tr.read_range(path, 0, st.size + 100))
        assert len(whole) == st.size > 0
        chunks = b"".join(run(tr.read_range(path, off, 777)) for off in range(0, st.size, 777))
        assert chunks == whole
    ctld = run(tr.read_range("/var/log/slurm/slurmctld.log", 0, 1 << 20))
    assert b"can not load PMIx library" in ctld  # harmless noise is there too
    assert b"_job_complete: JobId=48102 OOM failure" in ctld
    assert b"Killed" in run(tr.read_range("/home/chen/rnaseq/slurm-48102.out", 0, 4096))
    with pytest.raises(RemoteFileError):
        run(tr.stat("/home/farid/nlp/slurm-48101.out"))  # pending: no output yet


def test_one_log_is_huge_and_read_lazily_by_range():
    site = DemoSite(7, frozen(0))
    tr = DemoTransport(site)
    path = "/home/emma/llm/slurm-48140.out"
    st = run(tr.stat(path))
    assert st.size > 20 << 20
    tail = run(tr.read_range(path, st.size - 4096, 4096))
    mid = run(tr.read_range(path, st.size // 2, 10_000))
    assert len(tail) == 4096 and len(mid) == 10_000
    assert run(tr.read_range(path, st.size // 2 + 100, 50)) == mid[100:150]
    lines = tail.split(b"\n")
    assert lines[-1] == b"" and b"step 00215999" in lines[-2] and b"\x1b[32m" in lines[-2]
    # it grows while the job runs: two lines per second
    later = run(DemoTransport(DemoSite(7, frozen(10))).stat(path))
    assert later.size - st.size == 20 * (len(lines[-2]) + 1)


def test_modelarts_api_answers_every_call():
    site = DemoSite(7, frozen(0))
    api = DemoModelArtsApi(site)
    jobs = api.list_training_jobs(0, 50)
    assert jobs["total"] == len(jobs["items"]) >= 10
    jid = SCENARIOS["ma-mount-access-denied"][1]
    assert api.show_training_job(jid)["status"]["phase"] == "Pending"
    events = api.list_events(jid)["events"]
    assert any("AccessDenied" in e["message"] and e["level"] == "Warning" for e in events)
    stages = api.list_stages(jid)["running_records"][0]["stages"]
    assert stages[-1]["name"] == "preparing" and stages[-1]["end_time"] == ""
    assert (
        "Read-only file system"
        in api.logs_preview(SCENARIOS["ma-read-only"][1], "worker-0")["content"]
    )
    assert api.flavor_max_available("modelarts.p3.large.public", "") == {
        "cpu_core_num": 0,
        "mem_size": 0,
    }
    from cockpit.modelarts.api import ModelArtsApiError

    with pytest.raises(ModelArtsApiError) as exc:
        api.show_training_job("nope")
    assert exc.value.kind == "not_found"


def _found(payload: dict, kind: str, sid: str, label: str) -> bool:
    """The subject has ``label`` in one incident: the incident's own cause names it (as its
    head or a member), or one of its findings is about that subject with that cause. A label
    of one finding and a subject of another do not make a match."""

    def this(s: dict) -> bool:
        return s.get("kind") == kind and s.get("id") == sid

    for inc in payload.get("incidents", []):
        members = [inc.get("subject", {}), *inc.get("affected", [])]
        if inc.get("root_cause") == label and any(this(s) for s in members):
            return True
        for f in inc.get("findings", []):
            if f.get("root_cause") == label and this(f.get("subject", {})):
                return True
    return False


def _cli_json(argv: list[str]) -> dict:
    import contextlib
    import io
    import json

    from cockpit.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        # the demo site has critical incidents open: `incidents` and the `diagnose` overview
        # exit 1 on them; a snapshot only lists
        assert main(argv) == (0 if argv[0] == "snapshot" else 1)
    return json.loads(buf.getvalue())


@pytest.fixture(scope="module")
def demo_incidents() -> dict:
    return _cli_json(["incidents", "--demo", "--json"])


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_is_an_incident_with_its_label(scenario, demo_incidents):
    kind, sid, label = SCENARIOS[scenario]
    assert _found(demo_incidents, kind, sid, label), f"{scenario}: no {label} for {kind} {sid}"


def test_diagnose_demo_lists_every_scenario_label():
    payload = _cli_json(["diagnose", "--demo", "--json"])
    labels = {f["root_cause"] for f in payload["findings"]}
    missing = {label for _, _, label in SCENARIOS.values()} - labels
    assert not missing, f"labels missing from cockpit diagnose --demo: {sorted(missing)}"


def test_artifacts_carry_the_evidence_lines():
    async def go():
        slurm, _ = demo_sources(7, clock=frozen(0))
        snap = await slurm.poll()
        out = {}
        for jid in ("48102", "48104", "48105", "48103"):
            arts = await slurm.artifacts(Subject("job", slurm.name, jid), snap)
            out[jid] = b"".join(log.data for log in arts.logs)
        return out

    logs = run(go())
    assert b"oom-kill event" in logs["48102"]
    assert b"fastqc: command not found" in logs["48104"]
    assert b"error while loading shared libraries" in logs["48105"]
    assert b"DUE TO TIME LIMIT" in logs["48103"]


def test_oom_job_usage_exceeds_its_limit_in_sacct_and_slurmctld_log():
    import re

    tr = DemoTransport(DemoSite(7, frozen(0)))
    rows = [
        r.split(sc.SEP) for r in run(tr.run(sc.sacct_argv(["48102"]))).stdout.decode().splitlines()
    ]
    req_kib = 64 * 1024 * 1024  # ReqMem 64G
    rss_kib = int(rows[1][7].rstrip("K"))
    ctld = run(tr.read_range("/var/log/slurm/slurmctld.log", 0, 1 << 22)).decode()
    used, limit = map(
        int,
        re.search(r"JobId=48102 .*Exceeded job memory limit \((\d+) > (\d+) KiB\)", ctld).groups(),
    )
    assert (
        used > limit == req_kib and used == rss_kib
    )  # the usage exceeds the limit, one number everywhere
    assert rss_kib / req_kib < 1.01  # MaxRSS ~ ReqMem still holds


@pytest.mark.parametrize(
    "argv",
    [
        (["snapshot", "--demo", "--cluster", "nope"], "known: demo-hpc)"),
        (["incidents", "--demo", "--modelarts", "nope", "--json"], "known: demo-modelarts)"),
        (["diagnose", "--demo", "--cluster", "nope", "48102"], "known: demo-hpc)"),
    ],
)
def test_demo_unknown_source_name_is_a_user_error_listing_the_known(argv, capsys):
    """The names offered are of the flag's kind: a ModelArts project is no cluster to pick."""
    from cockpit.cli import main

    argv, known = argv
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'nope'" in err and known in err and "Traceback" not in err


def test_demo_cluster_selects_one_demo_source():
    doc = _cli_json(["snapshot", "--demo", "--cluster", "demo-hpc", "--json"])
    assert [s["source"] for s in doc] == ["demo-hpc"]


def test_demo_gpt2_v2_says_pip_cannot_reach_the_mirror(capsys):
    from cockpit.cli import main

    assert main(["diagnose", "--demo", "--training-job", "gpt2-zh-pretrain-v2", "--json"]) == 1
    import json

    top = json.loads(capsys.readouterr().out)["findings"][0]
    assert top["root_cause"] == "dependency_install_failed"
    assert "pip cannot reach repo.huaweicloud.com (ConnectTimeoutError)" in top["title"]
    assert "mirror" in top["remedy"] and "image" in top["remedy"]


def test_diagnose_demo_overview_is_stamped_with_the_demo_clock(capsys):
    from cockpit.cli import main
    from cockpit.demo.site import DEMO_START

    assert main(["diagnose", "--demo"]) == 1  # critical incidents open, as `incidents` exits
    head = capsys.readouterr().out.splitlines()[0]
    assert f"at {DEMO_START:%Y-%m-%d %H:%M}" in head  # not the wall clock
