"""Unseen batch 32's misses, each fixed for its kind: a second wording from another public
source must get the same cause and headline (cases 398, 399 and 400 hold the first). The
Slurm controller's and nodes' own words: the reason slurmctld sets with a node's INVAL state,
the reason slurmd sets when its spool disk fills (in a site's own sinfo columns or quoted in
notes), and NHC's check naming an NVIDIA Xid."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # a Chinese deployment note (found with find_string, its repository not named by the
        # index): slurmctld refusing the node's registration with the reason it sets; the
        # first line naming the cause is the debug line before it. (The note's sinfo above it
        # shows the node as 'invid', a state the engine does not know: left out, see SEARCH_LOG)
        (
            "notes.md",
            "查看 slurmctld 资源\n"
            "\n"
            "slurmctld: debug:  Node cn1 has low real_memory size (32082 / 32768) < 100.00%\n"
            "slurmctld: error: Setting node cn1 state to INVAL with reason:Low RealMemory "
            "(reported:32082 < 100.00% of configured:32768)\n"
            "slurmctld: drain_nodes: node cn1 state set to DRAIN\n",
            "node_drain_low_memory",
            "slurmctld: debug:  Node cn1 has low real_memory size (32082 / 32768) < 100.00%",
        ),
        # the INVAL line alone: its reason is the node's reason, not an operator's drain
        (
            "slurmctld.log",
            "[2024-05-23T12:49:52.101] error: Setting node gpu07 state to INVAL with "
            "reason:gres/gpu count reported lower than configured (6 < 8)\n"
            "[2024-05-23T12:49:52.101] drain_nodes: node gpu07 state set to DRAIN\n",
            "node_config_mismatch",
            "[2024-05-23T12:49:52.101] error: Setting node gpu07 state to INVAL with "
            "reason:gres/gpu count reported lower than configured (6 < 8)",
        ),
        # an operator's notes quoting the drain reasons a custom sinfo showed (a research
        # project's handoff file, found with find_string)
        (
            "NOTES.md",
            "## INFRA BROKEN\n"
            'Drain reasons (`sinfo -N -o "%N %t %E"`): `-1`,`0-1`,`0-3` = **"SlurmdSpoolDir '
            'is full"** drained by\n'
            "**root since 2026-06-30/07-01 (4+ days)**\n",
            "disk_full",
            'Drain reasons (`sinfo -N -o "%N %t %E"`): `-1`,`0-1`,`0-3` = **"SlurmdSpoolDir '
            'is full"** drained by',
        ),
        # sinfo -N -l's own REASON column (a node-oriented long listing): the reason is read
        # from the table, not only from sinfo -R
        (
            "sinfo.txt",
            "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT "
            "AVAIL_FE REASON\n"
            "cn07           1     batch*     drained   40   2:20:1 191000        0      1 "
            "  (null) SlurmdSpoolDir is full\n"
            "cn08           1     batch*        idle   40   2:20:1 191000        0      1 "
            "  (null) none\n",
            "disk_full",
            "cn07           1     batch*     drained   40   2:20:1 191000        0      1 "
            "  (null) SlurmdSpoolDir is full",
        ),
    ],
)
def test_second_wording(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"], "silent"
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"]["text"].rstrip() == headline


def test_nhc_names_the_xid_not_its_own_summary(tmp_path):
    """NHC's check_xid_errors prints the Xid it found before its summary; the Xid decides."""
    report = _diagnose(
        tmp_path,
        "nhc.log",
        "ERROR:  nhc:  Health check failed:  Check check_xid_errors returned 1\n"
        "Found XID errors: 79\n",
    )
    assert report["findings"][0]["root_cause"] == "gpu_hardware_error"
    assert report["first_error"]["text"] == "Found XID errors: 79"


