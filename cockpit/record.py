"""Record what a platform answered and play it back: ``cockpit --record DIR`` / ``--replay DIR``.

Recording wraps a Slurm source's transport (every command's argv, exit status and output, and
every log range read) and a ModelArts source's API (every SDK call's name, arguments and wire
JSON answer or error: job list, job detail, stages, events, log previews, pools, pool nodes,
flavor capacity). Entries go to ``DIR/<source>.jsonl.gz`` (gzip members appended per poll, so
a recording cut by a crash keeps every poll before it) with the time they were answered; texts
and JSON are redacted first (a recording goes into bug reports and post-incident reviews).
``DIR/meta.json`` names the sources.

Replay puts a :class:`ReplayTransport` under a normal :class:`~cockpit.slurm.source.SlurmSource`
and a :class:`ReplayModelArtsApi` under a normal
:class:`~cockpit.modelarts.source.ModelArtsSource`, so the recorded answers go through the same
parsers, engine, incidents and views as live ones. A :class:`ReplayClock` is the app's clock:
it stands at one recorded poll (of any source), and each source answers every command or call
with its latest recording of exactly that command or call up to the end of its own poll at that
time; anything else is "not recorded", never another call's answer. The operator steps and
jumps between polls (``]``/``[``, ``}``/``{``); ``r`` re-reads at the new time.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import gzip
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.safety import redact, redact_in_place
from cockpit.text import json_line, lines
from cockpit.transport import (
    AuthError,
    CommandNotFound,
    CommandResult,
    CommandTimeout,
    ConnectError,
    FileStat,
    HostKeyError,
    RemoteFileError,
    TransportError,
)

FORMAT = 1
META = "meta.json"
POLL_COMMAND = "squeue"  # the first command of every Slurm poll: where a poll begins
CARRY_MAX = 64 << 10  # the longest unfinished line held back for the next read of a file
POLL_CALL = "list_training_jobs"  # the first call of every ModelArts poll (page 0)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def _file(directory: Path, source: str) -> Path:
    return directory / f"{_SAFE_NAME.sub('_', source)}.jsonl.gz"


def _pack(data: bytes) -> dict[str, str]:
    try:
        return {"text": redact(data.decode("utf-8"))}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(redact(data)).decode("ascii")}


def _pack_read(data: bytes) -> dict[str, str]:
    """A file range, redacted in place: every byte keeps its offset, so a replayed read of any
    part of the range is the recorded bytes at that part."""
    data = redact_in_place(data)
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def _unpack(d: dict[str, str]) -> bytes:
    if "b64" in d:
        return base64.b64decode(d["b64"])
    return d.get("text", "").encode("utf-8")


def _starts_poll(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` is the first answer of a poll: squeue, or the first job-list page."""
    op = entry.get("op")
    if op == "run":
        argv = entry.get("argv")
        # the queue itself, not the at-risk sampler's `squeue -O StdOut` of a few jobs
        return (
            isinstance(argv, list)
            and bool(argv)
            and argv[0] == POLL_COMMAND
            and not _long_format(argv)
        )
    if op == "call" and entry.get("call") == POLL_CALL:
        args = entry.get("args")
        # the unfiltered page 0 (offset, limit): a poll's phase-filtered listing comes after it
        return isinstance(args, list) and len(args) == 2 and args[0] == 0
    return False


def _long_format(argv: Any) -> bool:
    """``squeue -O ...``: a few jobs' fields (StdOut) asked by the at-risk sampler."""
    return any(a in ("-O", "--Format") or str(a).startswith("--Format=") for a in argv)


# ------------------------------------------------------------------ recording


