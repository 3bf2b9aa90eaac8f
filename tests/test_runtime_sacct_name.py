"""A comma in a job name must not size a remedy from other jobs: sacct splits ``--name a,b``
into the names ``a`` and ``b``. Such a name is matched exactly on the cockpit's side."""

from __future__ import annotations

from cockpit.slurm.commands import SACCT_FIELDS, SEP
from cockpit.slurm.source import SlurmSource
from cockpit.transport import CommandResult

ROWS = [
    # JobID JobName Partition User State ExitCode ReqMem MaxRSS Elapsed Timelimit ...
    ("11", "a", "cpu", "ana", "COMPLETED", "0:0", "4G", "", "00:10:00", "01:00:00"),
    ("11.batch", "batch", "", "", "COMPLETED", "0:0", "", "3900M", "00:10:00", ""),
    ("12", "b", "cpu", "ana", "COMPLETED", "0:0", "4G", "", "00:10:00", "01:00:00"),
    ("13", "a,b", "cpu", "ana", "OUT_OF_MEMORY", "0:125", "8G", "", "00:10:00", "01:00:00"),
    ("13.batch", "batch", "", "", "OUT_OF_MEMORY", "0:125", "", "8100M", "00:10:00", ""),
]


class Sacct:
    name = "lab"

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        argv = tuple(argv)
        self.calls.append(argv)
        name = argv[argv.index("--name") + 1].split(",") if "--name" in argv else None
        wanted = {r[0].split(".")[0] for r in ROWS if not name or r[1] in name}
        out = "".join(
            SEP.join((*r, *[""] * (len(SACCT_FIELDS) - len(r)))) + "\n"
            for r in ROWS
            if r[0].split(".")[0] in wanted
        )
        return CommandResult(argv, out.encode(), b"", 0)

    async def close(self) -> None:
        pass


async def test_a_name_with_a_comma_is_matched_exactly_not_split_by_sacct():
    tr = Sacct()
    rows = await SlurmSource("lab", tr).history("ana", "a,b")
    assert "--name" not in tr.calls[-1]  # not sent for sacct to split
    assert sorted(r.job_id + (f".{r.step}" if r.step else "") for r in rows) == [
        "13",
        "13.batch",
    ]
    rows = await SlurmSource("lab", tr).history("ana", "a")
    assert tr.calls[-1][tr.calls[-1].index("--name") + 1] == "a"  # a plain name still is
    assert {r.job_id for r in rows} == {"11"}
