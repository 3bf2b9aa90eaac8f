"""What the watcher tests share: a channel that keeps what it is sent, and a cluster job that
fails with exit 1 and the finding the engine gives it."""

from __future__ import annotations

from datetime import datetime, timedelta

from cockpit.model import ExitCode, Finding, SlurmJob, Subject


class ListChannel:
    """A notify channel that keeps the alerts it is sent (``name`` as the webhook's)."""

    name = "webhook"

    def __init__(self) -> None:
        self.sent: list = []

    def send(self, alerts) -> None:
        self.sent += alerts


def exit1_job(jid: str, state: str, end: datetime) -> SlurmJob:
    """Job ``jid`` of user ana: RUNNING, or FAILED with exit 1 at ``end``."""
    failed = state == "FAILED"
    return SlurmJob(
        jid, "align", "ana", "cpu", state, "NonZeroExitCode" if failed else "None",
        cpus=1, node_count=1, nodes=("c1",), node_list="c1",
        submit_time=end - timedelta(minutes=30), end_time=end if failed else None,
        exit_code=ExitCode(1, 0) if failed else None,
    )  # fmt: skip


def exit1_finding(jid: str, end: datetime) -> Finding:
    return Finding(
        "application_error", "critical", Subject("job", "lab", jid),
        "exit 1: a generic error from the program", first_seen=end,
    )  # fmt: skip
