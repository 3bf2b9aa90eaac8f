"""Unseen batch 29's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 362, 364-366, 369, 371 and 372 hold the
first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # Intel MPI's bootstrap failing inside a batch job (Azure/az-hop#906's ping-pong job)
        (
            "job.out",
            "Loading impi version 2021.4.0\n"
            "Running on 2 cores\n"
            "[mpiexec@hb120v3-3] check_exit_codes (../../../../../src/pm/i_hydra/libhydra/demux/"
            "hydra_demux_poll.c:117): unable to run bstrap_proxy on "
            "hb120v3-3.internal.cloudapp.net (pid 12608, exit code 256)\n"
            "[mpiexec@hb120v3-3] poll_for_event (../../../../../src/pm/i_hydra/libhydra/demux/"
            "hydra_demux_poll.c:159): check exit codes error\n",
            "mpi_launch_failed",
            "[mpiexec@hb120v3-3] check_exit_codes (../../../../../src/pm/i_hydra/libhydra/demux/"
            "hydra_demux_poll.c:117): unable to run bstrap_proxy on "
            "hb120v3-3.internal.cloudapp.net (pid 12608, exit code 256)",
        ),
        # MPICH's Hydra that cannot find its proxy binary (pmodels/mpich#1161)
        (
            "run.log",
            "% ./bin/mpiexec -n 1 hostname\n"
            "[mpiexec@buntinas-mac] HYDU_create_process (/tmp/x/mpich2/src/pm/hydra/utils/launch/"
            "launch.c:74): execvp error on file hydra_pmi_proxy (No such file or directory)\n"
            "[mpiexec@buntinas-mac] HYD_pmcd_pmiserv_proxy_init_cb (/tmp/x/mpich2/src/pm/hydra/"
            "pm/pmiserv/pmiserv_cb.c:445): assert (!closed) failed\n",
            "mpi_launch_failed",
            "[mpiexec@buntinas-mac] HYDU_create_process (/tmp/x/mpich2/src/pm/hydra/utils/launch/"
            "launch.c:74): execvp error on file hydra_pmi_proxy (No such file or directory)",
        ),
        # CUDA error 802 from another producer: cupy (cupy/cupy#2845)
        (
            "stderr.txt",
            '  File "cupy/cuda/runtime.pyx", line 201, in cupy.cuda.runtime.check_status\n'
            "cupy.cuda.runtime.CUDARuntimeError: cudaErrorSystemNotReady: system not yet "
            "initialized\n",
            "gpu_not_available",
            "cupy.cuda.runtime.CUDARuntimeError: cudaErrorSystemNotReady: system not yet "
            "initialized",
        ),
        # NCCL's own wording of error 802 in a rank's log (LlamaFactory#8968's comment)
        (
            "train.log",
            "[rank3]: Cuda failure 802 'system not yet initialized'\n",
            "gpu_not_available",
            "[rank3]: Cuda failure 802 'system not yet initialized'",
        ),
        # Fabric Manager refusing the driver in systemctl status (akash-network website PR #632)
        (
            "status.txt",
            "# systemctl status nvidia-fabricmanager\n"
            "Nov 05 13:55:26 node1 systemd[1]: Starting NVIDIA fabric manager service...\n"
            "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver "
            "interface version 550.127.05 doesn't match with driver version 550.120. Please "
            "update with the matching NVIDIA driver package.\n"
            "Nov 05 13:55:26 node1 systemd[1]: nvidia-fabricmanager.service: Control process "
            "exited, code=exited, status=1/FAILURE\n",
            "cuda_driver_mismatch",
            "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver "
            "interface version 550.127.05 doesn't match with driver version 550.120. Please "
            "update with the matching NVIDIA driver package.",
        ),
        # ReqNodeNotAvail quoted bare in a question (ArjunaCluster/ArjunaUsers#67)
        (
            "question.txt",
            "Observed Behavior: (ReqNodeNotAvail, UnavailableNodes:d[001-032],f[001-024])\n",
            "pending_node_unavailable",
            "Observed Behavior: (ReqNodeNotAvail, UnavailableNodes:d[001-032],f[001-024])",
        ),
        # CUDA's ECC string under another wrapper: Paddle's check (PaddlePaddle/Paddle#10239)
        (
            "predict.log",
            "F0426 17:52:54.043815 30811 hl_cuda_device.cc:565] Check failed: cudaSuccess == "
            "cudaStat (0 vs. 39) Cuda Error: uncorrectable ECC error encountered\n"
            "*** Check failure stack trace: ***\n",
            "gpu_hardware_error",
            "F0426 17:52:54.043815 30811 hl_cuda_device.cc:565] Check failed: cudaSuccess == "
            "cudaStat (0 vs. 39) Cuda Error: uncorrectable ECC error encountered",
        ),
    ],
)
def test_a_second_wording_gets_the_same_cause_and_line(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"] == headline


def test_error_802_without_fabric_manager_lines_stays_the_headline(tmp_path):
    # nothing after the 802 line says why: it is the headline itself, not a later line
    report = _diagnose(
        tmp_path,
        "job.err",
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? "
        "Error 802: system not yet initialized\n"
        "srun: error: gpu07: task 0: Exited with exit code 1\n",
    )
    assert report["findings"][0]["root_cause"] == "gpu_not_available"
    assert report["first_error"]["line"] == 1


def test_host_edac_uncorrectable_stays_host_memory(tmp_path):
    # the GPU wording must not take the host's own ECC lines
    report = _diagnose(
        tmp_path,
        "dmesg.txt",
        "[ 5871.331015] EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0\n",
    )
    assert report["findings"][0]["root_cause"] == "host_memory_error"


def test_a_healthy_fabric_manager_start_is_not_an_error(tmp_path):
    report = _diagnose(
        tmp_path,
        "journal.txt",
        "Feb 24 09:28:18 node1 systemd[1]: Starting NVIDIA fabric manager service...\n"
        "Feb 24 09:28:28 node1 nv-fabricmanager[1507]: Successfully configured all the "
        "available NVSwitches to route GPU NVLink traffic.\n"
        "Feb 24 09:28:28 node1 systemd[1]: Started NVIDIA fabric manager service.\n",
    )
    assert report["first_error"] is None
