"""What the demo site contains: nodes, partitions, users and the failure scenarios.

Every scenario is one check of the Slurm (E-HPC) and ModelArts troubleshooting guides.
:data:`SCENARIOS` maps a scenario id to ``(subject kind, subject id, expected root_cause)``
so tests can assert that the engine finds each one in what the demo serves.
Times are seconds relative to the demo start (negative = history).
"""

from __future__ import annotations

from cockpit.demo.slurm import DemoJob, DemoNode, DemoPartition, NodeChange

# scenario id -> (subject kind, subject id, expected root_cause label)
SCENARIOS: dict[str, tuple[str, str, str]] = {
    "slurm-partition-limit": ("job", "48101", "pending_partition_limit"),
    "slurm-oom": ("job", "48102", "oom_killed"),
    "slurm-timeout": ("job", "48103", "time_limit"),
    "slurm-command-not-found": ("job", "48104", "command_not_found"),
    "slurm-missing-library": ("job", "48105", "missing_shared_library"),
    "slurm-mpi-network": ("job", "48106", "mpi_network_error"),
    "slurm-kill-task-failed": ("node", "cn013", "node_drain_kill_task_failed"),
    "slurm-not-responding": ("node", "cn031", "node_not_responding"),
    "slurm-low-realmemory": ("node", "cn022", "node_drain_low_memory"),
    "slurm-backfill-starvation": ("job", "48120", "backfill_starvation"),
    "slurm-qos-surge": ("job", "48200", "pending_qos_limit"),
    "ma-mount-access-denied": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000001",
        "storage_access_denied",
    ),
    "ma-path-missing-obs-prefix": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000002",
        "storage_path_invalid",
    ),
    "ma-path-trailing-space": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000003",
        "storage_path_invalid",
    ),
    "ma-read-only": ("training_job", "5b1c0a4e-7d21-4f3a-9c11-000000000004", "storage_read_only"),
    "ma-image-pull": ("training_job", "5b1c0a4e-7d21-4f3a-9c11-000000000005", "image_pull_failed"),
    "ma-no-bash": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000006",
        "container_entrypoint_failed",
    ),
    "ma-queued-public": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000007",
        "queued_insufficient_resources",
    ),
    "ma-pool-fragmented": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000008",
        "pool_fragmented",
    ),
    "ma-pool-node-abnormal": ("pool", "pool-7f3a9c21", "pool_node_abnormal"),
    "ma-pull-never-placed": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000015",
        "scheduling_constraint_unsatisfied",
    ),
    "ma-running-log-silent": (
        "training_job",
        "5b1c0a4e-7d21-4f3a-9c11-000000000016",
        "training_log_silent",
    ),
}

# Jobs that keep the demo honest: a finding on them would be a false alarm.
HEALTHY = {"llm-pretrain-70b": "48140"}

USERS: tuple[tuple[str, int, str, str], ...] = (
    # user, uid, account, home project dir
    ("alice", 1001, "chem", "lammps"),
    ("bob", 1002, "physics", "mpi-bench"),
    ("chen", 1003, "bio", "rnaseq"),
    ("dmitri", 1004, "climate", "wrf"),
    ("emma", 1005, "ml", "llm"),
    ("farid", 1006, "ml", "nlp"),
    ("gita", 1007, "bio", "qc"),
    ("hiro", 1008, "physics", "md"),
    ("ines", 1009, "ml", "sweeps"),
    ("jamal", 1010, "chem", "cfd"),
    ("kim", 1011, "climate", "ensemble"),
    ("lena", 1012, "bio", "assembly"),
)
USER_INFO = {u: (uid, acct, proj) for u, uid, acct, proj in USERS}


def _cn(i: int) -> str:
    return f"cn{i:03d}"


def build_nodes() -> list[DemoNode]:
    nodes: list[DemoNode] = []
    for i in range(1, 49):
        name = _cn(i)
        parts = ("cpu", "debug") if i >= 45 else ("cpu",)
        changes: tuple[NodeChange, ...] = ()
        kw: dict = {}
        if name == "cn013":
            changes = (NodeChange(-95 * 60, "DRAIN", "Kill task failed"),)
        elif name == "cn031":
            changes = (NodeChange(-38 * 60, "DOWN", "Not responding"),)
        elif name == "cn022":
            changes = (
                NodeChange(-2 * 3600 + 1, "DRAIN", "Low RealMemory", extra=("INVALID_REG",)),
            )
            kw = {"hw_memory": 245610, "slurmd_start": -2 * 3600, "boot": -2 * 3600 - 140}
        elif name == "cn040":
            changes = (
                NodeChange(8 * 60, "DRAIN", "hw: replace fan FAN2 (ticket 4411)", user="root"),
            )
        nodes.append(DemoNode(name, 64, 257000, parts, changes=changes, **kw))
    for i in range(1, 17):
        nodes.append(DemoNode(f"gpu{i:02d}", 64, 515000, ("gpu",), gpus=8, gpu_type="a100"))
    for i in range(1, 5):
        nodes.append(DemoNode(f"bm{i:02d}", 96, 1546000, ("bigmem",), sockets=4))
    return nodes


