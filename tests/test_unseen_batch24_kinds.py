"""Unseen batch 24's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 290, 291, 292 and 298 hold the first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # sbatch refuses a script without a #! line, as a workflow tool quotes it
        # (glotzerlab/signac-flow#517): nothing is queued until the script is fixed
        (
            "submit.err",
            "sbatch: error: This does not look like a batch script.  The first\n"
            "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
            "sbatch: error: For instance: #!/bin/sh\n",
            "submit_rejected_unsatisfiable",
            "sbatch: error: This does not look like a batch script.  The first",
        ),
        # PyTorch's NCCL summary names only the error class; NCCL's own message under
        # "Last error:" is the cause: here a socket connect on the wrong interface
        # (hkproj/pytorch-transformer-distributed#1, solved with NCCL_SOCKET_IFNAME)
        (
            "train.log",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for "
            "details), NCCL version 2.18.6\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
            "or device error. \n"
            "Last error:\n"
            "socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host\n"
            "[2024-03-18 17:38:50,208] torch.distributed.elastic.multiprocessing.api: [ERROR] "
            "failed\n",
            "nccl_communication_error",
            "socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host",
        ),
        # the same cause as case 291 in NCCL's own WARN line under Horovod's mpirun
        # (horovod/horovod#3929): two ranks on one GPU
        (
            "horovod.log",
            "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU "
            "detected : rank 2 and rank 0 both on CUDA device 1000\n"
            "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] NCCL INFO init.cc:867 -> 5\n",
            "nccl_communication_error",
            "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU "
            "detected : rank 2 and rank 0 both on CUDA device 1000",
        ),
        # Open MPI started from a notebook in a JupyterHub container without ssh
        # (nds-org/jupyter-et#5): the launcher cannot start its daemon
        (
            "notebook.log",
            "!mpirun -n 2 whoami\n"
            "--------------------------------------------------------------------------\n"
            'The value of the MCA parameter "plm_rsh_agent" was set to a path\n'
            "that could not be found:\n"
            "\n"
            "  plm_rsh_agent: ssh : rsh\n"
            "\n"
            "Please either unset the parameter, or check that the path is correct\n"
            "--------------------------------------------------------------------------\n",
            "mpi_launch_failed",
            'The value of the MCA parameter "plm_rsh_agent" was set to a path',
        ),
        # the same with rsh only, then mpiexec crashing (open-mpi/ompi#7330, an OpenHPC build)
        (
            "build.log",
            "[   91s] + mpiexec --oversubscribe -n 1 printenv\n"
            "[   91s] ----------------------------------------------------------------------\n"
            '[   91s] The value of the MCA parameter "plm_rsh_agent" was set to a path\n'
            "[   91s] that could not be found:\n"
            "[   91s] \n"
            "[   91s]   plm_rsh_agent: rsh\n"
            "[   91s] \n"
            "[   91s] Please either unset the parameter, or check that the path is correct\n"
            "[   91s] ----------------------------------------------------------------------\n"
            "[   91s] [ohpc1:04221] [[INVALID],INVALID] FORCE-TERMINATE AT Not found:-13 - error "
            "plm_rsh_component.c(327)\n"
            "[   91s] [ohpc1:04221] *** Process received signal ***\n"
            "[   91s] [ohpc1:04221] Signal: Segmentation fault (11)\n",
            "mpi_launch_failed",
            '[   91s] The value of the MCA parameter "plm_rsh_agent" was set to a path',
        ),
        # a rank's request to torchrun's store gives up while the master is still busy
        # (hiyouga/LlamaFactory#5587, Chinese title: two nodes that ping each other)
        (
            "train.log",
            "多机多卡微调卡住不动，两台机器可以ping通\n"
            "W0930 13:46:40.693000 140480229872320 torch/distributed/run.py:779] "
            "*****************************************\n"
            "torch.distributed.DistStoreError: Socket Timeout\n",
            "mpi_network_error",
            "torch.distributed.DistStoreError: Socket Timeout",
        ),
    ],
)
def test_second_wording_gets_the_cause_and_headline(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"]["text"] == headline


def test_nccl_summary_with_empty_last_error_stays_the_headline(tmp_path):
    # PyTorch 2.7's async form with nothing under "Last error:" (pytorch/pytorch#149984):
    # the C++ frames after it are no NCCL message, the summary is the red line
    report = _diagnose(
        tmp_path,
        "train.log",
        "Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=1000000) raised the following async exception: NCCL error: unhandled "
        "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
        "or device error. \n"
        "Last error:\n"
        "\n"
        "Exception raised from checkForNCCLErrorsInternal at /pytorch/torch/csrc/distributed/"
        "c10d/ProcessGroupNCCL.cpp:2501 (most recent call first):\n",
    )
    assert report["findings"][0]["root_cause"] == "nccl_communication_error"
    assert report["first_error"]["text"].startswith("Collective WorkNCCL(SeqNum=2")
