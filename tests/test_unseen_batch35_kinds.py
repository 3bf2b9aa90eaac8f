"""Unseen batch 35's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 433, 437, 438 and 439 hold the first)."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # the scheduler's capacity refusal in lower case, inside prose (NVIDIA/k8s-device-plugin#71)
        (
            "issue.txt",
            "I have configured a k8s cluster by following the various recipes.\n"
            "I am struggling with scheduling any Pod using the GPU with the message insufficient "
            "nvidia.com/gpu.\n",
            "queued_insufficient_resources",
            "I am struggling with scheduling any Pod using the GPU with the message insufficient "
            "nvidia.com/gpu.",
        ),
        # another scheduler's words for the same refusal: NVIDIA's KAI scheduler on AKS
        # (kai-scheduler/KAI-Scheduler#39, Markdown bold as pasted)
        (
            "issue.txt",
            "**Warning  Unschedulable  kai-scheduler  No nodes with enough resources were found: "
            "2 node(s) didn't have enough resources: GPUs.**\n",
            "queued_insufficient_resources",
            "**Warning  Unschedulable  kai-scheduler  No nodes with enough resources were found: "
            "2 node(s) didn't have enough resources: GPUs.**",
        ),
        # slurmd refusing the controller's ping from another uid: the slurm user's uid differs
        # between hosts (a public Thai write-up of `slurmd -Dvvv`: uid 4001 on the controller,
        # 998 on the compute node)
        (
            "slurmd.txt",
            "slurmd: error: Security violation, ping RPC from uid 4001\n"
            "slurmd: error: Do you have SlurmUser configured as uid 4001?\n",
            "auth_failed",
            "slurmd: error: Security violation, ping RPC from uid 4001",
        ),
        # Paddle's launcher waiting for the other machine's trainers (PaddlePaddle/PLSC#115,
        # two 4-GPU servers), before any training line
        (
            "train.log",
            "server not ready, wait 3 sec to retry...\n"
            "not ready endpoints:['10.10.11.51:6070', '10.10.11.51:6071', '10.10.11.51:6072', "
            "'10.10.11.51:6073']\n"
            "server not ready, wait 3 sec to retry...\n",
            "mpi_network_error",
            "server not ready, wait 3 sec to retry...",
        ),
    ],
)
def test_a_second_wording_of_each_kind(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    top = report["findings"][0]
    assert top["root_cause"] == label, top["title"]
    assert top["evidence"][-1]["text"].strip() == headline.strip()


def test_kubernetes_capacity_words_do_not_name_a_healthy_node():
    # a node's own conditions say "sufficient" (KubeletHasSufficientMemory): no refusal
    text = (
        "  MemoryPressure   False   KubeletHasSufficientMemory   kubelet has sufficient memory "
        "available\n"
        "  PIDPressure      False   KubeletHasSufficientPID      kubelet has sufficient PID "
        "available\n"
    )
    import re

    from cockpit.diagnosis.k8s_reasons import REASONS

    for r in REASONS:
        if r.name.startswith("k8s_insufficient"):
            assert not re.search(r.regex, text), r.name