def build_partitions() -> list[DemoPartition]:
    return [
        DemoPartition(
            "cpu",
            tuple(_cn(i) for i in range(1, 49)),
            3 * 86400,
            max_cpus_per_node=48,
            default=True,
        ),
        DemoPartition(
            "debug", tuple(_cn(i) for i in range(45, 49)), 30 * 60, max_nodes=2, priority_tier=2
        ),
        DemoPartition("gpu", tuple(f"gpu{i:02d}" for i in range(1, 17)), 2 * 86400),
        DemoPartition("bigmem", tuple(f"bm{i:02d}" for i in range(1, 5)), 7 * 86400),
    ]


def _job(
    job_id: int,
    name: str,
    user: str,
    partition: str,
    cpus: int,
    mem_mib: int,
    limit: int | None,
    submit: int,
    **kw,
) -> DemoJob:
    uid, acct, proj = USER_INFO[user]
    kw.setdefault("work_dir", f"/home/{user}/{proj}")
    kw.setdefault("command", f"/home/{user}/{proj}/{name}.sbatch")
    return DemoJob(job_id, name, user, uid, acct, partition, cpus, mem_mib, limit, submit, **kw)


def _stepd_oom(job: int) -> str:
    """The line slurmstepd appends to an OOM-killed job's output (cgroup v1/v2, 22.05+)."""
    return (
        f"slurmstepd: error: Detected 1 oom-kill event(s) in StepId={job}.batch. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler."
    )


def _script(job_id: int) -> str:
    return f"/var/spool/slurmd/job{job_id}/slurm_script"


