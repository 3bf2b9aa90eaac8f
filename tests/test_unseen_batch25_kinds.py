"""Unseen batch 25's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 301, 304, 305, 307, 308 and 311 hold the
first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # a device index the process does not have (wdrink/PyDeepFakeDet#1: "the program uses
        # GPUs:1" on a one-GPU host)
        (
            "train.log",
            "RuntimeError: CUDA error: invalid device ordinal\n"
            "CUDA kernel errors might be asynchronously reported at some other API call,so the "
            "stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n",
            "gpu_not_available",
            "RuntimeError: CUDA error: invalid device ordinal",
        ),
        # the step's PMIx plugin cannot resolve the other node (openpmix/openpmix#2786)
        (
            "srun.err",
            "slurmstepd: error:  mpi/pmix_v5: _pmix_p2p_send_core: node4 [0]: pmixp_utils.c:408: "
            "Can't find address for host node5, check slurm.conf\n",
            "job_launch_failed",
            "slurmstepd: error:  mpi/pmix_v5: _pmix_p2p_send_core: node4 [0]: pmixp_utils.c:408: "
            "Can't find address for host node5, check slurm.conf",
        ),
        # a node's slurmd cannot resolve the controller's name (stackhpc/ansible-role-openhpc#157)
        (
            "journal.txt",
            "May 12 09:24:56 testohpc-compute-0 slurmd[31519]: slurmd: error: get_addr_info: "
            "getaddrinfo() failed: Name or service not known\n"
            "May 12 09:24:56 testohpc-compute-0 slurmd[31519]: slurmd: error: slurm_set_addr: "
            'Unable to resolve "testohpc-login-0"\n'
            "May 12 09:24:56 testohpc-compute-0 slurmd[31519]: slurmd: error: Unable to establish "
            "control machine address\n",
            "controller_unreachable",
            "May 12 09:24:56 testohpc-compute-0 slurmd[31519]: slurmd: error: slurm_set_addr: "
            'Unable to resolve "testohpc-login-0"',
        ),
        # a client on a node that cannot resolve the login host named as controller
        # (clustervision/trinity#336)
        (
            "sinfo.txt",
            "[root@c001 /]# sinfo\n"
            'sinfo: error: Unable to resolve "login": Host name lookup failure\n'
            "sinfo: error: Unable to establish control machine address\n"
            "slurm_load_partitions: Resource temporarily unavailable\n",
            "controller_unreachable",
            'sinfo: error: Unable to resolve "login": Host name lookup failure',
        ),
        # the batch script gone from the spool on the node (ArjunaCluster/ArjunaUsers#46, an
        # NFS problem on the GPU nodes)
        (
            "error_89.err",
            "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or "
            "directory\n",
            "job_launch_failed",
            "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or "
            "directory",
        ),
        # a job script's mkdir refused by the file system's permissions (VirtualFlow/VFVS#12)
        (
            "slurm-1955054.out",
            "                    *** Job Output ***\n"
            "mkdir: cannot create directory '/zzumag03': Permission denied\n"
            "Error was trapped\n",
            "storage_access_denied",
            "mkdir: cannot create directory '/zzumag03': Permission denied",
        ),
        # steps waiting inside the allocation, then one refused for memory
        # (eth-cscs/DLA-Future#337): the refusal is the cause, the waiting lines its prelude
        (
            "ci.log",
            "srun: Job 29986033 step creation temporarily disabled, retrying (Requested nodes "
            "are busy)\n"
            "srun: Job 29986033 step creation still disabled, retrying (Requested nodes are "
            "busy)\n"
            "srun: error: Unable to create step for job 29986033: Memory required by task is not "
            "available\n",
            "submit_rejected_unsatisfiable",
            "srun: error: Unable to create step for job 29986033: Memory required by task is not "
            "available",
        ),
    ],
)
def test_second_wording_gets_the_cause_and_headline(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"]["text"] == headline


def test_steps_waiting_alone_are_a_warning_not_silence(tmp_path):
    # only waiting lines (fractal-analytics-platform/fractal-server#2835's first excerpt): the
    # steps were slow to start, which an operator should see, but nothing failed
    report = _diagnose(
        tmp_path,
        "slurm-23547409.err",
        "srun: Job 23547409 step creation temporarily disabled, retrying (Requested nodes are "
        "busy)\n"
        "srun: Job 23547409 step creation still disabled, retrying (Requested nodes are busy)\n"
        "srun: Step created for StepId=23547409.1\n",
    )
    top = report["findings"][0]
    assert top["root_cause"] == "pending_resources"
    assert top["severity"] == "warning"
    assert "--overlap" in top["remedy"]


def test_slurmctld_resolving_a_node_is_no_controller_fault(tmp_path):
    # slurmctld's own "Unable to resolve" names a node it cannot reach
    # (clustervision/trinity#585): never "the controller is unreachable"
    report = _diagnose(
        tmp_path,
        "slurmctld.log",
        '[2016-01-12T15:29:42.039] error: Unable to resolve "c003": Unknown host\n'
        "[2016-01-12T15:29:42.039] error: fwd_tree_thread: can't find address for host c003, "
        "check slurm.conf\n",
    )
    assert report["findings"][0]["root_cause"] != "controller_unreachable"
