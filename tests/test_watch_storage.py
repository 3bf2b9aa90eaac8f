from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.diagnosis.rules.storage import storage_findings
from cockpit.errors import ParseError
from cockpit.slurm.storage import FsUsage, collect_storage, parse_df
from cockpit.transport import CommandResult
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.transitions import storage_alerts

FIX = Path(__file__).parent / "fixtures" / "df"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

# A cluster-like capture: NFS home nearly full, Lustre scratch with inodes exhausted, a mount
# with a space.
CLUSTER_P = """Filesystem                 1024-blocks       Used  Available Capacity Mounted on
nfs01:/export/home          1048576000  912680960  135895040      88% /home
10.0.0.5@tcp:/scratch      53687091200 8589934592 45097156608      17% /scratch
/dev/mapper/apps              104857600   10485760   94371840      11% /opt/my apps
"""
CLUSTER_PI = """Filesystem                    Inodes      IUsed     IFree IUse% Mounted on
nfs01:/export/home          65536000    1200000  64336000    2% /home
10.0.0.5@tcp:/scratch      100000000   99000000   1000000   99% /scratch
/dev/mapper/apps                   0          0         0     - /opt/my apps
"""


def test_parse_real_capture_from_this_machine():
    usages = parse_df(
        (FIX / "df_P.txt").read_text(), ["/", "/tmp"], (FIX / "df_Pi.txt").read_text()
    )
    assert [u.path for u in usages] == ["/", "/tmp"]
    u = usages[0]
    assert u.mount == "/" and u.filesystem == "/dev/vda"
    assert (u.size_mib, u.used_mib, u.avail_mib) == (
        264212084 // 1024,
        23123060 // 1024,
        83267852 // 1024,
    )
    assert u.use_pct == 22.0 and u.inodes_pct == 3.0 and u.inodes_total == 16777216


def test_parse_cluster_mounts_with_inodes_and_spaces():
    usages = parse_df(CLUSTER_P, ["/home", "/scratch", "/opt/my apps"], CLUSTER_PI)
    assert [(u.mount, u.use_pct, u.inodes_pct) for u in usages] == [
        ("/home", 88.0, 2.0),
        ("/scratch", 17.0, 99.0),
        ("/opt/my apps", 11.0, None),
    ]
    assert usages[0].size_mib == 1024000 and usages[1].filesystem == "10.0.0.5@tcp:/scratch"


def test_512_byte_blocks_posixly_correct():
    text = (
        "Filesystem 512-blocks Used Available Capacity Mounted on\n"
        "/dev/sda1 2097152 1048576 1048576 50% /data\n"
    )
    (u,) = parse_df(text)
    assert (u.size_mib, u.used_mib, u.use_pct, u.inodes_pct) == (1024, 512, 50.0, None)


def test_not_df_output_is_a_parse_error():
    with pytest.raises(ParseError, match="df -P"):
        parse_df("sh: df: command not found\n")
    with pytest.raises(ParseError, match=":2"):
        parse_df("Filesystem 1024-blocks Used Available Capacity Mounted on\ngarbage line\n")


def test_storage_findings_bytes_or_inodes():
    usages = parse_df(CLUSTER_P, ["/home", "/scratch", "/opt/my apps"], CLUSTER_PI)
    fs = storage_findings("hpc", usages, 85)
    assert [(f.root_cause, f.subject.id, f.severity) for f in fs] == [
        ("disk_full", "/home", "warning"),
        ("disk_full", "/scratch", "critical"),
    ]
    assert "88% used" in fs[0].title and "99% of inodes" in fs[1].title
    assert "--inodes" in fs[1].remedy and fs[1].evidence[1].where == "df -Pi"
    assert [f.subject.id for f in storage_findings("hpc", usages, 90)] == ["/scratch"]


def test_storage_alert_on_crossing_and_first_sight():
    low = [FsUsage("/home", 100, 80, 20, 80.0, 10.0)]
    high = [FsUsage("/home", 100, 86, 14, 86.0, 10.0)]
    # first collection: a level alert for what is already over, nothing for what is not
    assert [a.subject.id for a in storage_alerts("hpc", None, high, T0)] == ["/home"]
    assert storage_alerts("hpc", None, low, T0) == []
    out = storage_alerts("hpc", low, high, T0, findings=storage_findings("hpc", high))
    assert [(a.rule, a.subject.kind, a.subject.id) for a in out] == [("storage", "file", "/home")]
    assert "86%" in out[0].title and out[0].finding is not None
    assert storage_alerts("hpc", high, high, T0) == []
    assert storage_alerts("hpc", low, high, T0, config=AlertConfig(storage_pct=90)) == []


class FakeTransport:
    name = "fake"

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    async def run(self, argv, timeout=30.0):
        self.calls.append(tuple(argv))
        out, err, rc = self.answers[argv[1]]
        return CommandResult(tuple(argv), out.encode(), err.encode(), rc)


async def test_collect_storage_runs_df_and_reports_missing_paths():
    p = (
        "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
        "nfs:/home 1024000 921600 102400 90% /home\n"
    )
    pi = "Filesystem Inodes IUsed IFree IUse% Mounted on\nnfs:/home 1000 10 990 1% /home\n"
    err = "df: /scratch: No such file or directory\n"
    t = FakeTransport({"-P": (p, err, 1), "-Pi": (pi, err, 1)})
    rep = await collect_storage(t, ["/home", "/scratch"])
    assert t.calls == [
        ("df", "-P", "--", "/home", "/scratch"),
        ("df", "-Pi", "--", "/home", "/scratch"),
    ]
    assert [(u.path, u.use_pct, u.inodes_pct) for u in rep.usages] == [("/home", 90.0, 1.0)]
    assert rep.errors == ("df: /scratch: No such file or directory",)
