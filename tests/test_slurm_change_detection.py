"""What a poll asks a Slurm controller, per release: the version once per connection, the cheap
``squeue --only-job-state`` (23.11+) every poll and the full squeue only when ids or states
changed or the last full read is old; the SLUID column (26.05) and the TRES/GRES column (%b).

The squeue outputs are real captures (``tests/fixtures/slurm-versions/<series>/``: the
cockpit's own format on each lab, ``squeue_o_v2.txt``), so the parser reads what each
release prints, and older captures without %b still read.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from cockpit.model import Snapshot
from cockpit.slurm.commands import (
    SQUEUE_ARGV,
    SQUEUE_ARGV_SLUID,
    SQUEUE_FIELDS,
    SQUEUE_STATES_ARGV,
    squeue_argv,
)
from cockpit.slurm.source import SlurmSource
from cockpit.slurm.squeue import parse_squeue
from cockpit.transport import CommandResult, ConnectError, FileStat

BASE = Path(__file__).parent / "fixtures" / "slurm-versions"
VERSIONS = {"22.05": "22.05.8", "24.11": "24.11.5", "26.05": "26.05.5"}
T0 = datetime(2026, 12, 2, 0, 21, 0, tzinfo=UTC)  # after the captures


def fx(series: str, name: str) -> str:
    return (BASE / series / name).read_text()


def states_of(squeue_text: str) -> str:
    """What --only-job-state prints for the same queue (ids and states, its own order)."""
    rows = [ln.split("\x1f") for ln in squeue_text.splitlines() if ln.strip()]
    return "".join(f"{r[0]}\x1f{r[4]}\n" for r in reversed(rows))


class Cluster:
    """A controller of one release: answers the cockpit's commands from a capture."""

    name = "fake"

    def __init__(self, series: str) -> None:
        self.version = VERSIONS[series]
        self.queue = fx(series, "squeue_o_v2.txt")
        self.calls: list[tuple[str, ...]] = []
        self.connects = 1
        self.down = False

    def count(self, argv: tuple[str, ...]) -> int:
        return sum(1 for c in self.calls if c == argv)

    async def run(self, argv, timeout=30.0):
        argv = tuple(argv)
        self.calls.append(argv)
        if self.down:
            raise ConnectError("ssh: connection refused", "ssh")
        if argv == ("scontrol", "--version"):
            out = f"slurm {self.version}\n"
        elif argv == SQUEUE_STATES_ARGV:
            if self.version < "23.11":
                return CommandResult(
                    argv, b"", b"squeue: unrecognized option '--only-job-state'\n", 1
                )
            out = states_of(self.queue)
        elif argv[0] == "squeue":
            assert argv == squeue_argv(self.version), argv
            out = self.queue
        else:
            out = ""
        return CommandResult(argv, out.encode(), b"", 0)

    async def read_range(self, path, offset, length):
        return b""

    async def stat(self, path):
        return FileStat(0, 0.0)

    async def close(self):
        pass


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def source(series: str, **kw) -> tuple[SlurmSource, Cluster, Clock]:
    cl, clock = Cluster(series), Clock()
    return SlurmSource(series, cl, clock=clock, background_evidence=False, **kw), cl, clock


# ------------------------------------------------------------------ version per connection


async def test_version_is_asked_once_per_connection_and_again_after_a_reconnect():
    src, cl, clock = source("24.11")
    for _ in range(3):
        snap = await src.poll()
        clock.now += timedelta(seconds=15)
    assert snap.ok and snap.slurm_version == "24.11.5"
    assert cl.count(("scontrol", "--version")) == 1
    cl.connects += 1  # the SSH transport reconnected: maybe to an upgraded login node
    cl.version = "26.05.5"
    cl.queue = fx("26.05", "squeue_o_v2.txt")
    snap = await src.poll()
    assert cl.count(("scontrol", "--version")) == 2
    assert snap.slurm_version == "26.05.5"
    assert cl.count(SQUEUE_ARGV_SLUID) == 1  # the new release's format, asked at once


async def test_version_is_asked_again_after_a_failed_poll():
    src, cl, clock = source("22.05")
    await src.poll()
    cl.down = True
    clock.now += timedelta(seconds=15)
    assert (await src.poll()).error.kind == "unreachable"
    cl.down = False
    clock.now += timedelta(seconds=15)
    assert (await src.poll()).ok
    assert cl.count(("scontrol", "--version")) == 2  # first, and after the outage


# ------------------------------------------------------------------ cheap change detection


