"""Commands sent to a cluster are built only from validated values and quoted; crafted job
ids, names, node names and paths cannot run a command over the real sshd; and the cockpit
only ever sends read-only commands (no scancel / scontrol update) unless actions are enabled."""

from __future__ import annotations

import ast
import os
import uuid
from pathlib import Path

import pytest

from cockpit import safety
from cockpit.errors import UserError
from cockpit.model import Subject
from cockpit.slurm.source import SlurmSource
from cockpit.transport import RemoteFileError, SshTransport
from tests.hostile.site import DRAINED_NODE, OOM_JOB, frozen, hostile_sources


def marker() -> Path:
    return Path("/tmp") / f"cockpit-pwned-{uuid.uuid4().hex[:8]}"


def injections(m: Path) -> list[str]:
    return [
        f";touch {m}",
        f"$(touch {m})",
        f"`touch {m}`",
        f"x\ntouch {m}",
        f"x' ; touch {m} ; '",
        f'x" ; touch {m} ; "',
        f"| touch {m}",
        f"&& touch {m}",
        f"-o/dev/null;touch {m}",
    ]


# ------------------------------------------------------------------ validators


@pytest.mark.parametrize(
    "check,good,bad",
    [
        (
            safety.validate_job_id,
            ["4", "123_7", "99+1", "s83SM8SACRPA00"],  # the last: a Slurm 26.05 SLUID
            [
                "",
                "4 ",
                "4\n",
                "4;x",
                "-1",
                "12_[1-3]",
                "1e3",
                "４",
                "s83SM8SA;x",
                "s1",
                "-s83SM8SACRPA0",
            ],
        ),
        (
            safety.validate_node_name,
            ["cn013", "gpu-a100.rack1", "n_1"],
            ["", "-cn1", "cn 1", "cn1\n", "cn1;x", "cn[1-3]", "a/b"],
        ),
        (
            safety.validate_partition,
            ["gpu", "debug_q", "p.1"],
            ["", "-p", "gpu,cpu", "gpu;x", "g u"],
        ),
        (
            safety.validate_user,
            ["root", "chen", "svc_ci-2", "a.b"],
            ["", "-u", "r oot", "x$(id)", "ro\not"],
        ),
        (
            safety.validate_path,
            ["/home/u/slurm-4.out", "/a b/c'd"],
            ["", "rel/path", "/a\nb", "/a\x00b", "~/x"],
        ),
        (
            safety.validate_job_name,
            ["train $(x) `y`", "a;b"],
            ["", "-n", "a\nb", "a\x1b[31m", "x" * 1025],
        ),
    ],
)
def test_validators_accept_slurm_syntax_and_refuse_the_rest(check, good, bad):
    for v in good:
        assert check(v) == v
    for v in bad:
        with pytest.raises(safety.UnsafeValue) as ei:
            check(v)
        assert repr(v) in str(ei.value)  # the message shows exactly what was refused
    assert issubclass(safety.UnsafeValue, UserError) and issubclass(safety.UnsafeValue, ValueError)


@pytest.mark.parametrize(
    "check",
    [
        safety.validate_job_id,
        safety.validate_node_name,
        safety.validate_partition,
        safety.validate_user,
    ],
)
def test_no_injection_passes_the_id_validators(check):
    for s in injections(marker()):
        with pytest.raises(safety.UnsafeValue):
            check(s)


class RecordingTransport:
    """Fails the test if anything reaches the cluster."""

    name = "rec"

    def __init__(self) -> None:
        self.sent: list = []

    async def run(self, argv, timeout=30.0):
        self.sent.append(tuple(argv))
        raise AssertionError(f"sent {argv!r}")

    async def read_range(self, path, offset, length):
        self.sent.append(("read", path))
        raise AssertionError(f"read {path!r}")

    async def stat(self, path):
        self.sent.append(("stat", path))
        raise AssertionError(f"stat {path!r}")

    async def close(self):
        pass


async def test_crafted_subjects_are_refused_before_anything_is_sent():
    from cockpit.model import Snapshot

    t = RecordingTransport()
    src = SlurmSource("c", t, clock=frozen)
    snap = Snapshot("c", "slurm", frozen())
    m = marker()
    for evil in injections(m):
        with pytest.raises(safety.UnsafeValue):
            await src.artifacts(Subject("job", "c", evil), snap)
        with pytest.raises(safety.UnsafeValue):
            await src.artifacts(Subject("node", "c", evil), snap)
        with pytest.raises(safety.UnsafeValue):
            await src.acct([OOM_JOB, evil])
        with pytest.raises(safety.UnsafeValue):
            await src.history(evil, "train")
    for evil in ("relative;touch x", "/a\ntouch x", "/a\x00"):
        with pytest.raises(safety.UnsafeValue):
            await src.read_range(evil, 0, 10)
    assert t.sent == [] and not m.exists()


