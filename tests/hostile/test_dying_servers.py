"""Dying servers: an sshd killed mid-session, a controller that stops answering, a ModelArts
API that returns 500/429/timeouts. The affected source reports a typed error within one
interval, keeps its last good data (stale, with its age), recovers by itself within two
intervals, never slows another source, and the UI keeps answering keys meanwhile."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cockpit.model import Snapshot
from cockpit.runtime.hub import Hub
from cockpit.slurm.source import SlurmSource
from cockpit.transport import ConnectError, HostKeyError, LocalTransport, SshTransport
from tests.conftest import LAB_DIR
from tests.hostile.site import frozen, hostile_sources

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from modelarts_server import AK, PROJECT_ID, SK, ModelArtsServer  # noqa: E402

INTERVAL = 2.0  # seconds; the hub's floor is 1 s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    """A throwaway OpenSSH server on a loopback port, with the lab's keys (own process group)."""

    def __init__(self, tmp: Path, port: int | None = None) -> None:
        src = LAB_DIR / "ssh"
        if not (src / "ssh_host_ed25519_key").exists() or not shutil.which(
            "sshd", path="/usr/sbin:/usr/bin"
        ):
            pytest.skip("lab ssh material not found: run lab/sshd-up.sh")
        if os.geteuid() != 0:
            pytest.skip("a private sshd needs root")
        self.dir = tmp
        self.port = port or free_port()
        for f in ("ssh_host_ed25519_key", "authorized_keys", "id_ed25519"):
            shutil.copy(src / f, tmp / f)
            os.chmod(tmp / f, 0o600)
        pub = (src / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        self.known_hosts = tmp / "known_hosts"
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {' '.join(pub)}\n")
        self.key = str(tmp / "id_ed25519")
        (tmp / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1\nPort {self.port}\nHostKey {tmp}/ssh_host_ed25519_key\n"
            f"PidFile {tmp}/sshd.pid\nPermitRootLogin prohibit-password\n"
            f"AuthorizedKeysFile {tmp}/authorized_keys\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "UsePAM no\nStrictModes no\n"
            # this test kills sessions: one killed in a login shell's `pyenv rehash` leaves its
            # lock file, and every later login would wait 60 s for it (see lab/sshd-up.sh)
            "SetEnv PYENV_REHASH_TIMEOUT=1\n"
            "Subsystem sftp internal-sftp\nLogLevel ERROR\n"
        )
        self.proc: subprocess.Popen | None = None
        os.makedirs("/run/sshd", exist_ok=True)

    def start(self) -> Sshd:
        self.proc = subprocess.Popen(
            ["/usr/sbin/sshd", "-D", "-e", "-f", str(self.dir / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("private sshd did not start")

    def kill(self) -> None:
        """The server dies: the listener and every session process it forked (they setsid())."""
        if self.proc is not None and self.proc.poll() is None:
            doomed = _descendants(self.proc.pid)
            rehashing = any(b"pyenv-rehash" in _cmdline(pid) for pid in doomed)
            self.proc.kill()
            self.proc.wait()
            for pid in doomed:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if rehashing:  # a session died in ~/.bashrc's `pyenv rehash`: its lock would stay
                root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
                (root / "shims" / ".pyenv-shim").unlink(missing_ok=True)
        self.proc = None

    def transport(self, **kw) -> SshTransport:
        return SshTransport(
            "127.0.0.1",
            self.port,
            "root",
            self.key,
            str(self.known_hosts),
            connect_timeout=2,
            ssh_config=False,
            max_backoff=1,
            **kw,
        )


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(root: int) -> list[int]:
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


@pytest.fixture
def sshd(tmp_path):
    d = Sshd(tmp_path).start()
    yield d
    d.kill()


def slurm_over(transport, name="victim") -> SlurmSource:
    return SlurmSource(name, transport, interval=INTERVAL, command_timeout=5)


async def run_loops(hub: Hub):
    hub._post = lambda m: None
    return [asyncio.create_task(hub._poll_loop(st)) for st in hub.states.values()]


async def wait_until(cond, timeout: float, what: str) -> float:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.05)
    return time.monotonic() - t0


# ------------------------------------------------------------------ ssh


@pytest.mark.lab
async def test_sshd_killed_mid_session_is_a_typed_error_then_recovers_by_itself(sshd, lab_ssh):
    src = slurm_over(sshd.transport())
    healthy, *_ = hostile_sources("plain")
    healthy.interval = INTERVAL
    hub = Hub([src, healthy])
    tasks = await run_loops(hub)
    try:
        victim, other = hub.states["victim"], hub.states[healthy.name]
        await wait_until(
            lambda: victim.snapshot is not None and victim.error is None, 15, "first good poll"
        )
        good = victim.snapshot
        assert good.nodes and good.slurm_version.startswith("22.05")
        sshd.kill()
        t = await wait_until(lambda: victim.error is not None, INTERVAL + 3, "the failure to show")
        assert t <= INTERVAL + 3
        assert victim.error.kind == "unreachable" and "127.0.0.1" in victim.error.message
        assert victim.snapshot is good and victim.stale(hub.clock())  # old data kept, marked stale
        assert victim.age_s(hub.clock()) >= 0
        polls_before = other.polls
        await asyncio.sleep(INTERVAL * 1.6)
        assert other.polls > polls_before and other.error is None  # the other source kept updating
        sshd.start()
        t = await wait_until(
            lambda: victim.error is None and victim.snapshot is not good,
            2 * INTERVAL + 2.5,
            "recovery after sshd came back",
        )
        assert victim.snapshot.ok and src.transport.connects >= 2  # reconnected on its own
    finally:
        for tk in tasks:
            tk.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await hub.close()


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:  # a session process may exit between listing and signalling
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


@pytest.mark.lab
async def test_frozen_sshd_shows_a_timeout_with_its_reason_within_one_command_budget(sshd, lab_ssh):
    """SIGSTOP on the server (a hung host): the channel open never gets an answer and SSH
    keepalives would notice only after minutes. The poll must fail within the command budget
    with a reason on the status line, and recover by itself on SIGCONT."""
    src = slurm_over(sshd.transport())  # command_timeout 5 s, connect_timeout 2 s
    hub = Hub([src])
    tasks = await run_loops(hub)
    frozen_pids: list[int] = []
    try:
        victim = hub.states["victim"]
        # after the evidence round too: a log read in flight is bounded by the evidence
        # timeout, not this one
        await wait_until(
            lambda: victim.settled and victim.error is None, 30, "first good poll and its evidence"
        )
        good = victim.snapshot
        frozen_pids = [sshd.proc.pid, *_descendants(sshd.proc.pid)]
        _signal_all(frozen_pids, signal.SIGSTOP)
        # next poll within INTERVAL, its command bounded by command_timeout +
        # connect_timeout (5 + 2 s)
        await wait_until(
            lambda: victim.error is not None, INTERVAL + 5 + 2 + 5, "the frozen server to show"
        )
        assert victim.error.kind in ("timeout", "unreachable")
        assert "127.0.0.1" in victim.error.message and "within" in victim.error.message
        assert victim.snapshot is good and victim.stale(hub.clock())
        _signal_all(frozen_pids, signal.SIGCONT)
        frozen_pids = []
        await wait_until(
            lambda: victim.error is None and victim.snapshot is not good,
            2 * INTERVAL + 10,
            "recovery after SIGCONT",
        )
    finally:
        _signal_all(frozen_pids, signal.SIGCONT)
        for tk in tasks:
            tk.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await hub.close()


@pytest.mark.lab
async def test_transport_raises_typed_errors_with_backoff(sshd, lab_ssh):
    t = sshd.transport()
    assert (await t.run(["true"])).exit_status == 0
    sshd.kill()
    with pytest.raises(ConnectError):  # the live connection drops
        await t.run(["true"])
    with pytest.raises(ConnectError) as ei:  # refused, then backing off
        await t.run(["true"])
    assert "refused" in str(ei.value)
    with pytest.raises(ConnectError) as ei:
        await t.run(["true"])
    assert "next retry in" in str(ei.value)
    await t.close()


@pytest.mark.lab
async def test_unknown_or_changed_host_key_is_refused_with_its_fingerprint(sshd, lab_ssh, tmp_path):
    fp = subprocess.run(
        ["ssh-keygen", "-lf", str(LAB_DIR / "ssh" / "ssh_host_ed25519_key.pub")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[1]
    unknown = tmp_path / "empty_known_hosts"
    unknown.write_text("")
    changed = tmp_path / "changed_known_hosts"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True
    )
    other = (tmp_path / "other.pub").read_text().split()[:2]
    changed.write_text(f"[127.0.0.1]:{sshd.port} {' '.join(other)}\n")
    for kh in (unknown, changed, tmp_path / "missing_file"):
        t = SshTransport(
            "127.0.0.1", sshd.port, "root", sshd.key, str(kh), connect_timeout=3, ssh_config=False
        )
        with pytest.raises(HostKeyError) as ei:
            await t.run(["true"])
        assert fp in str(ei.value), str(ei.value)
        await t.close()
    snap = await slurm_over(
        SshTransport(
            "127.0.0.1",
            sshd.port,
            "root",
            sshd.key,
            str(unknown),
            connect_timeout=3,
            ssh_config=False,
        )
    ).poll()
    assert snap.error.kind == "host_key" and fp in snap.error.message


class _FakeSlurmctldDown(LocalTransport):
    """The controller is dead: Slurm's commands print what 22.05 prints and exit 1."""

    def __init__(self) -> None:
        super().__init__("ctld-down")
        self.down = True

    async def run(self, argv, timeout: float = 30.0):
        if self.down:
            msg = {
                "squeue": (
                    "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"
                ),
                "scontrol": (
                    "slurm_load_node error: Unable to contact slurm controller (connect failure)"
                ),
            }
            return await super().run(
                ["sh", "-c", f"echo '{msg.get(argv[0], 'error')}' >&2; exit 1"], timeout
            )
        return await super().run(argv, timeout)


@pytest.mark.lab
async def test_controller_down_is_unreachable_then_recovers(lab_env, monkeypatch):
    for k, v in lab_env.env.items():
        monkeypatch.setenv(k, v)
    t = _FakeSlurmctldDown()
    src = SlurmSource("lab", t, interval=INTERVAL)
    snap = await src.poll()
    assert snap.error.kind == "unreachable" and "controller does not answer" in snap.error.message
    t.down = False
    assert (await src.poll()).ok


# ------------------------------------------------------------------ isolation


class _Blackhole:
    """Accepts TCP connections and never says a word (an SSH server that hangs)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]

    def close(self) -> None:
        self.sock.close()


async def test_one_unreachable_cluster_never_slows_another():
    hole = _Blackhole()
    try:
        dead = slurm_over(
            SshTransport(
                "127.0.0.1",
                hole.port,
                "root",
                None,
                None,
                connect_timeout=2,
                ssh_config=False,
                insecure_ignore_host_key=True,
            ),
            name="dead",
        )
        healthy, *_ = hostile_sources("plain")
        t0 = time.monotonic()
        alone = await healthy.poll()
        alone_s = time.monotonic() - t0
        healthy2, *_ = hostile_sources("plain")
        done: dict[str, float] = {}

        async def timed(src) -> Snapshot:
            s = await src.poll()
            done[src.name] = time.monotonic() - t1
            return s

        t1 = time.monotonic()
        bad, good = await asyncio.gather(timed(dead), timed(healthy2))
        assert alone.ok and good.ok and bad.error is not None and bad.error.kind == "unreachable"
        assert done[healthy2.name] < alone_s + 0.5 < done["dead"], done
    finally:
        hole.close()


async def test_ui_answers_keys_while_a_poll_hangs(tmp_path):
    from cockpit.app import CockpitApp
    from cockpit.screens.help import HelpScreen
    from cockpit.store.acks import AckStore

    class Hanging:
        kind, name, interval = "slurm", "hangs", 3600.0

        def __init__(self) -> None:
            self.started = asyncio.Event()

        async def poll(self):
            self.started.set()
            await asyncio.sleep(3600)

        async def close(self):
            pass

        def show_queue_first(self):  # the Source contract's hook (cockpit.source.Source)
            pass

    hanging = Hanging()
    healthy, *_ = hostile_sources("plain")
    app = CockpitApp([hanging, healthy], clock=frozen, acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(hanging.started.wait(), 5)
        await wait_until(
            lambda: app.hub.states[healthy.name].polls > 0, 10, "the healthy source's poll"
        )
        t0 = time.monotonic()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("q")
        assert time.monotonic() - t0 < 2.0  # keys answered while the other poll never returns
    assert app.return_code == 0


# ------------------------------------------------------------------ ModelArts


@pytest.fixture
def ma_server(monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = ModelArtsServer(timeout_sleep_s=1.5).start()
    yield srv
    srv.stop()


def ma_source(srv, interval=INTERVAL):
    from cockpit.modelarts.api import SdkModelArtsApi, SdkSettings
    from cockpit.modelarts.source import ModelArtsSource

    api = SdkModelArtsApi(
        SdkSettings(ak=AK, sk=SK, project_id=PROJECT_ID, endpoint=srv.base_url, timeout=(1, 1))
    )
    return ModelArtsSource("ma", api, interval=interval, pool_cache_s=0)


async def test_modelarts_500_then_timeout_then_heals_at_hub_level_while_slurm_keeps_polling(
    ma_server,
):
    src = ma_source(ma_server)
    healthy, *_ = hostile_sources("plain")
    healthy.interval = 1.0
    hub = Hub([src, healthy])
    ma_server.inject(
        500,
        {"error_code": "ModelArts.0001", "error_msg": "internal error"},
        route="training-job-searches",
    )
    ma_server.inject("timeout", route="training-job-searches", times=1)
    tasks = await run_loops(hub)
    try:
        st, other = hub.states["ma"], hub.states[healthy.name]
        await wait_until(lambda: st.error is not None, 5, "the 500")
        assert st.error.kind == "server"
        await wait_until(
            lambda: st.error is not None and st.error.kind == "timeout",
            3 * INTERVAL + 3,
            "a timeout",
        )
        n = other.polls
        # backoff after the 2nd failure is two intervals: healed within that (+ the poll itself)
        t = await wait_until(
            lambda: st.error is None and st.snapshot is not None, 2 * INTERVAL + 2, "healing"
        )
        assert st.snapshot.training_jobs and t < 2 * INTERVAL + 2
        assert other.polls >= n + 1  # slurm kept its 1 s cadence through the timeouts
    finally:
        for tk in tasks:
            tk.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_modelarts_429_retry_after_is_respected_by_source_and_hub(ma_server):
    src = ma_source(ma_server)
    hub = Hub([src])
    st = hub.states["ma"]
    ma_server.inject(
        429,
        {"error_code": "APIGW.0308", "error_msg": "throttled"},
        headers={"Retry-After": "3"},
        route="training-job-searches",
    )
    await hub.poll_once(st)
    assert st.error.kind == "throttled" and st.error.retry_after_s == 3
    assert hub._next_delay(st) >= 3  # the poller waits at least Retry-After
    sent = len(ma_server.requests)
    await hub.poll_once(st)  # early poll (the operator pressed r): nothing leaves the process
    assert len(ma_server.requests) == sent and st.error.kind == "throttled"
    await asyncio.sleep(3.1)
    await hub.poll_once(st)
    assert st.error is None and st.snapshot.training_jobs
