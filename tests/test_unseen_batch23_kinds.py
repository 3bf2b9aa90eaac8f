"""Unseen batch 23's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 278, 279, 285 and 287 hold the first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # sacctmgr cannot reach slurmdbd while a cluster is set up, inside Chef's output
        # (aws-samples/aws-parallelcluster-hpc-quickstart#119): the accounting daemon is down,
        # not the nodes' network
        (
            "chef-client.log",
            "---- Begin output of /opt/slurm/bin/sacctmgr show clusters -Pn ----\n"
            "STDOUT: \n"
            "STDERR: sacctmgr: error: slurm_persist_conn_open_without_init: failed to open "
            "persistent connection to host:ip-172-25-7-120:6819: Connection refused\n"
            "sacctmgr: error: Sending PersistInit msg: Connection refused\n"
            "---- End output of /opt/slurm/bin/sacctmgr show clusters -Pn ----\n"
            "Ran /opt/slurm/bin/sacctmgr show clusters -Pn returned 1\n",
            "controller_unreachable",
            "STDERR: sacctmgr: error: slurm_persist_conn_open_without_init: failed to open "
            "persistent connection to host:ip-172-25-7-120:6819: Connection refused",
        ),
        # the same from a workflow manager polling sacct, slurmdbd named by its own host and
        # the daemon's prefix on the next line (BSC-ES/autosubmit#768)
        (
            "autosubmit.log",
            "Job a3xx_19991101_fc16_10_CLEAN is RUNNING\n"
            "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent "
            "connection to slurmdbd.bsc.mn:6819: Connection refused\n"
            "sacct: error: slurmdbd: Sending PersistInit msg: Connection refused\n"
            "sacct: error: Problem talking to the database: Connection refused\n",
            "controller_unreachable",
            "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent "
            "connection to slurmdbd.bsc.mn:6819: Connection refused",
        ),
        # an uncorrectable ECC error reported by the CUDA driver API of another binding
        # (JuliaGPU/CUDAdrv.jl#106): the GPU's memory, never the host's DIMMs
        (
            "test.log",
            "INFO: Testing using device Tesla K80\n"
            "CUDAdrv: Error During Test\n"
            "  CUDA error: uncorrectable ECC error encountered (code #214, "
            "ERROR_ECC_UNCORRECTABLE)\n",
            "gpu_hardware_error",
            "  CUDA error: uncorrectable ECC error encountered (code #214, "
            "ERROR_ECC_UNCORRECTABLE)",
        ),
        # a workflow engine's word for a task pod SIGKILLed at its memory limit while
        # Kubernetes said only "Error" (flyteorg/flyte#2376)
        (
            "flyte.log",
            "[1/1] currentAttempt done. Last Error: USER::Pod failed. No message received from "
            "kubernetes.\n"
            "[f8107735c673549d7acd-n0-0] terminated with exit code (137). Reason [Error]. "
            "Message: \n",
            "oom_killed",
            "[f8107735c673549d7acd-n0-0] terminated with exit code (137). Reason [Error]. "
            "Message: ",
        ),
    ],
)
def test_second_wording_gets_the_cause_and_headline(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"]["text"] == headline


def test_pytorch_pre_1_5_ecc_wording_is_the_gpu_not_the_host(tmp_path):
    """PyTorch < 1.5's "cuda runtime error (39) : uncorrectable ECC error encountered" (case
    285, NVIDIA/semantic-segmentation#33) names a GPU fault; the remedy must not send the
    operator to the host's DIMMs."""
    report = _diagnose(
        tmp_path,
        "train.log",
        "RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
        "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265\n"
        "terminate called without an active exception\n",
    )
    top = report["findings"][0]
    assert top["root_cause"] == "gpu_hardware_error"
    assert "DIMM" not in top["explanation"]


def test_torchrun_summary_above_the_childs_exception_gives_way_to_it(tmp_path):
    """torchrun's ChildFailedError only announces the child's failure; when the child's own
    exception follows it (here quoted, indented, in the "Root Cause" block from the child's
    error file: pytorch/torchtitan#502, under torchrun's fixed summary header), that
    exception is the first red error and the cause is the program's (case 284 holds an
    operator's title quoting the summary above the exception)."""
    report = _diagnose(
        tmp_path,
        "train.log",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-08-05_10:01:43\n"
        "  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : 1 (pid: 46669)\n"
        "  error_file: /tmp/torchelastic_i4d4ivao/none_jzj2c4lc/attempt_0/0/error.json\n"
        "  traceback : Traceback (most recent call last):\n"
        '    File "/ncluster/dushuai/torchtitan/train.py", line 207, in main\n'
        "      tokenizer = create_tokenizer(tokenizer_type, job_config.model.tokenizer_path)\n"
        '    File "/usr/local/lib/python3.10/dist-packages/tiktoken/load.py", line 149, in '
        "<dictcomp>\n"
        "      base64.b64decode(token): int(rank)\n"
        "  ValueError: invalid literal for int() with base 10: b'coding=utf-8'\n",
    )
    assert report["findings"][0]["root_cause"] == "application_error"
    assert report["first_error"]["text"] == (
        "  ValueError: invalid literal for int() with base 10: b'coding=utf-8'"
    )
