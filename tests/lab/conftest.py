"""Fixtures of the version labs: the host's Slurm 22.05 (lab/slurm-up.sh) and the 24.11 / 26.05
roots beside it (lab/version-up.sh 24|26), each through the local transport (its wrappers),
SSH (its own sshd) and, for 24.11+, slurmrestd.

``slurm_version`` yields each available version's :class:`VersionLab`; a version whose env
file is missing or whose controller does not answer is skipped with the reason. Never starts
a lab (CI does, ``.ci/run``); a test that stops a controller restarts it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LAB_DIR, REPO, LabEnv, read_env_file

# series -> (env dir, lab/version-up.sh argument; "" = the host lab of slurm-up.sh)
VERSIONS = {
    "22.05": (LAB_DIR, ""),
    "24.11": (Path("/tmp/slurmv24"), "24"),
    "26.05": (Path("/tmp/slurmv26"), "26"),
}


@dataclass(frozen=True)
class VersionLab(LabEnv):
    series: str = ""
    release: str = ""
    up_arg: str = ""  # "" = the host lab
    rest_url: str = ""
    rest_token_file: str = ""

    @property
    def host_lab(self) -> bool:
        return not self.up_arg

    def slurm_up(self) -> None:
        argv = ["bash", str(REPO / "lab" / "slurm-up.sh")]
        if self.up_arg:
            argv = ["bash", str(REPO / "lab" / "version-up.sh"), self.up_arg]
        subprocess.run(argv, check=True, capture_output=True, timeout=180)


def _expand(env: dict[str, str]) -> dict[str, str]:
    """``PATH="$DIR/bin:$PATH"`` of a version lab's env.sh, expanded against ours."""
    return {k: os.path.expandvars(v) for k, v in env.items()}


def load_version_lab(series: str) -> VersionLab:
    """The lab of ``series`` or pytest.skip with the reason."""
    if os.geteuid() != 0:
        pytest.skip("Slurm labs need root")
    lab_dir, up_arg = VERSIONS[series]
    env = _expand(read_env_file(lab_dir / "env.sh"))
    if not env:
        how = f"lab/version-up.sh {up_arg}" if up_arg else "lab/slurm-up.sh"
        pytest.skip(f"Slurm {series} lab not up: {lab_dir}/env.sh missing (run {how})")
    ssh = read_env_file(lab_dir / "ssh" / "env.sh")
    run_env = {**os.environ, **env}
    try:
        res = subprocess.run(
            ["sinfo", "--version"], capture_output=True, text=True, timeout=15, env=run_env
        )
        ping = subprocess.run(
            ["scontrol", "ping"], capture_output=True, text=True, timeout=15, env=run_env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"Slurm {series} lab does not answer: {exc}")
    if res.returncode != 0 or "UP" not in ping.stdout:
        pytest.skip(f"Slurm {series} lab does not answer: {(res.stderr + ping.stdout)[:200]}")
    release = res.stdout.split()[-1]
    if not release.startswith(series):
        pytest.skip(f"{lab_dir} runs Slurm {release}, not {series}")
    return VersionLab(
        dir=lab_dir,
        ctld_log=env.get("SLURM_LAB_CTLD_LOG", str(lab_dir / "log" / "slurmctld.log")),
        slurmd_log_pattern=env.get(
            "SLURM_LAB_SLURMD_LOG_PATTERN", str(lab_dir / "log" / "slurmd-%n.log")
        ),
        jobs_dir=env.get("SLURM_LAB_JOBS_DIR", str(lab_dir / "jobs")),
        cgroup=env.get("SLURM_LAB_CGROUP", "1") != "0",
        ssh_host=ssh.get("SLURM_LAB_SSH_HOST", "127.0.0.1"),
        ssh_port=int(ssh.get("SLURM_LAB_SSH_PORT", "2222")),
        ssh_user=ssh.get("SLURM_LAB_SSH_USER", "root"),
        ssh_key=ssh.get("SLURM_LAB_SSH_KEY", ""),
        ssh_known_hosts=ssh.get("SLURM_LAB_SSH_KNOWN_HOSTS", ""),
        env=env,
        series=series,
        release=release,
        up_arg=up_arg,
        rest_url=env.get("SLURM_LAB_REST_URL", ""),
        rest_token_file=env.get("SLURM_LAB_REST_TOKEN_FILE", ""),
    )


@pytest.fixture(scope="session", params=list(VERSIONS))
def slurm_version(request) -> VersionLab:
    """Each Slurm version whose lab is up, in turn (skipped with the reason otherwise)."""
    return load_version_lab(request.param)


def make_version_source(lab: VersionLab, transport: str, **kw: Any) -> Any:
    """The cluster of ``lab`` as the cockpit builds it for ``transport`` (local: the version's
    wrappers first on the commands' PATH; ssh: its sshd; rest: its slurmrestd)."""
    from cockpit.slurm.rest import RestClient, RestSlurmSource, token_reader
    from cockpit.slurm.source import SlurmSource
    from cockpit.transport import LocalTransport, SshTransport

    name = f"lab{lab.series}-{transport}"
    if transport == "rest":
        if not lab.rest_url:
            pytest.skip(f"Slurm {lab.series} lab has no slurmrestd")
        client = RestClient(lab.rest_url, token_reader(None, lab.rest_token_file), timeout=20)
        return RestSlurmSource(name, client, interval=5)
    if transport == "local":
        t: Any = LocalTransport(env={"PATH": lab.env["PATH"]} if "PATH" in lab.env else None)
    else:
        if not lab.ssh_key or not Path(lab.ssh_key).exists():
            pytest.skip(f"Slurm {lab.series} lab has no sshd")
        t = SshTransport(
            lab.ssh_host,
            lab.ssh_port,
            lab.ssh_user,
            lab.ssh_key,
            lab.ssh_known_hosts,
            connect_timeout=5,
            ssh_config=False,
        )
    return SlurmSource(
        name,
        t,
        slurmctld_log=lab.ctld_log,
        slurmd_log=lab.slurmd_log_pattern,
        interval=5,
        **kw,
    )
