"""Unseen batch 22's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 266, 269, 271 and 276 hold the first)."""

from __future__ import annotations

import pytest

from cockpit.ingest.bundle import diagnose_bundle
from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # sbatch's reason code on its own line before the refusal: QOSMinNode as a workflow
        # tool's log quotes it (StormSurgeLive/asgs#552); the reason is the headline
        (
            "asgs.log",
            "[2021-07-08-T12:24:10-0500] ERROR: asgs_main.sh>prep: sbatch: error: QOSMinNode\n"
            "[2021-07-08-T12:24:10-0500] ERROR: asgs_main.sh>prep: sbatch: error: Batch job "
            "submission failed: Job violates accounting/QOS policy (job submit limit, user's "
            "size and/or time limits)\n",
            "submit_rejected_policy",
            "[2021-07-08-T12:24:10-0500] ERROR: asgs_main.sh>prep: sbatch: error: QOSMinNode",
        ),
        # CANN's device sync giving up on a task (107020) in multi-node FSDP on NPUs, the
        # WithTimeout variant of torch_npu >= 6 (Ascend/pytorch#72); the reason line, not the
        # generic "EH9999: Inner Error!" or "PTA call acl api failed" above it
        (
            "train.log",
            "npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:506 NPU "
            "function error: AclrtSynchronizeDeviceWithTimeout, error code is 107020\n"
            "[ERROR] 2025-07-13-21:24:03 (PID:474, Device:2, RankID:2) ERR00100 PTA call acl "
            "api failed.\nEH9999: Inner Error!\n        rtDeviceSynchronizeWithTimeout execute "
            "failed, reason=[task timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc]"
            "[LINE:53]\nEH9999: [PID: 474] 2025-07-13-21:24:03.362.493 wait for compute device "
            "to finish failed, runtime result = 107020.[FUNC:ReportCallError][FILE:log_inner.cpp]"
            "[LINE:161]\n",
            "nccl_communication_error",
            "        rtDeviceSynchronizeWithTimeout execute failed, reason=[task timeout]"
            "[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
        ),
        # Slurm's PMIx plugin cannot reach the other node's slurmstepd in a heterogeneous job
        # (openpmix/openpmix#3098): the wire-up between nodes, not an unknown launch failure
        (
            "slurm-77.out",
            "slurmstepd: error:  mpi/pmix_v2: _tcp_connect: lxbk1177 [0]: pmixp_dconn_tcp.c:139:"
            " Cannot establish the connection\n"
            "slurmstepd: error:  mpi/pmix_v2: pmixp_dconn_connect: lxbk1177 [0]: pmixp_dconn.h:"
            "246: Cannot establish direct connection to lxbk1177 (0)\n",
            "mpi_network_error",
            "slurmstepd: error:  mpi/pmix_v2: _tcp_connect: lxbk1177 [0]: pmixp_dconn_tcp.c:139:"
            " Cannot establish the connection",
        ),
    ],
)
def test_second_wording_gets_the_cause_and_headline(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"]["text"] == headline


def test_nccl_without_verbs_library_is_no_failure(tmp_path):
    """NCCL < 2.8 warns that it found no libibverbs on every healthy run of a host without
    InfiniBand (NVIDIA/nccl v2.4.8 src/misc/ibvwrap.cc:63; 2.29 prints it at INFO): a
    finished run with it is not a failure, and a real NCCL error after it is the headline."""
    healthy = (
        "node01:3384:3384 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n\n"
        "node01:3384:3384 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "node01:3384:3384 [0] NCCL INFO NET/Socket : Using [0]eno1:192.168.50.11<0>\n"
        "NCCL version 2.4.8+cuda10.0\n"
        "Epoch: [0][  0/625]\tTime 12.807 (12.807)\tData  6.147 ( 6.147)\tLoss 6.7861e+00\n"
    )
    report = _diagnose(tmp_path, "train.log", healthy)
    assert report["first_error"] is None
    assert all(f["severity"] != "critical" for f in report["findings"])
    # the same write-up's failing second node (NCCL finds no interface named by
    # NCCL_SOCKET_IFNAME there)
    failing = healthy + (
        "\nubuntu:4775:4775 [0] bootstrap.cc:37 NCCL WARN Bootstrap : no socket interface found\n"
        "ubuntu:4775:4775 [0] NCCL INFO init.cc:128 -> 3\n"
    )
    (tmp_path / "train.log").write_text(failing)
    fe = diagnose_bundle(str(tmp_path)).to_json()["first_error"]
    assert "no socket interface found" in fe["text"]
