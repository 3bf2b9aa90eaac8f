"""Where the daemons' logs are when the config does not say: ``scontrol show config``."""

from __future__ import annotations

from cockpit.slurm.commands import parse_log_files
from cockpit.slurm.source import SlurmSource
from cockpit.transport import CommandResult, LocalTransport

CONFIG = (
    "SlurmctldLogFile        = /var/log/slurm/ctld.log\n"
    "SlurmdLogFile           = /var/spool/slurmd/%n.log\n"
    "SlurmSchedLogFile       = (null)\n"
)


def test_the_log_files_slurm_conf_names_and_syslog_as_none():
    assert parse_log_files(CONFIG) == {
        "SlurmctldLogFile": "/var/log/slurm/ctld.log",
        "SlurmdLogFile": "/var/spool/slurmd/%n.log",
    }
    assert parse_log_files("SlurmdLogFile = (null)\n") == {}  # syslog: the default stands


class Cluster(LocalTransport):
    def __init__(self, answers: list[CommandResult | None]) -> None:
        super().__init__("lab")
        self.answers = answers
        self.asked = 0

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        assert tuple(argv) == ("scontrol", "show", "config")
        self.asked += 1
        got = self.answers.pop(0)
        return got or CommandResult(tuple(argv), b"", b"Unable to contact slurm controller", 1)


async def test_configured_paths_win_and_a_failed_ask_is_asked_again():
    ok = CommandResult(("scontrol",), CONFIG.encode(), b"", 0)
    cluster = Cluster([None, ok])
    src = SlurmSource("lab", cluster, slurmctld_log="/site/ctld.log")
    await src.resolve_log_paths()  # the controller did not answer: defaults for now
    assert src.slurmd_log == "/var/log/slurm/slurmd.log"
    await src.resolve_log_paths()
    assert (src.slurmctld_log, src.slurmd_log) == ("/site/ctld.log", "/var/spool/slurmd/%n.log")
    await src.resolve_log_paths()
    assert cluster.asked == 2  # once answered, never asked again
    both = SlurmSource("lab", Cluster([]), slurmctld_log="/a", slurmd_log="/b/%n")
    await both.resolve_log_paths()  # nothing to ask: run() would fail the test


async def test_fetches_side_by_side_wait_for_the_one_ask():
    """A drill-down beside a background round: both read the cluster's paths, asked once (the
    second fetch used to return at once and read the default paths meanwhile)."""
    import asyncio

    class Slow(Cluster):
        async def run(self, argv, timeout: float = 30.0) -> CommandResult:
            await asyncio.sleep(0.05)
            return await super().run(argv, timeout)

    cluster = Slow([CommandResult(("scontrol",), CONFIG.encode(), b"", 0)])
    src = SlurmSource("lab", cluster)
    seen = []

    async def fetch() -> None:
        await src.resolve_log_paths()
        seen.append(src.slurmd_log)

    await asyncio.gather(fetch(), fetch())
    assert seen == ["/var/spool/slurmd/%n.log"] * 2 and cluster.asked == 1