async def test_only_job_state_spares_the_full_squeue_while_nothing_changes():
    src, cl, clock = source("24.11")
    first = await src.poll()
    running = next(j for j in first.jobs if j.state == "RUNNING")
    for _ in range(5):
        clock.now += timedelta(seconds=15)
        snap = await src.poll()
        assert snap.ok
    assert cl.count(SQUEUE_ARGV) == 1 and cl.count(SQUEUE_STATES_ARGV) == 6
    # the same jobs, and a running job's TIME follows the clock from the last full read
    assert [j.job_id for j in snap.jobs] == [j.job_id for j in first.jobs]
    again = next(j for j in snap.jobs if j.job_id == running.job_id)
    assert again.elapsed_by(snap.taken_at) == running.elapsed_s + 5 * 15


async def test_a_changed_state_or_an_old_read_brings_the_full_squeue():
    src, cl, clock = source("26.05", full_squeue_every=60)
    await src.poll()
    full = SQUEUE_ARGV_SLUID
    clock.now += timedelta(seconds=15)
    await src.poll()
    assert cl.count(full) == 1
    # a job ended: its state changed, so the next poll reads the queue in full
    cl.queue = cl.queue.replace("\x1fRUNNING\x1f", "\x1fCOMPLETED\x1f", 1)
    clock.now += timedelta(seconds=15)
    snap = await src.poll()
    assert cl.count(full) == 2 and "COMPLETED" in {j.state for j in snap.jobs}
    # nothing changes, but after full_squeue_every seconds reasons and priorities are read again
    for _ in range(4):
        clock.now += timedelta(seconds=15)
        await src.poll()
    assert cl.count(full) == 3


async def test_a_job_the_scheduler_has_not_seen_is_read_again_next_poll():
    """A new job shows reason None until the scheduler looks at it; its PartitionConfig or
    Resources must not wait for the next full read."""
    src, cl, clock = source("24.11")
    cl.queue = cl.queue.replace("\x1fBadConstraints\x1f", "\x1fNone\x1f").replace(
        "\x1fFAILED\x1f", "\x1fPENDING\x1f"
    )
    await src.poll()
    clock.now += timedelta(seconds=15)
    await src.poll()
    assert cl.count(SQUEUE_ARGV) == 2
    cl.queue = cl.queue.replace("\x1fPENDING\x1fNone\x1f", "\x1fPENDING\x1fPriority\x1f")
    clock.now += timedelta(seconds=15)
    await src.poll()
    clock.now += timedelta(seconds=15)
    await src.poll()
    assert cl.count(SQUEUE_ARGV) == 3  # read once more (reason now known), then spared


async def test_before_23_11_every_poll_reads_the_queue_in_full():
    src, cl, clock = source("22.05")
    for _ in range(3):
        await src.poll()
        clock.now += timedelta(seconds=15)
    assert cl.count(SQUEUE_ARGV) == 3 and cl.count(SQUEUE_STATES_ARGV) == 0


async def test_a_squeue_that_refuses_only_job_state_is_not_asked_again():
    src, cl, clock = source("24.11")
    cl.version = "23.11.0"  # claims 23.11, but this squeue (a site wrapper) refuses the option
    real = cl.run

    async def run(argv, timeout=30.0):
        if tuple(argv) == SQUEUE_STATES_ARGV:
            cl.calls.append(tuple(argv))
            return CommandResult(tuple(argv), b"", b"squeue: unrecognized option\n", 1)
        return await real(argv, timeout)

    cl.run = run  # type: ignore[method-assign]
    for _ in range(3):
        assert (await src.poll()).ok
        clock.now += timedelta(seconds=15)
    assert cl.count(SQUEUE_STATES_ARGV) == 1 and cl.count(SQUEUE_ARGV) == 3


# ------------------------------------------------------------------ SLUID and GRES columns


def test_sluid_is_asked_only_where_the_release_has_it():
    assert squeue_argv("22.05.8") == squeue_argv("24.11.5") == squeue_argv("") == SQUEUE_ARGV
    assert squeue_argv("26.05.5") == SQUEUE_ARGV_SLUID and SQUEUE_ARGV_SLUID[-1].endswith("%s")
    assert "%b" in SQUEUE_ARGV[-1]


async def test_26_05_jobs_carry_their_sluid_from_the_queue():
    src, cl, _ = source("26.05")
    snap = await src.poll()
    sluids = {j.job_id: j.sluid for j in snap.jobs}
    # the same SLUIDs the 26.05 lab printed for `squeue -o %i|%s`
    assert sluids["7_1"] == "s43SM8T1G33900" and sluids["8"] == "s43SM8T1G30N00"
    assert all(s.startswith("s") and len(s) == 14 for s in sluids.values())