def scenario_jobs() -> list[DemoJob]:
    """The Slurm failure scenarios (fixed ids 48101-48299), see :data:`SCENARIOS`."""
    jobs: list[DemoJob] = []
    # 64 CPUs on one node in a partition with MaxCPUsPerNode=48: PartitionConfig forever
    jobs.append(
        _job(
            48101,
            "bert-64cpu",
            "farid",
            "cpu",
            64,
            131072,
            86400,
            -(3 * 3600 + 600),
            pending_reason="PartitionConfig",
            priority=10410,
        )
    )
    # OOM: stdout says only "Killed"; MaxRSS ~ ReqMem (just above the 64 GiB = 67108864 KiB
    # limit it exceeded, the same number in sacct and slurmctld.log); cgroup lines in slurmd.log
    oom_start = -52 * 60
    jobs.append(
        _job(
            48102,
            "align-star-oom",
            "chen",
            "cpu",
            16,
            65536,
            8 * 3600,
            oom_start - 95,
            start=oom_start,
            run_s=34 * 60,
            nodes=("cn007",),
            final_state="OUT_OF_MEMORY",
            exit_code=(0, 125),
            max_rss_kib=67_200_000,
            priority=10122,
            stdout=(
                (
                    1,
                    "STAR --runThreadN 16 --genomeDir /shared/ref/GRCh38_star "
                    "--readFilesIn S12_R1.fq.gz S12_R2.fq.gz",
                ),
                (2, "Nov 29 19:38:12 ..... started STAR run"),
                (3, "Nov 29 19:38:12 ..... loading genome"),
                (690, "Nov 29 19:49:41 ..... started mapping"),
                (
                    34 * 60,
                    f"{_script(48102)}: line 14: 48213 Killed                  "
                    "STAR --runThreadN 16 --genomeDir /shared/ref/GRCh38_star "
                    "--readFilesIn S12_R1.fq.gz S12_R2.fq.gz",
                ),
                # slurmstepd writes its own account into the job's output too (real Slurm):
                # without it the log viewer counted the OOM as a warning ("Killed" alone)
                (34 * 60, _stepd_oom(48102)),
            ),
            slurmd=(
                (
                    "cn007",
                    oom_start + 34 * 60 - 0.05,
                    "[48102.batch] task/cgroup: task_cgroup_memory_check_oom: "
                    "StepId=48102.batch hit memory limit at least once during "
                    "execution. This may or may not result in some failure.",
                ),
                (
                    "cn007",
                    oom_start + 34 * 60 - 0.04,
                    "[48102.batch] error: Detected 1 oom-kill event(s) in "
                    "StepId=48102.batch. Some of your processes may have "
                    "been killed by the cgroup out-of-memory handler.",
                ),
            ),
            # the controller's account of it (what an operator greps slurmctld.log for)
            ctld=(
                (
                    oom_start + 34 * 60 - 0.02,
                    "error: JobId=48102 StepId=48102.batch: Exceeded "
                    "job memory limit (67200000 > 67108864 KiB) on cn007",
                ),
            ),
        )
    )
    # earlier good runs of the same user + job name: sacct history to right-size --mem
    # (no squeue rows)
    for jid, days, rss_gib in ((47311, 9, 57.4), (47688, 4, 60.9)):
        jobs.append(
            _job(
                jid,
                "align-star-oom",
                "chen",
                "cpu",
                16,
                65536,
                8 * 3600,
                -days * 86400 - 120,
                start=-days * 86400,
                run_s=2 * 3600 + 41 * 60 + jid % 600,
                nodes=("cn007",),
                max_rss_kib=int(rss_gib * 1024 * 1024),
                priority=10100,
            )
        )
    # TIMEOUT, with cascading application errors after the time-limit line
    to_start = -(4 * 3600 + 30 * 60)
    wrf = [
        (
            30 + 120 * k,
            f"Timing for main: time 2026-11-28_{(k * 10) // 60:02d}:{(k * 10) % 60:02d}:00 "
            f"on domain   3:  {118 + (k % 7) * 1.37:9.5f} elapsed seconds",
        )
        for k in range(0, 120)
    ]
    end_off = 4 * 3600
    jobs.append(
        _job(
            48103,
            "wrf-d03-forecast",
            "dmitri",
            "cpu",
            48,
            98304,
            4 * 3600,
            to_start - 300,
            start=to_start,
            run_s=10 * 3600,
            nodes=("cn011",),
            steps=("batch", "0"),
            priority=10090,
            srun_name="wrf.exe",
            stdout=(
                *wrf,
                (
                    end_off,
                    "slurmstepd-cn011: error: *** JOB 48103 ON cn011 CANCELLED "
                    f"AT {{ts:{to_start + end_off}}} DUE TO TIME LIMIT ***",
                ),
                (
                    end_off + 0.5,
                    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
                ),
                (end_off + 0.6, "forrtl: error (78): process killed (SIGTERM)"),
                (
                    end_off + 0.7,
                    "MPI_ABORT was invoked on rank 0 in "
                    "communicator MPI_COMM_WORLD with errorcode 1",
                ),
                (end_off + 1, "srun: error: cn011: tasks 0-47: Terminated"),
            ),
        )
    )
    # command not found (exit 127 in one second)
    jobs.append(
        _job(
            48104,
            "qc-fastqc",
            "gita",
            "cpu",
            4,
            8192,
            2 * 3600,
            -41 * 60 - 20,
            start=-41 * 60,
            run_s=1,
            nodes=("cn015",),
            final_state="FAILED",
            exit_code=(127, 0),
            priority=10200,
            stdout=(
                (0.1, "== QC of run 2026-11-28 (24 samples) =="),
                (0.3, f"{_script(48104)}: line 9: fastqc: command not found"),
            ),
        )
    )
    # missing shared library
    jobs.append(
        _job(
            48105,
            "gmx-md-prod",
            "hiro",
            "cpu",
            32,
            32768,
            12 * 3600,
            -27 * 60 - 40,
            start=-27 * 60,
            run_s=2,
            nodes=("cn016",),
            final_state="FAILED",
            exit_code=(127, 0),
            steps=("batch", "0"),
            priority=10150,
            srun_name="gmx_mpi",
            stdout=(
                (0.2, "Running GROMACS 2023.3 on 32 cores"),
                (
                    0.9,
                    "/home/hiro/md/bin/gmx_mpi: error while loading shared libraries: "
                    "libcufft.so.10: cannot open shared object file: No such file or directory",
                ),
                (1.2, "srun: error: cn016: task 0: Exited with exit code 127"),
            ),
        )
    )
    # MPI job: a node's slurmd log shows Connection refused
    mpi_start = -70 * 60
    mpi_nodes = ("cn017", "cn018", "cn019", "cn020")
    jobs.append(
        _job(
            48106,
            "mpi-allreduce-bench",
            "bob",
            "cpu",
            128,
            16384,
            3600,
            mpi_start - 60,
            start=mpi_start,
            run_s=75,
            num_nodes=4,
            nodes=mpi_nodes,
            final_state="FAILED",
            exit_code=(1, 0),
            steps=("batch", "0"),
            priority=10111,
            srun_name="osu_allreduce",
            stdout=(
                (1, "# OSU MPI Allreduce Latency Test v7.3"),
                (
                    33,
                    "srun: error: Task launch for StepId=48106.0 failed "
                    "on node cn018: Communication connection failure",
                ),
                (33.2, "srun: error: Application launch failed: Communication connection failure"),
                (33.3, "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."),
                (74, "srun: error: Timed out waiting for job step to complete"),
            ),
            slurmd=(
                ("cn018", mpi_start + 32.8, "[48106.0] error: connect io: Connection refused"),
                ("cn018", mpi_start + 32.8, "[48106.0] error: IO setup failed: Connection refused"),
                (
                    "cn018",
                    mpi_start + 32.9,
                    "[48106.0] error: job_manager: exiting abnormally: Slurmd could not connect IO",
                ),
            ),
        )
    )
    # node cn013 DRAIN "Kill task failed": four jobs on it died Killed
    for k in range(4):
        jid = 48110 + k
        end = -95 * 60 - 40 + k * 9
        st = -5 * 3600 + k * 60
        jobs.append(
            _job(
                jid,
                f"ensemble-m{k + 1:02d}",
                "kim",
                "cpu",
                12,
                24576,
                8 * 3600,
                st - 120,
                start=st,
                run_s=end - st,
                nodes=("cn013",),
                final_state="FAILED",
                exit_code=(0, 9),
                max_rss_kib=4_912_000 + k * 10_000,
                priority=10050,
                stdout=(
                    *(
                        (
                            60 * m,
                            f"member {k + 1:02d}: model day "
                            f"{m // 10:3d}  dt=60s  cfl=0.{41 + m % 9}",
                        )
                        for m in range(0, end - st, 600)
                    ),
                    (
                        end - st,
                        f"{_script(jid)}: line 21: {90211 + k} "
                        f"Killed                  ./run_ensemble member_{k + 1:02d}",
                    ),
                ),
                slurmd=(
                    (
                        "cn013",
                        end - 0.2,
                        f"[{jid}.batch] error: *** JOB {jid} STEPD TERMINATED ON "
                        f"cn013 AT {{ts:{end}}} DUE TO JOB NOT ENDING WITH SIGNALS ***",
                    ),
                    (
                        "cn013",
                        end - 0.1,
                        f"[{jid}.batch] error: proctrack_p_wait: Unable to destroy "
                        f"container {90211 + k} in cgroup plugin, giving up after 128 sec",
                    ),
                ),
                ctld=(
                    (
                        end + 0.3,
                        f"error: slurmd error running JobId={jid} "
                        "on node(s)=cn013: Kill task failed",
                    ),
                ),
            )
        )
    # node cn031 stops responding; its job ends NODE_FAIL
    jobs.append(
        _job(
            48115,
            "lammps-eq-204",
            "alice",
            "cpu",
            24,
            49152,
            12 * 3600,
            -3 * 3600 - 200,
            start=-3 * 3600,
            run_s=3 * 3600 - 38 * 60,
            nodes=("cn031",),
            final_state="NODE_FAIL",
            priority=10080,
            stdout=tuple(
                (
                    30 * m,
                    f"Step {m * 500:8d}  Temp {300 + (m % 5) * 0.7:7.2f}  E_pair "
                    f"{-48213.5 + m * 0.37:11.2f}  Press {1.01 + (m % 3) * 0.02:6.2f}",
                )
                for m in range(0, (3 * 3600 - 43 * 60) // 30)
            ),
        )
    )
    # backfill starvation: a 512-CPU job waits while small jobs keep starting around it
    jobs.append(
        _job(
            48120,
            "cfd-les-512",
            "jamal",
            "cpu",
            512,
            131072,
            86400,
            -9 * 3600 - 420,
            num_nodes=16,
            pending_reason="Resources",
            priority=10980,
            steps=("batch", "0"),
        )
    )
    # QOS surge: ines submits 48 sweep jobs; 30 wait on QOSMaxJobsPerUserLimit, 18 cancelled
    for k in range(48):
        jid = 48200 + k
        submit = -25 * 60 + k
        if k < 30:
            jobs.append(
                _job(
                    jid,
                    f"hpsweep-{k:03d}",
                    "ines",
                    "gpu",
                    8,
                    65536,
                    4 * 3600,
                    submit,
                    qos="short",
                    gpus=1,
                    pending_reason="QOSMaxJobsPerUserLimit",
                    priority=9800 - k,
                )
            )
        else:
            cancel = -20 * 60 + k
            jobs.append(
                _job(
                    jid,
                    f"hpsweep-{k:03d}",
                    "ines",
                    "gpu",
                    8,
                    65536,
                    4 * 3600,
                    submit,
                    qos="short",
                    gpus=1,
                    cancelled_at=cancel,  # while pending: no node, no batch step, no MaxRSS
                    final_state="CANCELLED",
                    cancelled_by=1009,
                    priority=9800 - k,
                )
            )
    # healthy 64-GPU pretraining with a ~200k-line log (virtualised log viewer)
    jobs.append(
        _job(
            48140,
            "llm-pretrain-70b",
            "emma",
            "gpu",
            512,
            491520,
            2 * 86400,
            -30 * 3600 - 600,
            start=-30 * 3600,
            run_s=None,
            num_nodes=8,
            nodes=tuple(f"gpu{i:02d}" for i in range(1, 9)),
            gpus=64,
            steps=("batch", "0"),
            priority=11000,
            srun_name="python",
            big_log_lines=216_000,
        )
    )
    # evolution: an OOM a few minutes into the demo
    jobs.append(
        _job(
            48130,
            "tokenize-shards",
            "emma",
            "cpu",
            8,
            16384,
            3600,
            60,
            start=120,
            run_s=300,
            nodes=("cn009",),
            final_state="OUT_OF_MEMORY",
            exit_code=(0, 125),
            max_rss_kib=16_770_000,
            priority=10300,
            stdout=(
                (1, "tokenizing 512 shards with 8 workers"),
                *((20 * m, f"shard {m * 6:03d}/512 done") for m in range(1, 15)),
                (
                    300,
                    f"{_script(48130)}: line 7: 51877 "
                    "Killed                  python tokenize.py --workers 8",
                ),
                (300, _stepd_oom(48130)),
            ),
            slurmd=(
                (
                    "cn009",
                    420 - 0.04,
                    "[48130.batch] error: Detected 1 oom-kill event(s) in "
                    "StepId=48130.batch. Some of your processes may have "
                    "been killed by the cgroup out-of-memory handler.",
                ),
            ),
        )
    )
    return jobs


def node_ctld_lines() -> list[tuple[float, str]]:
    """slurmctld.log lines about node state changes (scenario nodes)."""
    return [
        (-95 * 60 + 0.31, "drain_nodes: node cn013 state set to DRAIN"),
        (-43 * 60 + 0.2, "error: Nodes cn031 not responding"),
        (-38 * 60 + 0.38, "Killing JobId=48115 on failed node cn031"),
        (-38 * 60 + 0.38, "error: Nodes cn031 not responding, setting DOWN"),
        (-2 * 3600 + 0.9, "error: Node cn022 has low real_memory size (245610 < 257000)"),
        (-2 * 3600 + 0.9, "error: _slurm_rpc_node_registration node=cn022: Invalid argument"),
        (
            8 * 60 + 0.33,
            "update_node: node cn040 reason set to: hw: replace fan FAN2 (ticket 4411)",
        ),
        (8 * 60 + 0.33, "update_node: node cn040 state set to DRAINING"),
    ]


def ctld_startup(at: int) -> list[tuple[float, str]]:
    """slurmctld's start, with the harmless PMIx noise every real start logs."""
    return [
        (at + 0.385, "slurmctld version 22.05.8 started on cluster demo-hpc"),
        (
            at + 0.387,
            "error:  mpi/pmix_v4: init: (null) [0]: "
            "mpi_pmix.c:195: pmi/pmix: can not load PMIx library",
        ),
        (
            at + 0.387,
            "error: Couldn't load specified plugin name "
            "for mpi/pmix_v4: Plugin init() callback failed",
        ),
        (at + 0.387, "error: MPI: Cannot create context for mpi/pmix_v4"),
        (
            at + 0.390,
            "accounting_storage/slurmdbd: clusteracct_storage_p_register_ctld: "
            "Registering slurmctld at port 6817 with slurmdbd",
        ),
        (
            at + 0.966,
            "select/cons_tres: part_data_create_array: "
            "select/cons_tres: preparing for 4 partitions",
        ),
        (at + 0.966, "Running as primary controller"),
        (at + 2.231, "SchedulerParameters=bf_continue,bf_window=2880,default_queue_depth=200"),
    ]
