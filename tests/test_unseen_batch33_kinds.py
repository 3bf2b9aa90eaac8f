"""Unseen batch 33's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 412, 415, 416 and 419 hold the first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # UCX's transport giving up on an endpoint without its "UCX" prefix, under Open MPI's
        # --timestamp-output --tag-output (openucx/ucx#2789)
        (
            "mpirun.err",
            "Wed Aug  8 14:50:53 2018[1,0]<stdout>: No Errors\n"
            "Wed Aug  8 14:55:53 2018[1,31]<stderr>:[clx-hercules-046:20804:0:20804]    "
            "ud_iface.c:780  Fatal: transport error: Endpoint timeout\n"
            "Wed Aug  8 14:55:53 2018[1,31]<stderr>:==== backtrace ====\n",
            "mpi_network_error",
            "Wed Aug  8 14:55:53 2018[1,31]<stderr>:[clx-hercules-046:20804:0:20804]    "
            "ud_iface.c:780  Fatal: transport error: Endpoint timeout",
        ),
        # UCX's UD endpoint timing out in an OpenSHMEM run (openucx/ucx#5159)
        (
            "oshrun.err",
            "[jazz15:39570:0:39570]       ud_ep.c:248  Fatal: UD endpoint 0x3b9a060: unhandled "
            "timeout error\n"
            "[jazz15:39615:0:39615]       ud_ep.c:248  Fatal: UD endpoint 0x3872590: unhandled "
            "timeout error\n",
            "mpi_network_error",
            "[jazz15:39570:0:39570]       ud_ep.c:248  Fatal: UD endpoint 0x3b9a060: unhandled "
            "timeout error",
        ),
        # an older NCCL's IB warning without the "NCCL" word, in a container (a commenter's
        # line in horovod/horovod#147), before the MPI abort it causes
        (
            "train.log",
            "transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, "
            "len0, vendor err 129\n"
            "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\n",
            "nccl_communication_error",
            "transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, "
            "len0, vendor err 129",
        ),
        # the verbs' status string as an RDMA program logs it (a Seastar RDMA write-up's line)
        (
            "server.log",
            "rdma.cc:851 @processRCCQ]error on send wc: transport retry counter exceeded\n",
            "mpi_network_error",
            "rdma.cc:851 @processRCCQ]error on send wc: transport retry counter exceeded",
        ),
        # pdsh reaching a node whose host key is unknown (HPE Slingshot's cxibwcheck docs):
        # ssh's refusal, not pdsh's exit-255 summary after it
        (
            "cxibwcheck.log",
            "cxi-nid0: Host key verification failed.\n"
            "pdsh@uan: cxi-nid0: ssh exited with exit code 255\n"
            "cxibwcheck.sh: errors in nodelist (see /tmp/cxibwcheck.sh.log.19071) 0 remain\n",
            "mpi_launch_failed",
            "cxi-nid0: Host key verification failed.",
        ),
        # DeepSpeed's hostfile check with no ssh line: the ssh probe's exit status 255 (ssh's
        # own failure) is cited, not read as authentication from its PasswordAuthentication=no
        # option (a cluster competition's report, hpcac/2023-APAC-HPC-AI#1)
        (
            "deepspeed.err",
            "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no "
            "gadi-gpu-v100-0011 hostname' returned non-zero exit status 255.\n"
            "\n"
            "During handling of the above exception, another exception occurred:\n"
            "\n"
            "Traceback (most recent call last):\n"
            '  File "/scratch/p38/bin/deepspeed", line 6, in <module>\n'
            "    main()\n"
            "RuntimeError: Using hostfile at /home/552/dz9214/hostfile but "
            "host=gadi-gpu-v100-0011 was not reachable via ssh. If you are running with a "
            "single node please remove /home/552/dz9214/hostfile or setup passwordless ssh.\n",
            "mpi_launch_failed",
            "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no "
            "gadi-gpu-v100-0011 hostname' returned non-zero exit status 255.",
        ),
        # EIO from a FUSE-mounted drive in a notebook's training data check (a project log's
        # entry: Google Drive mounted in Colab)
        (
            "train.err",
            "Traceback (most recent call last):\n"
            '  File "crop.py", line 41, in <module>\n'
            "    if os.path.exists(path):\n"
            "OSError: [Errno 5] Input/output error\n",
            "shared_fs_unreachable",
            "OSError: [Errno 5] Input/output error",
        ),
        # coreutils' EIO in a Chinese locale on a FUSE mount (a file system's bug write-up)
        (
            "cp.txt",
            "cp: 无法创建普通文件 './1.txt': 输入/输出错误\n",
            "shared_fs_unreachable",
            "cp: 无法创建普通文件 './1.txt': 输入/输出错误",
        ),
    ],
)
def test_second_wording(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"] == headline


def test_info_lines_naming_the_fabric_are_no_error(tmp_path):
    # NCCL's INFO lines about IB (no device, the NICs it uses) and s3fs's info-level
    # "returing EIO" are not failures: a log of only such lines names no fabric or storage fault
    report = _diagnose(
        tmp_path,
        "train.log",
        "gpu1:4242:4242 [0] NCCL INFO NET/IB : No device found.\n"
        "gpu1:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
        "[INF]       curl.cpp:RequestPerform(1823): HTTP response code 400 was returned, "
        "returing EIO.\n",
    )
    causes = {f["root_cause"] for f in report["findings"]}
    assert not causes & {"nccl_communication_error", "mpi_network_error", "shared_fs_unreachable"}
