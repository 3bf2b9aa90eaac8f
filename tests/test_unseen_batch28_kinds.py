"""Unseen batch 28's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 337, 338, 340, 342 and 345 hold the first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose

_GET_PODS_CRASHLOOP = (
    "NAME                          READY   STATUS             RESTARTS   AGE\n"
    "lm-mpi-launcher-7x2kq         0/1     CrashLoopBackOff   3          4m\n"
    "lm-mpi-worker-0               1/1     Running            0          4m\n"
)


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # Open MPI naming a rank killed by SIGKILL, under a pod list whose launcher row says only
        # CrashLoopBackOff (the CSD3 user notes, found with find_string: "the need of memory is
        # expressed when you have a message like this")
        (
            "launcher.txt",
            _GET_PODS_CRASHLOOP
            + "mpirun noticed that process rank 53 with PID 0 on node cpu-p-435 exited on "
            "signal 9 (Killed).\n",
            "oom_killed",
            "mpirun noticed that process rank 53 with PID 0 on node cpu-p-435 exited on "
            "signal 9 (Killed).",
        ),
        # describe's Reason: Evicted above the Message that names the resource
        # (kubernetes/kubernetes#91600's paste)
        (
            "describe.txt",
            "Annotations:    <none>\n"
            "Status:         Failed\n"
            "Reason:         Evicted\n"
            "Message:        The node was low on resource: ephemeral-storage. Container "
            "ebaogi-bff-app was using 34260Ki, which exceeds its request of 0. \n"
            "IP:             \n",
            "pod_evicted",
            "Message:        The node was low on resource: ephemeral-storage. Container "
            "ebaogi-bff-app was using 34260Ki, which exceeds its request of 0. ",
        ),
        # a container's exit status 132, SIGILL (Firstyear/opensuse-proxy-cache#13: the image
        # needs AVX the host lacks)
        (
            "journal.txt",
            "Jan 05 13:35:21 conmon[11580]: conmon 25f8a89e4231d9c8dae5 <ninfo>: container "
            "11593 exited with status 132\n",
            "application_error",
            "Jan 05 13:35:21 conmon[11580]: conmon 25f8a89e4231d9c8dae5 <ninfo>: container "
            "11593 exited with status 132",
        ),
        # slurmd's umbrella lines after the one saying which plugin is missing
        # (scalableminds/webknossos-libs PR #929's CI log, "slurmd: " prefixed)
        (
            "c1.log",
            "slurmd: error: Couldn't find the specified plugin name for cgroup/v2 looking at all "
            "files\n"
            "slurmd: error: cannot find cgroup plugin for cgroup/v2\n"
            "slurmd: error: cannot create cgroup context for cgroup/v2\n"
            "slurmd: error: Unable to initialize cgroup plugin\n"
            "slurmd: error: slurmd initialization failed\n",
            "job_launch_failed",
            "slurmd: error: Couldn't find the specified plugin name for cgroup/v2 looking at all "
            "files",
        ),
        # the same run in a plain slurmd.log, its timestamps a millisecond apart
        # (nateGeorge/slurm_gpu_ubuntu#7)
        (
            "slurmd.log",
            "[2023-10-16T10:42:01.138] error: Couldn't find the specified plugin name for "
            "cgroup/v2 looking at all files\n"
            "[2023-10-16T10:42:01.139] error: cannot find cgroup plugin for cgroup/v2\n"
            "[2023-10-16T10:42:01.139] error: cannot create cgroup context for cgroup/v2\n"
            "[2023-10-16T10:42:01.139] error: Unable to initialize cgroup plugin\n"
            "[2023-10-16T10:42:01.139] error: slurmd initialization failed\n",
            "job_launch_failed",
            "[2023-10-16T10:42:01.138] error: Couldn't find the specified plugin name for "
            "cgroup/v2 looking at all files",
        ),
        # auth/munge's own clock line, ahead of the decode failure it explains (Slurm's
        # auth_munge.c prints it for a rewound credential; a cluster tool's comment quotes it
        # from slurmctld: "Fix slurmctld: error: Check for out of sync clocks")
        (
            "slurmctld.log",
            "[2024-03-02T09:14:07.512] error: Munge decode failed: Rewound credential\n"
            "[2024-03-02T09:14:07.512] auth/munge: _print_cred: ENCODED: Sat Mar 02 09:20:41 "
            "2024\n"
            "[2024-03-02T09:14:07.512] auth/munge: _print_cred: DECODED: Sat Mar 02 09:14:07 "
            "2024\n"
            "[2024-03-02T09:14:07.512] error: Check for out of sync clocks\n",
            "auth_failed",
            "[2024-03-02T09:14:07.512] error: Munge decode failed: Rewound credential",
        ),
    ],
)
def test_second_wording(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"] == headline


def test_a_time_limit_before_mpiruns_sigkill_stays_the_cause(tmp_path):
    # Slurm's own line says why the rank got SIGKILL: the time limit, not memory
    report = _diagnose(
        tmp_path,
        "slurm-89912.out",
        "slurmstepd: error: *** JOB 89912 ON node042 CANCELLED AT 2023-10-24T03:15:00 DUE TO "
        "TIME LIMIT ***\n"
        "mpirun noticed that process rank 3 with PID 10243 on node node042 exited on signal 9 "
        "(Killed).\n",
    )
    assert report["findings"][0]["root_cause"] == "time_limit"


def test_hydras_sigkill_after_another_ranks_fault_is_not_memory(tmp_path):
    # MPICH's Hydra reports the ranks it killed itself after one failed as KILLED BY SIGNAL: 9
    # (a GPU code's illegal memory access first, found with find_string)
    report = _diagnose(
        tmp_path,
        "run.log",
        "    Error text: an illegal memory access was encountered\n"
        "\n"
        "===================================================================================\n"
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
        "=   RANK 0 PID 5490 RUNNING AT gn59\n"
        "=   KILLED BY SIGNAL: 9 (Killed)\n"
        "===================================================================================\n",
    )
    assert report["findings"][0]["root_cause"] == "application_error"
    assert (
        report["first_error"]["text"] == "    Error text: an illegal memory access was encountered"
    )


def test_a_summarys_run_read_in_pieces_starts_where_the_whole_file_does(monkeypatch, tmp_path):
    # a file read in chunks (the log viewer, scan-log): slurmd's umbrella line is in a later
    # piece than the line saying which plugin is missing
    import cockpit.ingest.logfile as ls

    log = tmp_path / "slurmd.log"
    log.write_bytes(
        b"[2023-10-16T10:42:01.138] error: Couldn't find the specified plugin name for cgroup/v2 "
        b"looking at all files\n"
        b"[2023-10-16T10:42:01.139] error: cannot find cgroup plugin for cgroup/v2\n"
        b"[2023-10-16T10:42:01.139] error: Unable to initialize cgroup plugin\n"
    )
    monkeypatch.setattr(ls, "CHUNK", 64)
    hit = ls.scan_path(str(log))
    assert (hit.line, hit.label) == (1, "job_launch_failed")


def test_an_evicted_counter_in_an_info_line_is_not_a_pod_eviction(tmp_path):
    # a cache's statistics ("Evicted: 0") in a healthy training log: before, a strong
    # pod-evicted finding, critical, for a job that was fine (a breaker's report)
    (tmp_path / "train.log").write_text(
        "INFO step 100 loss 0.3\nINFO cache stats: hits: 120 misses: 3 Evicted: 0\nINFO done\n"
    )
    from cockpit.ingest.bundle import diagnose_bundle

    report = diagnose_bundle(str(tmp_path)).to_json()
    assert all(f["root_cause"] != "pod_evicted" for f in report["findings"]), report["findings"]