def test_cli_reports_a_crafted_job_id_as_one_line_exit_2(capsys):
    from cockpit import cli

    m = marker()
    rc = cli.main(["collect", f"4;touch {m}", "--demo", "--out", str(m) + ".d"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("cockpit: ") and "touch" in err and err.count("\n") == 1
    assert not m.exists()


# ------------------------------------------------------------------ over the real sshd


@pytest.fixture
async def lab_ssh_transport(lab_ssh):
    t = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        lab_ssh.ssh_user,
        lab_ssh.ssh_key,
        lab_ssh.ssh_known_hosts,
        connect_timeout=5,
        ssh_config=False,
    )
    yield t
    await t.close()


@pytest.mark.lab
async def test_argv_with_shell_syntax_runs_literally_over_ssh(lab_ssh_transport):
    m = marker()
    args = injections(m)
    res = await lab_ssh_transport.run(["printf", "%s\\0", *args])
    assert res.exit_status == 0
    assert res.stdout.split(b"\0")[:-1] == [
        a.encode() for a in args
    ]  # each argument arrived verbatim
    assert not m.exists()


@pytest.mark.lab
async def test_crafted_paths_and_job_names_cannot_run_commands_over_ssh(lab_ssh, lab_ssh_transport):
    m = marker()
    src = SlurmSource("lab", lab_ssh_transport, clock=frozen, slurmctld_log=lab_ssh.ctld_log)
    for sftp_broken in (False, True):  # SFTP, then the `tail -c` fallback through a remote shell
        lab_ssh_transport._sftp_broken = sftp_broken
        for evil in injections(m):
            path = "/tmp/" + evil
            if "\n" in path:
                with pytest.raises(safety.UnsafeValue):
                    await src.read_range(path, 0, 100)
                continue
            with pytest.raises(RemoteFileError):
                await src.read_range(path, 0, 100)
    for evil in injections(m):
        if "\n" in evil or evil.startswith("-"):
            with pytest.raises(safety.UnsafeValue):
                await src.history("root", evil)
        else:
            assert await src.history("root", evil) == []  # sacct got it as one --name value
    assert not m.exists(), "a crafted value ran a command on the cluster"


# ------------------------------------------------------------------ read-only by default

READ_ONLY = {
    ("squeue",),
    ("scontrol", "show"),
    ("scontrol", "--version"),
    ("sacct",),
    ("sinfo",),
    ("df",),
    ("sstat",),  # the at-risk sampler: running steps' MaxRSS
    ("stat",),  # the at-risk sampler: running jobs' stdout size and mtime
}


def _read_only(argv: tuple[str, ...]) -> bool:
    return (argv[0],) in READ_ONLY or tuple(argv[:2]) in READ_ONLY


async def test_a_full_demo_poll_and_drilldown_sends_only_read_only_commands():
    slurm, ma, transport, api = hostile_sources("plain")
    snap = await slurm.poll()
    assert snap.ok
    for job in snap.jobs[:40]:
        await slurm.artifacts(Subject("job", slurm.name, job.job_id), snap)
    for node in snap.nodes:
        await slurm.artifacts(Subject("node", slurm.name, node.name), snap)
    await slurm.history("chen", "align-star")
    msnap = await ma.poll()
    for tj in msnap.training_jobs:
        await ma.artifacts(Subject("training_job", ma.name, tj.job_id), msnap)
    assert len(transport.argvs) > 80 and transport.paths
    assert [a for a in transport.argvs if not _read_only(a)] == []
    assert set(api.calls) <= {
        "list_training_jobs",
        "list_events",
    }  # and the API wrapper only reads:
    from cockpit.modelarts.api import ModelArtsApi

    methods = {n for n in vars(ModelArtsApi) if not n.startswith("_")}
    # the one call that changes anything is the guarded stop action (Source.run_action, off
    # unless allow_actions), and no poll or drill-down above made it
    assert {
        n for n in methods if any(w in n for w in ("stop", "delete", "create", "update", "cancel"))
    } == {"stop_training_job"}
    assert "stop_training_job" not in api.calls
    assert DRAINED_NODE in {n.name for n in snap.nodes} and OOM_JOB in {j.job_id for j in snap.jobs}


MUTATING = ("scancel", "sbatch", "srun", "salloc", "scrontab", "sacctmgr")


def _argv_literals(tree: ast.AST):
    """String constants that start an argv tuple/list (first element)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield node, first.value


def test_no_command_builder_in_the_code_mutates_a_cluster_without_allow_actions():
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for py in [*(root / "cockpit").rglob("*.py"), *(root / "widgets").rglob("*.py")]:
        text = py.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node, first in _argv_literals(tree):
            words = [
                e.value
                for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            mutating = first in MUTATING or (
                first == "scontrol"
                and any(w in ("update", "requeue", "hold", "release", "cancel") for w in words)
            )
            if mutating and "allow_actions" not in text:
                offenders.append(f"{py.relative_to(root)}:{node.lineno}: {words}")
    assert offenders == []
    from cockpit.config import ClusterConfig

    assert ClusterConfig("x").allow_actions is False  # off unless the config turns it on


def test_local_transport_never_uses_a_shell():
    src = (Path(__file__).resolve().parents[2] / "cockpit" / "transport.py").read_text()
    assert "create_subprocess_shell" not in src and "shell=True" not in src
    assert "shlex.join(argv)" in src  # over SSH each argument is quoted
    assert os.path.exists("/bin/sh")
