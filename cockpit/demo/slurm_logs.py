"""The demo cluster's log files: slurmctld.log, slurmd-<node>.log, the jobs' stdout/stderr.

Each is a pure function of the cluster and ``t``, served by byte range (:class:`LogFile`);
the big training log is generated line by line for the range asked, never whole.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.demo.slurm_output import SLURM_VERSION, log_ts, stable_hash, ts
from cockpit.slurm.hostlist import compress

if TYPE_CHECKING:
    from cockpit.demo.slurm import DemoJob, DemoNode, SlurmCluster

_TS_REF = re.compile(r"\{ts:(-?\d+)\}")


@dataclass(frozen=True, slots=True)
class LogFile:
    """A log as the demo serves it at one instant: bytes by range, size and mtime."""

    size: int
    mtime: float
    read: Callable[[int, int], bytes]


CACHE_FILES = 256  # log files kept, each as served at its latest t (a poll reads it a few times)
CACHE_BYTES = 32 << 20


def _static_log(data: bytes, mtime: float) -> LogFile:
    return LogFile(len(data), mtime, lambda off, n: data[max(0, off) : max(0, off) + max(0, n)])


class SlurmLogs:
    """The log files of :class:`~cockpit.demo.slurm.SlurmCluster`, by path, at ``t``.

    Reads the cluster's jobs and nodes, its clock (``at``, ``_ms``) and ``_job_log``, the
    generator of background jobs' output.
    """

    nodes: dict[str, DemoNode]
    jobs: list[DemoJob]
    jobs_on_node: dict[str, list[DemoJob]]
    _job_log: Callable[[DemoJob, int], list[tuple[float, str]]]

    def _init_logs(
        self, ctld_extra: list[tuple[float, str]], slurmd_extra: list[tuple[str, float, str]]
    ) -> None:
        self._ctld = sorted(self._ctld_events(ctld_extra), key=lambda e: e[0])
        self._ctld_done: tuple[int, bytes] = (0, b"")  # (events, their lines) formatted
        self._ctld_times = [e[0] for e in self._ctld]
        self._slurmd_extra: dict[str, list[tuple[float, str]]] = {}
        for node, at, text in slurmd_extra:
            self._slurmd_extra.setdefault(node, []).append((at, text))
        for j in self.jobs:
            for node, at, text in j.slurmd:
                self._slurmd_extra.setdefault(node, []).append((at, text))
        self._cache: dict[str, tuple[int, LogFile]] = {}  # path -> (t, file), oldest first
        self._cached = 0  # bytes in _cache
        self.files: dict[str, Callable[[int], LogFile | None]] = {
            "/var/log/slurm/slurmctld.log": self._ctld_file,
        }
        for name in self.nodes:
            self.files[f"/var/log/slurm/slurmd-{name}.log"] = lambda t, name=name: (
                self._slurmd_file(name, t)
            )
        for j in self.jobs:
            self.files[j.stdout_path] = lambda t, j=j: self._job_file(j, t, "out")
            if j.split_err:
                self.files[j.stderr_path] = lambda t, j=j: self._job_file(j, t, "err")

    # ------------------------------------------------------------------ logs

    def file(self, path: str, t: int) -> LogFile | None:
        maker = self.files.get(path)
        if maker is None:
            return None
        hit = self._cache.get(path)
        if hit is not None and hit[0] == t:
            return hit[1]
        made = maker(t)
        if made is None:
            return None
        # one copy per path, as served at the latest t: the reads of one poll hit it, and a
        # later t makes the earlier copy useless. Keyed by (path, t), the slurmctld log (the
        # whole week so far) was one more copy per poll, up to the byte bound: 32 MiB of the
        # simulator's own memory counted against the cockpit in a week-long run
        if hit is not None:
            del self._cache[path]
            self._cached -= hit[1].size
        while self._cache and (
            len(self._cache) >= CACHE_FILES or self._cached + made.size > CACHE_BYTES
        ):
            self._cached -= self._cache.pop(next(iter(self._cache)))[1].size
        self._cache[path] = (t, made)
        self._cached += made.size
        return made

    def _ctld_events(self, extra: list[tuple[float, str]]) -> list[tuple[float, str]]:
        ev: list[tuple[float, str]] = list(extra)
        for j in self.jobs:
            ms = self._ms(j.job_id, "submit") / 1000
            usec = 200 + stable_hash(j.job_id) % 500
            msg = f"_slurm_rpc_submit_batch_job: JobId={j.job_id} InitPrio={j.priority} usec={usec}"
            ev.append((j.submit + ms, msg))
            ev.extend(j.ctld)
            if j.start is None:
                if j.cancelled_at is not None:  # cancelled while pending: no allocation
                    uid = j.cancelled_by if j.cancelled_by is not None else j.uid
                    e = j.cancelled_at + self._ms(j.job_id, "end") / 1000
                    ev.append(
                        (e, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId={j.job_id} uid {uid}")
                    )
                continue
            s = j.start + self._ms(j.job_id, "start") / 1000
            if stable_hash(j.job_id, "bf") % 3 == 0:
                msg = (
                    f"sched/backfill: _start_job: Started JobId={j.job_id} in {j.partition} "
                    f"on {compress(j.nodes)}"
                )
            else:
                msg = (
                    f"sched: Allocate JobId={j.job_id} NodeList={compress(j.nodes)} "
                    f"#CPUs={j.cpus} Partition={j.partition}"
                )
            ev.append((s, msg))
            end = j.end
            if end is None:
                continue
            e = end + self._ms(j.job_id, "end") / 1000
            final = j.final
            if final == "TIMEOUT":
                ev.append((e, f"Time limit exhausted for JobId={j.job_id}"))
            elif final == "CANCELLED":
                uid = j.cancelled_by if j.cancelled_by is not None else j.uid
                ev.append((e, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId={j.job_id} uid {uid}"))
            elif final == "OUT_OF_MEMORY":
                ev.append((e, f"_job_complete: JobId={j.job_id} OOM failure"))
                ev.append((e, f"_job_complete: JobId={j.job_id} done"))
            elif final == "NODE_FAIL":
                pass  # the node-failure lines come with the node's scenario
            elif j.exit_code[1]:
                ev.append((e, f"_job_complete: JobId={j.job_id} WTERMSIG {j.exit_code[1]}"))
                ev.append((e, f"_job_complete: JobId={j.job_id} done"))
            else:
                ev.append((e, f"_job_complete: JobId={j.job_id} WEXITSTATUS {j.exit_code[0]}"))
                ev.append((e, f"_job_complete: JobId={j.job_id} done"))
        return ev

    def _fill(self, text: str) -> str:
        """Resolve ``{ts:N}`` placeholders (absolute demo seconds) in scenario lines."""
        return _TS_REF.sub(lambda m: ts(self.at(int(m.group(1)))), text) if "{ts:" in text else text

    def _log_lines(self, events: Iterable[tuple[float, str]]) -> bytes:
        return "".join(
            f"{log_ts(self.at(math.floor(at)), int((at - math.floor(at)) * 1000))} "
            f"{self._fill(text)}\n"
            for at, text in events
        ).encode()

    def _lines_file(self, events: list[tuple[float, str]], t: int) -> LogFile:
        last = max((at for at, _ in events if at <= t), default=0.0)
        data = self._log_lines(e for e in events if e[0] <= t)
        return _static_log(data, (self.at(last)).timestamp())

    def _ctld_file(self, t: int) -> LogFile:
        n = bisect_right(self._ctld_times, t + 0.999)
        # the week so far grows only at its end: each line is formatted once, not at every t
        # (re-formatting ~19k lines a poll kept a cache of every line's time stamp, ~18 MiB
        # by day 7 of a soak, and took ~70 ms a poll without it)
        done_n, done = self._ctld_done
        if n < done_n:  # an earlier t (a replay, a test's clock): from the start
            done_n, done = 0, b""
        if n > done_n:
            done += self._log_lines(self._ctld[done_n:n])
            self._ctld_done = (n, done)
        last = self._ctld[n - 1][0] if n else 0.0
        return _static_log(done, (self.at(last)).timestamp())

    def _slurmd_file(self, name: str, t: int) -> LogFile:
        node = self.nodes[name]
        ev: list[tuple[float, str]] = []
        s = node.slurmd_start
        mem_hw = node.hw_memory or node.real_memory + 1400
        ev += [
            (s + 0.402, "CPU frequency setting not configured for this node"),
            (s + 0.405, f"slurmd version {SLURM_VERSION} started"),
            (
                s + 0.407,
                "error:  mpi/pmix_v4: init: (null) [0]: mpi_pmix.c:195: pmi/pmix: "
                "can not load PMIx library",
            ),
            (
                s + 0.407,
                "error: Couldn't load specified plugin name for mpi/pmix_v4: "
                "Plugin init() callback failed",
            ),
            (s + 0.407, "error: MPI: Cannot create context for mpi/pmix_v4"),
            (s + 0.409, f"slurmd started on {self.at(s).strftime('%a, %d %b %Y %H:%M:%S')} +0000"),
            (
                s + 0.409,
                f"CPUs={node.cpus} Boards=1 Sockets={node.sockets} "
                f"Cores={node.cpus // node.sockets} Threads=1 "
                f"Memory={mem_hw} TmpDisk=917504 Uptime={s - node.boot} CPUSpecList=(null) "
                f"FeaturesAvail=(null) FeaturesActive=(null)",
            ),
        ]
        for j in self.jobs_on_node.get(name, ()):
            if j.start is None:
                continue
            st = j.start + 0.002 + self._ms(j.job_id, name) / 1e6
            if j.nodes and j.nodes[0] == name:
                ev.append((st, f"Launching batch job {j.job_id} for UID {j.uid}"))
                limits = f"alloc={j.mem_mib}MB mem.limit={j.mem_mib}MB memsw.limit=unlimited"
                memcg = f"[{j.job_id}.batch] task/cgroup: _memcg_initialize:"
                ev.append((st + 0.02, f"{memcg} job: {limits}"))
                ev.append((st + 0.02, f"{memcg} step: {limits}"))
            end = j.end
            if end is None:
                continue
            if j.final in ("TIMEOUT", "CANCELLED"):
                head = f"[{j.job_id}.batch] error: *** JOB {j.job_id} ON {j.nodes[0]} CANCELLED AT"
                if j.final == "TIMEOUT":
                    ev.append((end + 0.002, f"{head} {ts(self.at(end))} DUE TO TIME LIMIT ***"))
                else:
                    ev.append((end + 0.001, f"{head} {ts(self.at(end))} ***"))
            if j.final != "NODE_FAIL" and j.nodes and j.nodes[0] == name:
                ev.append((end + 1.02, f"[{j.job_id}.batch] done with job"))
        ev += self._slurmd_extra.get(name, [])
        ev.sort(key=lambda e: e[0])
        return self._lines_file(ev, t + 1)

    def _job_file(self, j: DemoJob, t: int, which: str) -> LogFile | None:
        if j.start is None or t < j.start:
            return None
        if j.big_log_lines and which == "out":
            return big_log(j, t, self)
        if which == "err":
            lines = [(j.start + off, text) for off, text in j.stderr]
        elif j.stdout or j.stderr:
            lines = [(j.start + off, text) for off, text in j.stdout]
            if not j.split_err:
                lines += [(j.start + off, text) for off, text in j.stderr]
        else:
            lines = self._job_log(j, t)
        lines = sorted((ln for ln in lines if ln[0] <= t), key=lambda ln: ln[0])
        data = "".join(self._fill(text) + "\n" for _, text in lines).encode()
        last = lines[-1][0] if lines else j.start
        return _static_log(data, self.at(last).timestamp())


# --------------------------------------------------------------------------- the big log

_BIG_HEADER_LINES = (
    "\x1b[1m== llm-pretrain: 64 x A100 80GB, ZeRO-3, bf16 ==\x1b[0m",
    "[rank0]: loading tokenizer from /shared/models/tokenizer-v3",
    "[rank0]: dataset shards: 4096, tokens: 2.1T",
)


def _big_line(i: int, when: datetime, seed: int) -> str:
    """One fixed-width progress line (every line has the same byte length)."""
    loss = 1.65 + 2.4 / (1 + i / 9000) + ((stable_hash(seed, i) % 2000) - 1000) / 40000
    tok = 180_000 + stable_hash(seed, "tok", i) % 9000
    gnorm = 0.2 + (stable_hash(seed, "g", i) % 900) / 1000
    stamp = when.strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"\x1b[32m{stamp}\x1b[0m | \x1b[34mINFO\x1b[0m | step {i:08d} | loss {loss:7.4f} | "
        f"lr 3.00e-04 | grad_norm {gnorm:5.3f} | tok/s {tok:7d} | mem 71.2GiB"
    )


def big_log(j: DemoJob, t: int, cluster: SlurmCluster) -> LogFile:
    """A training log of ``j.big_log_lines`` lines at the demo start, growing 2 lines/s.

    Lines are fixed width, so any byte range is generated directly without building
    the file (hundreds of thousands of lines, tens of MB).
    """
    assert j.start is not None
    header = "".join(h + "\n" for h in _BIG_HEADER_LINES).encode()
    sample = (_big_line(0, cluster.at(0), 0) + "\n").encode()
    width = len(sample)
    t0_lines = j.big_log_lines
    # the job started t0_lines/2 seconds before the demo start plus header time
    end = j.end
    upto = t if end is None else min(t, end)
    count = max(0, t0_lines + 2 * upto)
    size = len(header) + count * width

    def when(i: int) -> datetime:
        return cluster.at(-t0_lines / 2 + i / 2)

    def read(offset: int, length: int) -> bytes:
        offset = max(0, offset)
        stop = min(size, offset + max(0, length))
        if offset >= stop:
            return b""
        out = bytearray()
        if offset < len(header):
            out += header[offset:stop]
        lo = max(0, (max(offset, len(header)) - len(header)) // width)
        hi = min(count, (stop - len(header) + width - 1) // width)
        if hi > lo:
            body = "".join(_big_line(i, when(i), j.job_id) + "\n" for i in range(lo, hi)).encode()
            base = len(header) + lo * width
            out += body[max(0, offset - base) : stop - base]
        return bytes(out)

    return LogFile(size, cluster.at(upto).timestamp(), read)
