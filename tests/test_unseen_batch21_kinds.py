"""Unseen batch 21's misses, each fixed for its kind: a second wording from another public
report must get the same cause (cases 254, 259-261 hold the first wordings)."""

from __future__ import annotations

import pytest

from cockpit.ingest.bundle import diagnose_bundle


@pytest.mark.parametrize(
    "name,text,label",
    [
        # slurmd's cgroup plugin cannot set up its hierarchy (stackhpc/slurm-k8s-cluster#38)
        (
            "slurmd.log",
            "slurmd: error: Couldn't load specified plugin name for cgroup/v2: Plugin init() "
            "callback failed\nslurmd: error: cannot create cgroup context for cgroup/v2\n"
            "slurmd: error: Unable to initialize cgroup plugin\n"
            "slurmd: error: slurmd initialization failed\n",
            "job_launch_failed",
        ),
        # slurmstepd cannot create the job's memory cgroup (galaxyproject/galaxy#7766)
        (
            "slurm-5.out",
            "slurmstepd: error: xcgroup_instantiate: unable to create cgroup "
            "'/sys/fs/cgroup/memory/slurm/uid_819800' : Cannot allocate memory\n",
            "job_launch_failed",
        ),
        # PyTorch's driver check, one line (RangiLyu/nanodet#216)
        (
            "train.log",
            "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). "
            "Please update your GPU driver by downloading and installing a new version\n",
            "cuda_driver_mismatch",
        ),
        # the same check in torch < 1.5, its message on its own line (rikdz/GraphWriter#6)
        (
            "slurm-9.out",
            'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
            "AssertionError: \nThe NVIDIA driver on your system is too old (found version 6050).\n"
            "Please update your GPU driver by downloading and installing a new\n",
            "cuda_driver_mismatch",
        ),
        # an NFS client whose server stopped answering (linux-surface/linux-surface#1494)
        (
            "dmesg.txt",
            "[32495.562824] nfs: server thinkcentre not responding, timed out\n"
            "[32499.786257] nfs: server thinkcentre not responding, timed out\n",
            "shared_fs_unreachable",
        ),
        # the Lustre client losing its OST (Lustre's own console wording)
        (
            "dmesg.txt",
            "[1042.1] Lustre: scratch-OST0003-osc-ffff8a: Connection to scratch-OST0003 (at "
            "10.1.0.7@o2ib) was lost; in progress operations using this service will wait for "
            "recovery to complete\n",
            "shared_fs_unreachable",
        ),
    ],
)
def test_second_wording_gets_the_cause(tmp_path, name, text, label):
    (tmp_path / name).write_text(text)
    report = diagnose_bundle(str(tmp_path)).to_json()
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"] is not None


def test_driver_check_headline_is_the_message_not_the_empty_assertion(tmp_path):
    (tmp_path / "slurm-9.out").write_text(
        "AssertionError: \nThe NVIDIA driver on your system is too old (found version 6050).\n"
    )
    fe = diagnose_bundle(str(tmp_path)).to_json()["first_error"]
    assert fe["text"].startswith("The NVIDIA driver on your system is too old")