class Recorder:
    """Appends entries for one source; thread-safe, never raises into the poller (a full disk
    stops the recording with ``error`` set, the cockpit goes on)."""

    def __init__(self, directory: Path, source: str, clock: Callable[[], datetime]) -> None:
        self.path = _file(directory, source)
        self.clock = clock
        self.error = ""
        self.lost = 0  # polls whose lines could not be written
        self._lock = threading.Lock()
        self._pending: list[str] = []

    def add_result(self, argv: list[str], res: CommandResult) -> None:
        self.add(
            {
                "op": "run",
                "argv": argv,
                "rc": res.exit_status,
                "out": _pack(res.stdout),
                "err": _pack(res.stderr),
            }
        )

    def add(self, entry: dict[str, Any]) -> None:
        entry["t"] = self.clock().isoformat()
        if "raw" in entry:
            entry["data"] = _pack(entry.pop("raw"))
        if "message" in entry:
            entry["message"] = redact(str(entry["message"]))
        line = json_line(entry)
        with self._lock:
            self._pending.append(line)
            # one gzip member per poll's worth of lines: a crash loses at most the last few
            if _starts_poll(entry) or len(self._pending) >= 64:
                self._flush_locked()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._pending:
            return
        data = ("\n".join(self._pending) + "\n").encode("utf-8")
        self._pending.clear()
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # a recording holds squeue, scontrol and log text of every user's jobs: 0600
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "ab") as fh:
                fh.write(gzip.compress(data, compresslevel=6))
            self.error = ""  # written again (disk freed, directory back)
        except OSError as exc:
            # this poll's lines are lost; the next poll tries again, and the app says so
            self.lost += 1
            self.error = f"recording to {self.path} failed: {exc.strerror or exc}"


class RecordingTransport:
    """A transport that answers as ``inner`` does and records what it answered."""

    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        self.name = getattr(inner, "name", "recorded")
        # path -> (where its last read ended, that read's unfinished last line): a secret on a
        # line cut by a read boundary is redacted once the line is whole, never half by half
        self._carry: dict[str, tuple[int, bytes]] = {}
        self._carry_lock = threading.Lock()

    async def run(self, argv: list[str] | tuple[str, ...], timeout: float = 30.0) -> CommandResult:
        try:
            res = await self.inner.run(argv, timeout=timeout)
        except TransportError as exc:  # an outage is part of what happened: replay it too
            entry = {"op": "run", "argv": list(argv), "error": exc.kind, "message": exc.message}
            await asyncio.to_thread(self.recorder.add, entry)
            raise
        # redacting a 10k-job squeue takes a second: never on the event loop
        await asyncio.to_thread(self.recorder.add_result, list(argv), res)
        return res

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        data = await self.inner.read_range(path, offset, length)
        await asyncio.to_thread(self._record_read, path, offset, length, data)
        return data

    def _record_read(self, path: str, offset: int, length: int, data: bytes) -> None:
        """Record whole lines only. A read that stops mid-line (more of the file follows) keeps
        its unfinished last line back; the next read of the file starting where this one ended
        is recorded with that line in front (a reader going on from a line start re-reads it
        anyway). Redaction then sees every line whole, across any read boundary."""
        with self._carry_lock:
            end, head = self._carry.pop(path, (-1, b""))
            if end != offset:
                head = b""
            body = head + data
            cut = len(body)
            if length > 0 and len(data) >= length:
                nl = body.rfind(b"\n") + 1  # 0: no line ends here, all of it waits
                if nl < len(body) and len(body) - nl <= CARRY_MAX:
                    cut = nl
                    self._carry[path] = (offset + len(data), body[nl:])
        if cut:
            lo = offset - len(head)
            self.recorder.add(
                {
                    "op": "read",
                    "path": path,
                    "offset": lo,
                    "length": cut,
                    "data": _pack_read(body[:cut]),
                }
            )

    async def stat(self, path: str) -> FileStat:
        st = await self.inner.stat(path)
        self.recorder.add({"op": "stat", "path": path, **_stat_json(st)})
        return st

    async def lstat(self, path: str) -> FileStat:
        lstat = getattr(self.inner, "lstat", None)  # optional in the Transport protocol
        st = await (lstat(path) if lstat is not None else self.inner.stat(path))
        self.recorder.add({"op": "lstat", "path": path, **_stat_json(st)})
        return st

    async def close(self) -> None:
        self.recorder.flush()
        await self.inner.close()