def test_a_healthy_sinfo_reason_column_is_not_a_fault(tmp_path):
    """A REASON column of 'none' on idle nodes says nothing is wrong."""
    report = _diagnose(
        tmp_path,
        "sinfo.txt",
        "PARTITION      HOSTNAMES  AVAIL STATE   CPUS   REASON\n"
        "hpc            smart-40   up    idle    40     none\n",
    )
    assert all(f["severity"] != "critical" for f in report["findings"])


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # a lab's troubleshooting notes (found with find_string): the registration refused for
        # a node whose slurm.conf values exceed what `slurmd -C` reports (case 404 holds the
        # first: a login node inheriting a DEFAULT line)
        (
            "slurmctld.log",
            "[2022-08-05T17:04:47.741] error: _slurm_rpc_node_registration node=ml0: "
            "Invalid argument\n",
            "node_config_mismatch",
            "[2022-08-05T17:04:47.741] error: _slurm_rpc_node_registration node=ml0: "
            "Invalid argument",
        ),
        # slurmd started on a host slurm.conf does not name (GoogleCloudPlatform/cluster-toolkit
        # #1600, systemctl status behind a prompt; case 405 holds Ansible's wording)
        (
            "status.txt",
            "[admin@hpccameco-controller ~]$ sudo systemctl status slurmd -l\n"
            "● slurmd.service - Slurm node daemon\n"
            "   Active: failed (Result: exit-code) since Wed 2023-08-09 22:11:24 UTC; 3min ago\n"
            "Aug 09 22:11:24 hpccameco-controller systemd[1]: Started Slurm node daemon.\n"
            "Aug 09 22:11:24 hpccameco-controller slurmd[3136]: slurmd: fatal: Unable to "
            "determine this slurmd's NodeName\n"
            "Aug 09 22:11:24 hpccameco-controller systemd[1]: slurmd.service: main process "
            "exited, code=exited, status=1/FAILURE\n",
            "node_config_mismatch",
            "Aug 09 22:11:24 hpccameco-controller slurmd[3136]: slurmd: fatal: Unable to "
            "determine this slurmd's NodeName",
        ),
        # a Korean troubleshooting note (found with find_string): the same refusal in the
        # wording without "the" (case 406 holds the journal's)
        (
            "slurm-troubleshooting.md",
            "## 5. `Duplicated NodeHostName localhost`\n"
            "\n"
            "```\n"
            "error: Duplicated NodeHostName localhost in config file\n"
            "```\n",
            "node_config_mismatch",
            "error: Duplicated NodeHostName localhost in config file",
        ),
        # a configless client finding no controller through DNS SRV (ArjunaCluster/ArjunaUsers
        # #51's comment; case 408 holds slurmd's fetch refused)
        (
            "issue-comment.txt",
            "squeue: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
            "squeue: error: fetch_config: DNS SRV lookup failed\n"
            "squeue: error: _establish_config_source: failed to fetch config\n"
            "squeue: fatal: Could not establish a configuration source\n",
            "controller_unreachable",
            "squeue: error: fetch_config: DNS SRV lookup failed",
        ),
        # a pending reason in a Chinese experiment log, in full-width parentheses and backticks
        # (found with find_string; case 403 holds the prose form 'holds with reason …')
        (
            "exp219.md",
            "- dual projection 的 16 个配置都还在排队（`AssocGrpCPUMinutesLimit`），等这批 job "
            "出 log 后，可以在本文件补全第四部分。\n",
            "pending_qos_limit",
            "- dual projection 的 16 个配置都还在排队（`AssocGrpCPUMinutesLimit`），等这批 job "
            "出 log 后，可以在本文件补全第四部分。",
        ),
        # the same family after "reason:" in an operator's note
        (
            "notes.txt",
            "job 4411 still PD, reason: QOSMaxCpuPerUserLimit since this morning\n",
            "pending_qos_limit",
            "job 4411 still PD, reason: QOSMaxCpuPerUserLimit since this morning",
        ),
    ],
)
def test_second_wording_of_the_second_half(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"], "silent"
    assert report["findings"][0]["root_cause"] == label, report["findings"][0]["title"]
    assert report["first_error"]["text"].rstrip() == headline


def test_a_step_cancelled_for_a_task_failure_is_the_program_not_success(tmp_path):
    """sacct saying COMPLETED does not hide the step's cancellation for a task's failure."""
    report = _diagnose(
        tmp_path,
        "job.log",
        "srun: error: nid001234: task 3: Exited with exit code 1\n"
        "[2026-01-02T10:00:00.000] error: *** STEP 77.0 ON nid001234 CANCELLED AT "
        "2026-01-02T10:00:00 DUE TO TASK FAILURE ***\n",
    )
    assert report["findings"][0]["root_cause"] == "application_error"
    assert report["findings"][0]["severity"] != "info"
