"""A job's user cannot make the cockpit read files for them: StdOut/StdErr (paths the job
chose) are read with the operator's identity, so they are read only where the job's user
could read them, and never through ``..`` or a link the user made."""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.model import SlurmJob, Snapshot, Subject
from cockpit.safety import READ, SEARCH, UnsafeValue, job_path_parts, may_access
from cockpit.slurm.paths import PathRefused, job_owner
from cockpit.slurm.source import SlurmSource
from cockpit.transport import CommandResult, LocalTransport

T = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
UID, GID, OTHER = 4242, 4343, 4444
SECRET = b"db password=hunter2\n"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")


class Cluster(LocalTransport):
    """Files from disk; ``scontrol show job`` answers for job 77 as user1(UID), group GID."""

    def __init__(self, stdout: str, stderr: str = "") -> None:
        super().__init__("lab")
        self.stdout, self.stderr = stdout, stderr or stdout
        self.reads: list[str] = []

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        argv = tuple(argv)
        if argv[:3] == ("scontrol", "show", "job"):
            text = (
                f"JobId=77 JobName=leak UserId=user1({UID}) GroupId=grp({GID}) MCS_label=N/A "
                "Priority=1 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 "
                f"NodeList=c1 WorkDir=/tmp StdErr={self.stderr} StdIn=/dev/null "
                f"StdOut={self.stdout}\n"
            )
            return CommandResult(argv, text.encode(), b"", 0)
        return CommandResult(argv, b"", b"sacct: error", 1)

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        self.reads.append(path)
        return await super().read_range(path, offset, length)


@pytest.fixture
def tree():
    """A world-searchable directory (tmp_path's parents are root's 0700)."""
    base = Path(tempfile.mkdtemp(prefix="cockpit-paths-", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base)


def make(path: Path, owner: int, group: int, mode: int, data: bytes = SECRET) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chown(path, owner, group)
    path.chmod(mode)
    return str(path)


def _snap(stdout: str) -> Snapshot:
    job = SlurmJob(
        "77", "leak", "user1", "cpu", "FAILED", "NonZeroExitCode", nodes=("c1",),
        node_list="c1", end_time=T, stdout_path=stdout, stderr_path=stdout,
    )  # fmt: skip
    return Snapshot("lab", "slurm", T, jobs=(job,))


async def _evidence(tr: Cluster, tmp: Path):
    src = SlurmSource(
        "lab", tr, slurmctld_log=str(tmp / "ctld.log"), slurmd_log=str(tmp / "slurmd.log")
    )
    arts = await src.artifacts(Subject("job", "lab", "77"), _snap(tr.stdout))
    return src, arts


@needs_root
@pytest.mark.parametrize(
    ("owner", "group", "mode", "readable"),
    [
        (UID, GID, 0o600, True),  # the user's own file
        (0, GID, 0o640, True),  # group-readable, the job's primary group
        (0, OTHER, 0o640, False),  # group-readable, another group
        (0, 0, 0o600, False),  # root's
        (UID, GID, 0o044, False),  # the owner's bits count for the owner, not the others'
        (0, 0, 0o644, True),  # world-readable
    ],
)
async def test_stdout_is_read_only_if_the_jobs_user_could(tree, owner, group, mode, readable):
    out = make(tree / "out" / "slurm-77.out", owner, group, mode)
    (tree / "out").chmod(0o755)
    tr = Cluster(out)
    src, arts = await _evidence(tr, tree)
    stdout = [x for x in arts.logs if x.kind == "stdout"]
    if readable:
        assert stdout and stdout[0].data == SECRET
    else:
        assert not stdout and out not in tr.reads
        assert arts.commands["error: stdout"] == f"not read: {out} is not readable by user1"
        # the log viewer opens the same path by name alone: refused there too
        locs = dict(src.log_locations(Subject("job", "lab", "77"), _snap(out)))
        assert locs["stdout"].path == out
        with pytest.raises(PathRefused, match="not readable by user1"):
            await src.read_range(out, 0, 100)
        with pytest.raises(PathRefused):
            await src.stat(out)
        assert out not in tr.reads


@needs_root
async def test_a_readable_file_inside_a_closed_directory_is_not_read(tree):
    secret_dir = tree / "root-only"
    out = make(secret_dir / "notes.txt", 0, 0, 0o644)
    secret_dir.chmod(0o700)
    tr = Cluster(out)
    _src, arts = await _evidence(tr, tree)
    assert not [x for x in arts.logs if x.kind == "stdout"] and out not in tr.reads
    assert f"{secret_dir} is closed to them" in arts.commands["error: stdout"]


@needs_root
async def test_links_and_dotdot_do_not_leave_the_users_tree(tree):
    secret = make(tree / "root-only" / "secret", 0, 0, 0o644)
    (tree / "root-only").chmod(0o700)
    home = tree / "home"
    home.mkdir()
    os.chown(home, UID, GID)
    link = home / "out.log"
    link.symlink_to(secret)
    os.lchown(link, UID, GID)
    tr = Cluster(str(link))
    _src, arts = await _evidence(tr, tree)
    assert not [x for x in arts.logs if x.kind == "stdout"] and str(link) not in tr.reads
    assert "is a symbolic link made by uid 4242" in arts.commands["error: stdout"]
    dotdot = f"{home}/../root-only/secret"
    tr = Cluster(dotdot)
    _src, arts = await _evidence(tr, tree)
    assert not tr.reads or dotdot not in tr.reads
    assert "leaves its directory" in arts.commands["error: stdout"]


def test_permission_rules_and_owner_parsing():
    assert may_access(0o600, 5, 5, 5, 9, READ) and not may_access(0o600, 5, 5, 6, 5, READ)
    assert may_access(0o640, 0, 7, 6, 7, READ) and not may_access(0o640, 0, 7, 6, None, READ)
    assert may_access(0o711, 0, 0, 6, 6, SEARCH) and not may_access(0o700, 0, 0, 6, 6, SEARCH)
    assert may_access(0o000, 1, 1, 0, 0, READ)  # a root job reads what root reads
    assert job_path_parts("/a/./b//c") == ["a", "b", "c"]
    with pytest.raises(UnsafeValue):
        job_path_parts("/a/../etc/shadow")
    owner = job_owner("JobId=5 JobName=x UserId=ana(1001) GroupId=lab(2002) MCS_label=N/A")
    assert owner is not None and (owner.user, owner.uid, owner.gid) == ("ana", 1001, 2002)
    assert job_owner("JobId=5 UserId=ana") is None