class RecordingModelArtsApi:
    """A :class:`~cockpit.modelarts.api.ModelArtsApi` that answers as ``inner`` does and
    records each call: its name, arguments and redacted wire JSON, or the error it raised (a
    429 or an outage is part of what happened). Called from the source's worker threads; the
    recorder is thread-safe."""

    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        # an in-memory API (the demo) stays on the event loop, as the source would call it
        self.blocking = getattr(inner, "blocking", True)

    def _recorded(self, call: str, *args: Any) -> dict:
        from cockpit.modelarts.api import ModelArtsApiError

        entry: dict[str, Any] = {"op": "call", "call": call, "args": list(args)}
        try:
            data = getattr(self.inner, call)(*args)
        except ModelArtsApiError as exc:
            entry.update(
                error=exc.kind,
                status=exc.status,
                code=exc.code,
                message=exc.message,
                retry_after_s=exc.retry_after_s,
                where=exc.where,
            )
            self.recorder.add(entry)
            raise
        entry["json"] = redact(data)
        self.recorder.add(entry)
        return data

    def list_training_jobs(self, offset: int, limit: int, phases: Sequence[str] = ()) -> dict:
        # an unfiltered listing is recorded as before: (offset, limit)
        extra = [list(phases)] if phases else []
        return self._recorded("list_training_jobs", offset, limit, *extra)

    def show_training_job(self, job_id: str) -> dict:
        return self._recorded("show_training_job", job_id)

    def list_events(self, job_id: str) -> dict:
        return self._recorded("list_events", job_id)

    def list_stages(self, job_id: str) -> dict:
        return self._recorded("list_stages", job_id)

    def logs_preview(self, job_id: str, task_id: str) -> dict:
        return self._recorded("logs_preview", job_id, task_id)

    def list_pools(self) -> dict:
        return self._recorded("list_pools")

    def list_pool_nodes(self, pool_name: str) -> dict:
        return self._recorded("list_pool_nodes", pool_name)

    def flavor_max_available(self, flavor_id: str, pool_id: str) -> dict:
        return self._recorded("flavor_max_available", flavor_id, pool_id)

    def stop_training_job(self, job_id: str) -> dict:
        return self._recorded("stop_training_job", job_id)

    def close(self) -> None:
        self.recorder.flush()
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


def _stat_json(st: FileStat) -> dict[str, Any]:
    return {"size": st.size, "mtime": st.mtime, "uid": st.uid, "gid": st.gid, "mode": st.mode}


def _stat_from(e: dict[str, Any]) -> FileStat:
    return FileStat(int(e["size"]), float(e["mtime"]), e.get("uid"), e.get("gid"), e.get("mode"))


