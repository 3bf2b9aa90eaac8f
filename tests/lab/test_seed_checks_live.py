"""Live: ``--tmp`` against the lab nodes' TmpDisk, and the node topology the check reads,
on the real Slurm lab. Skipped with a reason when the lab (/tmp/slurmlab) is not up.

sbatch refuses ``--tmp`` above every node's TmpDisk at submit ("Temporary disk specification
can not be satisfied"), but accepts it with ``--hold``: released, the job would pend forever.
That held job is what the cockpit must call "never runs"."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cockpit.slurm.parse import parse_scontrol_nodes
from tests.conftest import LabEnv

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def lab_config(lab_env: LabEnv, tmp_path_factory) -> str:
    cfg = tmp_path_factory.mktemp("cfg") / "config.toml"
    cfg.write_text(
        "[clusters.lab]\n"
        'transport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\n'
        f'slurmd_log = "{lab_env.slurmd_log_pattern}"\n'
    )
    return str(cfg)


def test_the_lab_nodes_topology_and_tmpdisk_are_read(lab_env):
    out = lab_env.run("scontrol", "show", "node", "-o").stdout
    nodes = parse_scontrol_nodes(out)[0]
    assert nodes
    for n in nodes:
        assert n.sockets and n.cores_per_socket and n.threads_per_core
        assert n.sockets * n.cores_per_socket * n.threads_per_core == n.cpus_total
        assert n.tmp_disk_mib is not None


def test_a_held_job_asking_more_tmp_than_any_node_is_never_runs(lab_env, lab_config):
    nodes = parse_scontrol_nodes(lab_env.run("scontrol", "show", "node", "-o").stdout)[0]
    most = max(n.tmp_disk_mib or 0 for n in nodes)
    ask = most + 1024  # MiB: one GiB more than the biggest TmpDisk
    jid = lab_env.sbatch(
        "-p", "debug", "--hold", f"--tmp={ask}M", "-J", "cockpit-seed-tmp", "--wrap", "true"
    )
    try:
        res = subprocess.run(
            [sys.executable, "-m", "cockpit", "diagnose", "--config", lab_config, jid]
            + ["--cluster", "lab", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **lab_env.env},
        )
        assert res.returncode in (0, 1), res.stderr
        top = next(f for f in json.loads(res.stdout)["findings"] if f["subject"] == f"job {jid}")
        assert top["root_cause"] == "pending_partition_limit"
        assert top["title"].startswith("never runs: --tmp ")
        assert "TmpDisk" in top["title"] and "--tmp" in top["remedy"]
    finally:
        lab_env.scancel(jid)
