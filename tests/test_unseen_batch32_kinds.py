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