def start_recording(
    directory: Path, sources: list[Any], clock: Callable[[], datetime]
) -> list[str]:
    """Wrap each Slurm source's transport and each ModelArts source's API; returns the names
    of sources not recorded."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            _("--record {dir}: {error}").format(dir=directory, error=exc.strerror or exc)
        ) from None
    recorded, skipped = [], []
    for src in sources:
        if getattr(src, "kind", "") == "slurm" and hasattr(src, "transport"):
            src.transport = RecordingTransport(src.transport, Recorder(directory, src.name, clock))
            recorded.append(
                {
                    "name": src.name,
                    "kind": "slurm",
                    "tz": str(src.tz),
                    "slurmctld_log": src.slurmctld_log,
                    "slurmd_log": src.slurmd_log,
                }
            )
        elif getattr(src, "kind", "") == "modelarts" and hasattr(src, "api"):
            src.api = RecordingModelArtsApi(src.api, Recorder(directory, src.name, clock))
            recorded.append({"name": src.name, "kind": "modelarts"})
        else:
            skipped.append(src.name)
    meta = {"format": FORMAT, "started": clock().isoformat(), "sources": recorded}
    try:
        (directory / META).write_text(json.dumps(meta, indent=1), encoding="utf-8")
    except OSError as exc:
        raise UserError(
            _("--record {dir}: {error}").format(dir=directory, error=exc.strerror or exc)
        ) from None
    return skipped


# ------------------------------------------------------------------ replay

_TIME_OPTIONS = frozenset({"-S", "-E", "--starttime", "--endtime"})


def _timeless(argv: object) -> list[str]:
    """``argv`` with the values of its time options blanked (``-S 2026-12-01T09:00:00``)."""
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return []
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a in _TIME_OPTIONS:
            out[i + 1] = "*"
    for i, a in enumerate(out):
        key, eq, _value = a.partition("=")
        if eq and key in _TIME_OPTIONS:
            out[i] = f"{key}=*"
    return out


_ERRORS: dict[str, type[TransportError]] = {
    "unreachable": ConnectError,
    "auth": AuthError,
    "host_key": HostKeyError,
    "timeout": CommandTimeout,
    "command": CommandNotFound,
}


@dataclass
class Recording:
    """One source's entries, in time order, with the start time of each poll."""

    source: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    times: list[datetime] = field(default_factory=list)
    polls: list[datetime] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path, source: str) -> Recording:
        rec = cls(source)
        try:
            if not path.is_file():
                raise UserError(_("--replay: {path} is not a recording file").format(path=path))
            raw = gzip.decompress(path.read_bytes())
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            # a recording cut by a crash: its last member is incomplete; keep what decoded
            raw = _decompress_members(path)
            if not raw:
                raise UserError(
                    _("--replay: cannot read {path}: {error}").format(path=path, error=exc)
                ) from None
        for line in lines(raw.decode("utf-8", errors="replace")):
            try:
                entry = json.loads(line)
                t = datetime.fromisoformat(entry["t"])
                argv = entry.get("argv", [""]) if entry.get("op") == "run" else [""]
                if t.tzinfo is None or not isinstance(argv, list) or not argv:
                    continue  # a damaged line is skipped, the rest still plays
                if entry.get("op") == "call" and not (
                    isinstance(entry.get("call"), str)
                    and isinstance(entry.get("args"), list)
                    and ("error" in entry or isinstance(entry.get("json"), dict))
                ):
                    continue
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            rec.entries.append(entry)
            rec.times.append(t)
            if _starts_poll(entry):
                rec.polls.append(t)
        return rec

    def window_end(self, at: datetime) -> datetime:
        """The end of this source's own poll standing at ``at``: just before its next poll
        began, or everything after its last one. With several sources the replay clock steps
        through all their polls; a source keeps answering from its own latest poll (whose later
        calls may come after another source's poll began). Before this source's first poll (the
        replay's poll 1 was another source's, a few milliseconds earlier) it answers from its
        first poll: live, it had not been asked yet, it was not down."""
        if not self.polls:
            return at
        i = max(0, bisect.bisect_right(self.polls, at) - 1)
        if i + 1 < len(self.polls):
            return max(at, self.polls[i + 1] - timedelta(microseconds=1))
        return max(at, self.times[-1]) if self.times else at

    def poll_clock(self, clock: ReplayClock) -> Callable[[], datetime]:
        """This source's clock in a replay: the start of its own latest poll at the replay's
        time, so its snapshot is taken when the live one was, wherever the replay stands
        between its polls (another source's poll); its first poll's start before that."""

        def now() -> datetime:
            at = clock()
            if not self.polls:
                return at
            return self.polls[max(0, bisect.bisect_right(self.polls, at) - 1)]

        return now

    def latest(
        self, clock: ReplayClock, match: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any] | None:
        """The latest entry ``match`` accepts up to the end of this source's poll at ``clock``."""
        end = bisect.bisect_right(self.times, self.window_end(clock.end()))
        for i in range(end - 1, -1, -1):
            if match(self.entries[i]):
                return self.entries[i]
        return None


def _decompress_members(path: Path) -> bytes:
    out = bytearray()
    d = None
    data = path.read_bytes()
    while data:
        d = gzip.zlib.decompressobj(16 + gzip.zlib.MAX_WBITS)
        try:
            out += d.decompress(data)
        except gzip.zlib.error:
            break
        data = d.unused_data
        if not d.eof:
            break
    return bytes(out)


class ReplayClock:
    """The time the replay stands at: one recorded poll's start (what the status line and the
    title show). Callable (a clock). Commands are answered from everything recorded before
    :meth:`window_end`, so the poll's later commands (sacct a second after squeue) count."""

    def __init__(self, polls: list[datetime]) -> None:
        self.polls = sorted(set(polls))
        if not self.polls:
            raise UserError(_("--replay: the recording holds no poll"))
        self.index = 0

    def __call__(self) -> datetime:
        return self.polls[self.index]

    def end(self) -> datetime:
        return self.window_end(self.index)

    def window_end(self, i: int) -> datetime:
        """Just before poll ``i + 1`` began (or a minute after the last poll)."""
        if i + 1 < len(self.polls):
            return self.polls[i + 1] - timedelta(microseconds=1)
        return self.polls[i] + timedelta(minutes=1)

    def step(self, n: int) -> bool:
        """Move ``n`` polls (clamped); False when already at that end."""
        new = max(0, min(len(self.polls) - 1, self.index + n))
        moved, self.index = new != self.index, new
        return moved

    def label(self) -> str:
        at = self.polls[self.index].astimezone()
        return f"REPLAY poll {self.index + 1}/{len(self.polls)} at {at:%Y-%m-%d %H:%M:%S}"