def test_every_release_reads_its_own_format_and_old_captures_still_read():
    for series in VERSIONS:
        new = {j.job_id: j for j in parse_squeue(fx(series, "squeue_o_v2.txt"))[0]}
        assert new and all(j.gres == "" and j.gpus is None for j in new.values())  # N/A
        assert any(j.state == "RUNNING" and j.name == "cap-run" for j in new.values())
        # captured before %b (22 columns): same jobs, no GRES
        old, warnings = parse_squeue(fx(series, "squeue_o.txt"))
        assert old and not warnings and all(j.gres == "" for j in old)
    assert len(SQUEUE_FIELDS) == 23


def test_gres_per_release_spelling():
    """%b is the TRES per node: 22.05 prefixes gres: (slurm_opt.c), 23.02+ gres/."""
    row = fx("26.05", "squeue_o_v2.txt").splitlines()[0].split("\x1f")
    for gres, per_node in [
        ("gres:gpu:2", 2),  # 22.05
        ("gres/gpu:a100:4", 4),  # 23.02+
        ("gres/gpu:a100:2,gres/gpu:v100:1", 3),
        ("gres/gpu", 1),
        ("gres/shard:2", None),
        ("N/A", None),
    ]:
        row[-2], row[7] = gres, "2"  # %b, and two nodes
        (job,), _ = parse_squeue("\x1f".join(row) + "\n")
        assert job.gpus_per_node == per_node, gres
        assert job.gpus == (None if per_node is None else per_node * 2)
        assert job.gres == ("" if gres == "N/A" else gres)


def test_queue_pane_gpus_column():
    from cockpit.views import JOB_COLUMNS, job_rows

    row = fx("26.05", "squeue_o_v2.txt").splitlines()[0].split("\x1f")
    row[-2], row[7] = "gres/gpu:a100:4", "2"
    (job,), _ = parse_squeue("\x1f".join(row) + "\n")
    (plain,), _ = parse_squeue(fx("26.05", "squeue_o_v2.txt").splitlines()[1] + "\n")
    snap = Snapshot("lab", "slurm", T0, jobs=(job, plain))
    rows = job_rows(snap, {}, T0)
    at = [c.label for c in JOB_COLUMNS].index("GPUS")
    cells = {r.key.split("\x1f")[1]: r.cells[at] for r in rows}
    assert cells == {job.job_id: "8", plain.job_id: ""}


def test_rest_jobs_carry_the_same_gres_as_squeue():
    from cockpit.slurm.parse_json import parse_squeue_json

    text = fx("26.05", "rest_jobs.json").replace(
        '"tres_per_node": ""', '"tres_per_node": "gres/gpu:2"', 1
    )
    jobs = parse_squeue_json(text, UTC, T0)[0]
    with_gpu = [j for j in jobs if j.gres]
    assert len(with_gpu) == 1 and with_gpu[0].gres == "gres/gpu:2"
    assert with_gpu[0].gpus_per_node == 2
    assert all(j.gpus is None for j in jobs if j is not with_gpu[0])


async def test_a_stopped_controller_reads_unreachable_not_a_command_error():
    """With slurmctld down, --only-job-state says only "Unable to query jobs state" (seen on
    the 24.11 and 26.05 labs); the full squeue that follows names the controller."""
    src, cl, clock = source("26.05")
    assert (await src.poll()).ok
    real = cl.run

    async def run(argv, timeout=30.0):
        argv = tuple(argv)
        if argv == SQUEUE_STATES_ARGV:
            cl.calls.append(argv)
            err = b"squeue: error: slurm_load_job_state: Unable to query jobs state: "
            err += b"Unspecified error\n"
            return CommandResult(argv, b"", err, 1)
        if argv[0] == "squeue":
            cl.calls.append(argv)
            err = b"slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
            return CommandResult(argv, b"", err, 1)
        return await real(argv, timeout)

    cl.run = run  # type: ignore[method-assign]
    clock.now += timedelta(seconds=15)
    snap = await src.poll()
    assert snap.error is not None and snap.error.kind == "unreachable", snap.error
    cl.run = real  # type: ignore[method-assign]
    clock.now += timedelta(seconds=15)
    assert (await src.poll()).ok  # back: read in full (the outage dropped the last read)
    full = cl.count(SQUEUE_ARGV_SLUID)
    clock.now += timedelta(seconds=15)
    assert (await src.poll()).ok
    assert cl.count(SQUEUE_ARGV_SLUID) == full  # and the cheap check serves again