class ReplayTransport:
    """Answers each command with the latest recording of it before the replay clock."""

    def __init__(self, rec: Recording, clock: ReplayClock) -> None:
        self.rec, self.clock = rec, clock
        self.name = f"replay {rec.source}"

    def _latest(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        return self.rec.latest(self.clock, match)

    async def run(self, argv: list[str] | tuple[str, ...], timeout: float = 30.0) -> CommandResult:
        want = list(argv)
        e = self._latest(lambda x: x.get("op") == "run" and x.get("argv") == want)
        if e is None and _timeless(want) != want:
            # a command whose argv carries a time (the backfill's sacct -S/-E) was recorded with
            # that poll's times: the same command with other times. Never another job's id.
            shape = _timeless(want)
            e = self._latest(lambda x: x.get("op") == "run" and _timeless(x.get("argv")) == shape)
        if (
            e is None
            and want[:1] == ["squeue"]
            and "--only-job-state" not in want
            and not _long_format(want)
        ):
            # recorded by a cockpit that asked other columns (before %b, or without %s): the
            # parser tells the layouts apart by their column count
            e = self._latest(
                lambda x: (
                    x.get("op") == "run"
                    and (x.get("argv") or [""])[0] == "squeue"
                    and "--only-job-state" not in x.get("argv", ())
                    and not _long_format(x.get("argv", ()))
                )
            )
        if e is None:
            msg = f"replay: {argv[0] if argv else '?'} was not recorded before this poll\n"
            return CommandResult(tuple(argv), b"", msg.encode(), 1)
        if "error" in e:
            raise _ERRORS.get(e["error"], ConnectError)(e.get("message", ""), where=self.name)
        return CommandResult(tuple(argv), _unpack(e["out"]), _unpack(e["err"]), int(e["rc"]))

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        # any recorded read of this file that covers the range (the viewer reads in chunks)
        def covers(x: dict[str, Any]) -> bool:
            if x.get("op") != "read" or x.get("path") != path:
                return False
            data_len = len(_unpack(x["data"]))
            return x["offset"] <= offset < x["offset"] + max(data_len, 1)

        e = self._latest(covers)
        if e is None:
            raise RemoteFileError(f"{path}: not in the recording at this time", where=path)
        data = _unpack(e["data"])
        start = offset - e["offset"]
        return data[start : start + length]

    async def stat(self, path: str) -> FileStat:
        return self._stat("stat", path)

    async def lstat(self, path: str) -> FileStat:
        return self._stat("lstat", path)

    def _stat(self, op: str, path: str) -> FileStat:
        e = self._latest(lambda x: x.get("op") == op and x.get("path") == path)
        if e is None:
            raise RemoteFileError(f"{path}: not in the recording at this time", where=path)
        return _stat_from(e)

    async def close(self) -> None:
        return None


class ReplayModelArtsApi:
    """Answers each ModelArts call with the latest recording of that call (same name, same
    arguments) in its source's poll at the replay clock; a call never recorded raises a
    ``command`` error saying so (never another job's answer). Answers from memory."""

    blocking = False

    def __init__(self, rec: Recording, clock: ReplayClock) -> None:
        self.rec, self.clock = rec, clock

    def _answer(self, call: str, *args: Any) -> dict:
        import copy

        from cockpit.modelarts.api import ModelArtsApiError

        want = list(args)
        e = self.rec.latest(
            self.clock,
            lambda x: x.get("op") == "call" and x.get("call") == call and x.get("args") == want,
        )
        if e is None:
            shown = ", ".join(str(a) for a in args)
            raise ModelArtsApiError(
                "command",
                None,
                "",
                f"replay: {call}({shown}) was not recorded before this poll",
                where=f"replay {self.rec.source}",
            )
        if "error" in e:
            status = e.get("status")
            raise ModelArtsApiError(
                str(e["error"]),
                status if isinstance(status, int) else None,
                str(e.get("code") or ""),
                str(e.get("message") or ""),
                e.get("retry_after_s")
                if isinstance(e.get("retry_after_s"), (int, float))
                else None,
                str(e.get("where") or ""),
            )
        return copy.deepcopy(e["json"])  # the parsers get their own copy, as from the wire

    def list_training_jobs(self, offset: int, limit: int, phases: Sequence[str] = ()) -> dict:
        from cockpit.modelarts.api import ModelArtsApiError

        if not phases:
            return self._answer("list_training_jobs", offset, limit)
        try:
            return self._answer("list_training_jobs", offset, limit, list(phases))
        except ModelArtsApiError as exc:
            if exc.kind != "command":
                raise
        # a recording made before the source filtered by phase: the same poll's unfiltered
        # pages, filtered here as the service would
        items: list = []
        page = 0
        while True:
            try:
                got = self._answer("list_training_jobs", page, limit)
            except ModelArtsApiError:
                break
            batch = [i for i in got.get("items") or [] if isinstance(i, dict)]
            items.extend(i for i in batch if (i.get("status") or {}).get("phase") in phases)
            if len(batch) < limit:
                break
            page += 1
        chosen = items[offset * limit : (offset + 1) * limit]
        return {"total": len(items), "count": len(chosen), "offset": offset, "items": chosen}

    def show_training_job(self, job_id: str) -> dict:
        return self._answer("show_training_job", job_id)

    def list_events(self, job_id: str) -> dict:
        return self._answer("list_events", job_id)

    def list_stages(self, job_id: str) -> dict:
        return self._answer("list_stages", job_id)

    def logs_preview(self, job_id: str, task_id: str) -> dict:
        return self._answer("logs_preview", job_id, task_id)

    def list_pools(self) -> dict:
        return self._answer("list_pools")

    def list_pool_nodes(self, pool_name: str) -> dict:
        return self._answer("list_pool_nodes", pool_name)

    def flavor_max_available(self, flavor_id: str, pool_id: str) -> dict:
        return self._answer("flavor_max_available", flavor_id, pool_id)

    def stop_training_job(self, job_id: str) -> dict:
        from cockpit.modelarts.api import ModelArtsApiError

        raise ModelArtsApiError("forbidden", None, "", "a replay does not act on a project")

    def close(self) -> None:
        return None


def replay_sources(directory: Path) -> tuple[list[Any], ReplayClock]:
    """The recorded sources over replay transports and APIs, and the clock they share."""
    from zoneinfo import ZoneInfo

    from cockpit.slurm.source import SlurmSource

    try:
        meta = json.loads((directory / META).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(
            _("--replay {dir}: no {meta} (not a cockpit recording)").format(
                dir=directory, meta=META
            )
        ) from None
    except (OSError, ValueError) as exc:
        raise UserError(
            _("--replay {dir}: unreadable {meta}: {error}").format(
                dir=directory, meta=META, error=exc
            )
        ) from None
    if not isinstance(meta, dict):
        raise UserError(
            _("--replay {dir}: {meta} is not a cockpit recording's").format(
                dir=directory, meta=META
            )
        )
    if meta.get("format") != FORMAT:
        raise UserError(
            _("--replay: recording format {got}, expected {want}").format(
                got=repr(meta.get("format")), want=FORMAT
            )
        )
    recs = []
    listed = meta.get("sources", [])
    if not isinstance(listed, list) or not all(
        isinstance(s, dict) and isinstance(s.get("name"), str) for s in listed
    ):
        raise UserError(
            _("--replay {dir}: {meta} lists no sources it can read").format(
                dir=directory, meta=META
            )
        )
    for s in listed:
        path = _file(directory, s["name"])
        if path.exists():
            recs.append((s, Recording.load(path, s["name"])))
    clock = ReplayClock([t for _, r in recs for t in r.polls])
    sources: list[Any] = []
    for s, rec in recs:
        if s.get("kind") == "modelarts":
            from cockpit.modelarts.source import ModelArtsSource

            ma = ModelArtsSource(
                s["name"],
                ReplayModelArtsApi(rec, clock),
                interval=3600.0,
                clock=rec.poll_clock(clock),
                pool_cache_s=0,  # the pools as last recorded at each step, not a cached copy
            )
            ma.honour_retry_after = False  # a replayed 429 must not block the next step
            sources.append(ma)
            continue
        try:
            tz: Any = ZoneInfo(s.get("tz") or "UTC")
        except (ValueError, KeyError):
            tz = UTC
        src = SlurmSource(
            s["name"],
            ReplayTransport(rec, clock),
            interval=3600.0,  # polls happen when the operator steps, not on a timer
            clock=rec.poll_clock(clock),  # its own poll time, as when it was live
            tz=tz,
            slurmctld_log=s.get("slurmctld_log") or "/var/log/slurm/slurmctld.log",
            slurmd_log=s.get("slurmd_log") or "/var/log/slurm/slurmd.log",
        )
        sources.append(src)
    return sources, clock
