"""First-red-error finder over log bytes (mmap or bytes; never decodes the whole file).

The *first red error* is the first line that carries a root cause, not the loudest or
the last one: the scanner searches a single combined regex of the catalogue's *strong*
patterns (:mod:`cockpit.diagnosis.patterns`) over the raw bytes with ``re.search`` (C
speed, no Python per-line loop), locates the line with ``rfind(b"\\n")`` and counts the
line number with ``bytes.count``. Harmless lines (PMIx notice, missing state file) are
skipped. Only when no strong line exists does it fall back to the first *weak* one (a
bare ``Killed``, a traceback, a generic ``ERROR``).

Input may hold invalid UTF-8, GBK, CRLF, ANSI colour codes and 10 MB lines: matching is
on bytes, and only the hit's line (capped) is decoded for display.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from cockpit.diagnosis.patterns import Pattern, classify, is_harmless, patterns_for
from cockpit.text import MAX_LINE, strip_ansi

Buffer = bytes | bytearray | memoryview | mmap.mmap

MAX_TEXT_BYTES = 64 * 1024  # a line longer than this is shown as a window around its match
_CUT = "…".encode()  # where that window cuts the line
_BEFORE = 256  # bytes of the window before the match: it stays on a terminal's first screen
_ANSI_BYTES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


@dataclass(frozen=True, slots=True)
class ScanHit:
    """One error line: ``line`` 1-based, ``offset`` byte offset of the line start in the buffer
    (plus ``start_offset`` when given), ``text`` decoded with ANSI codes and CR removed."""

    line: int
    offset: int
    text: str
    pattern: str
    label: str
    severity: str
    strong: bool = True
    tier: int = 2


try:  # RE2 is a DFA: one pass over the bytes whatever the number of patterns (grep speed).
    import re2 as _re2
except ImportError:  # pragma: no cover - the stdlib engine is correct but ~100x slower on big logs
    _re2 = None


@lru_cache(maxsize=64)
def _combined(kind: str, strong: bool | None, without: str = ""):  # -> regex with .search
    pats = [p for p in patterns_for(kind, strong) if p.name != without]
    if not pats:
        return None
    src = b"|".join(b"(?:%s)" % p.regex for p in pats)
    if _re2 is not None:
        opts = _re2.Options()
        opts.encoding = _re2.Options.Encoding.LATIN1  # bytes are bytes: invalid UTF-8/GBK safe
        # the budget is a ceiling on the DFA's cache (grown as states are met), not an
        # allocation: past ~160 kB of pattern text 64 MiB ran out, and RE2 fell back to its
        # NFA (minutes on a big log) printing "DFA out of memory" on the terminal
        opts.max_mem = 128 << 20
        try:
            return _re2.compile(b"(?m)" + src, opts)
        except Exception:  # noqa: BLE001 - a pattern RE2 cannot take: use the stdlib engine
            pass
    return re.compile(src, re.MULTILINE)


def decode_line(raw: bytes) -> str:
    """Decode one log line for display: UTF-8, else GB18030 (GBK logs), else UTF-8 with
    replacement; ANSI sequences and CR (CRLF, progress-bar rewrites) removed; never raises."""
    raw = raw.rstrip(b"\r\n")
    if b"\r" in raw:
        raw = raw.rsplit(b"\r", 1)[-1] or raw.replace(b"\r", b"")
    if b"\x1b" in raw:
        raw = _ANSI_BYTES.sub(b"", raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = raw.decode("gb18030")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
    return strip_ansi(text) if "\x1b" in text else text


_CHUNK = 16 * 1024 * 1024


def count_newlines(buf: Buffer, start: int, end: int) -> int:
    """Newlines in buf[start:end]; mmap has no ``count``, so count slices of 16 MiB."""
    if isinstance(buf, bytes | bytearray):
        return buf.count(b"\n", start, end)
    total = 0
    for a in range(start, end, _CHUNK):
        total += buf[a : min(a + _CHUNK, end)].count(b"\n")
    return total


def _line_bounds(buf: Buffer, start: int, end: int) -> tuple[int, int]:
    """(line start, line end without the newline) around the match [start, end)."""
    ls = buf.rfind(b"\n", 0, start) + 1
    le = buf.find(b"\n", max(end - 1, ls))
    if le < 0:
        le = len(buf)
    return ls, le


def _line_bytes(buf: Buffer, ls: int, le: int, match_start: int) -> bytes:
    if le - ls <= MAX_TEXT_BYTES:
        return bytes(buf[ls:le])
    # 10 MB lines: a window of a displayed line's length (MAX_LINE) around the match, marked
    # where it cuts the line (a match shown from the middle of a line must not read as the
    # line's start); JSON and the report then carry 4 KB, not a megabyte, of a 2 GiB line
    start = max(ls, match_start - _BEFORE)
    end = min(le, start + MAX_LINE)
    return (_CUT if start > ls else b"") + bytes(buf[start:end]) + (_CUT if end < le else b"")


def _hit(
    buf: Buffer,
    ls: int,
    le: int,
    mstart: int,
    line_no: int,
    kind: str,
    base: int,
    fallback: Pattern | None = None,
) -> ScanHit | None:
    raw = _line_bytes(buf, ls, le, mstart)
    if is_harmless(raw):
        return None
    p = classify(raw, kind) or fallback
    if p is None:
        return None
    return ScanHit(
        line=line_no,
        offset=base + ls,
        text=decode_line(raw),
        pattern=p.name,
        label=p.label,
        severity=p.severity,
        strong=p.strong,
        tier=p.tier,
    )


def _search(
    buf: Buffer, rx, kind: str, start_offset: int, start_line: int, base: int
) -> Iterator[ScanHit]:
    pos, line_no, counted_to = start_offset, start_line, start_offset
    n = len(buf)
    while pos <= n:
        m = rx.search(buf, pos)
        if m is None:
            return
        ls, le = _line_bounds(buf, m.start(), m.end())
        line_no += count_newlines(buf, counted_to, ls)
        counted_to = ls
        hit = _hit(buf, ls, le, m.start(), line_no, kind, base)
        if hit is not None:
            yield hit
        pos = le + 1


def first_error(buf: Buffer, *, kind: str = "app") -> ScanHit | None:
    """The first line carrying a root cause, or None.

    ``buf``: bytes, bytearray, memoryview or mmap of a whole log (or a range of it: line
    numbers and offsets are then relative to the range). ``kind``: app | stdout | stderr |
    slurmctld | slurmd | journal | events | startup | command (daemon kinds skip the
    generic ``error`` fallback). Strong patterns first; weak ones only if none matched.
    """
    if isinstance(buf, memoryview):
        buf = buf.tobytes() if not buf.contiguous else buf
    if len(buf) == 0:
        return None
    for strong in (True, False):
        rx = _combined(kind, strong)
        if rx is None:
            continue
        if not strong:
            return _first_weak(buf, rx, kind)
        for hit in _search(buf, rx, kind, 0, 1, 0):
            return _cause(buf, hit, kind)
    return None


def _first_weak(buf: Buffer, rx, kind: str) -> ScanHit | None:
    """The weak line :func:`first_error` cites when no line is strong: the first, past lines
    whose only error word is their logger's prefix, resolved by :func:`_raised`. Only lines
    judged within ``_WEAK_TAIL`` bytes of the first are passed (the bytes a chunked scan keeps,
    so a whole read and a chunked one cite the same line); past them, or past
    ``_PREFIX_SKIPS`` lines, the first."""
    # as _search, but a line no pattern other than the generic one matches is judged without
    # classify's pass over every pattern (2 ms a line, 0.3-2 s for 200 frames)
    specific = _combined(kind, None, "generic_error")
    first: ScanHit | None = None
    limit, cut, n = 0, False, 0
    pos, line_no, counted_to = 0, 1, 0
    while pos <= len(buf):
        m = rx.search(buf, pos)
        if m is None:
            break
        ls, le = _line_bounds(buf, m.start(), m.end())
        line_no += count_newlines(buf, counted_to, ls)
        counted_to, pos = ls, le + 1
        if first is not None and (
            n >= _PREFIX_SKIPS or (cut and not _judged_within(buf, ls, limit))
        ):
            break
        raw = _line_bytes(buf, ls, le, m.start())
        if (
            first is not None
            and specific is not None
            and not is_harmless(raw)
            and specific.search(raw) is None  # classify would name it generic_error
            and _logger_prefix_word(
                buf, ScanHit(line_no, ls, decode_line(raw), "generic_error", "", ""), first.offset
            )
        ):
            n += 1
            continue
        hit = _hit(buf, ls, le, m.start(), line_no, kind, 0)
        if hit is None:
            continue
        n += 1
        if first is None:
            first, limit = hit, hit.offset + _WEAK_TAIL
            cut = len(buf) >= limit
        if _logger_prefix_word(buf, hit, first.offset):
            continue
        return _raised(buf, hit, kind)
    return _raised(buf, first, kind) if first is not None else None


def _judged_within(buf: Buffer, offset: int, limit: int) -> bool:
    """The line at ``offset`` and the next one (its prefix is compared with it) end before
    ``limit``."""
    end = buf.find(b"\n", offset, limit)
    return end >= 0 and buf.find(b"\n", end + 1, limit) >= 0


# A logger that puts the level in every line's prefix ("(VllmWorker rank=1 pid=97934) ERROR
# 04-01 08:04:31 [multiproc_executor.py:383]     work = group.broadcast(…)") makes each
# traceback frame a generic error line: such a line, whose only error word is in the prefix
# the next line repeats (its numbers aside), yields to the first weak line with words of its own
# (batch 27: torch_npu's HCCL summary under vLLM's prefix). Never silent: with none, the first.
_PREFIX_SKIPS = 200
# bytes kept from the first weak line of a chunked scan: twice a traceback's lookahead
_WEAK_TAIL = 128 * 1024
_GENERIC_WORD = re.compile(r"(?:\b|\x1b\[[0-9;]*m)(?:error|ERROR|Error|failed|Failed|FAILED)\b")
_NUMERAL = re.compile(r"\d")


def _logger_prefix_word(buf: Buffer, hit: ScanHit, since: int = -1) -> bool:
    """The line's only error words are its logger's prefix, which the next line repeats, or
    the line before it when that starts at or after ``since`` (the last frame of a run is
    followed by another logger's line)."""
    if hit.pattern != "generic_error":
        return False
    words = [m.end() for m in _GENERIC_WORD.finditer(hit.text)]
    if not words or words[0] > 120:
        return False
    others = []
    end = buf.find(b"\n", hit.offset)
    if end >= 0:
        others.append(bytes(buf[end + 1 : end + 1 + 512]).split(b"\n", 1)[0])
    if 0 <= since < hit.offset:
        start = max(since, buf.rfind(b"\n", since, hit.offset - 1) + 1)
        others.append(bytes(buf[start : min(hit.offset - 1, start + 512)]))
    a = _NUMERAL.sub("0", hit.text)
    for other in others:
        b = _NUMERAL.sub("0", decode_line(other))
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        # the shared prefix runs past every error word of the line and holds a number (a time,
        # a pid) after the first: a log prefix ("[ERROR] 2021-05-11 … db_stat failed" has its own)
        if k >= words[-1] + 8 and "0" in a[words[0] : k]:
            return True
    return False


# A Python traceback's header only announces the exception that ends it: when no line names
# a cause, the exception's own line ("ValueError: bad learning_rate_strategy") is the first
# red error, not "Traceback (most recent call last):" nor a frame of it.
_TRACEBACK_HEADER = "Traceback (most recent call last)"
_TRACEBACK_LOOKAHEAD = 64 * 1024  # bytes after the header searched for the exception line


# torchrun's summary of a dead child ("...errors.ChildFailedError:", also an operator's title
# quoting it above the log) only announces the child's own exception, like a traceback header
_LAUNCHER_SUMMARY = re.compile(r"multiprocessing\.errors\.ChildFailedError")


# IPython/Jupyter prints the exception's class on the header's line ("MoxFileRespException
#        Traceback (most recent call last)"): a pattern that knows the class claims the header
# first, and it still only announces the exception line at the traceback's end (batch 31)
_IPYTHON_HEADER = re.compile(r"^[ \t]*(?:\w+\.)*(\w+)[ \t]{2,}Traceback \(most recent call last\)")


def _announces_exception(hit: ScanHit) -> bool:
    """A weak line whose exception line, within the lookahead after it, is the first red one."""
    if hit.pattern == "traceback" and _TRACEBACK_HEADER in hit.text:
        return True
    return _LAUNCHER_SUMMARY.search(hit.text) is not None


# torch_npu's own summary of a failed CANN call (its "ERR02200 DIST call hccl api failed",
# "HCCL function error: …, error code is 15", the catalogue's "NPU function error: …") only
# carries CANN's message, printed on the lines under it: the first of those lines that says
# something is the cause's line, not the summary nor CANN's content-free "EE9999: Inner Error!"
# header (batch 27: the commonest Ascend first-line shape; cases 248, 306 had it with a code
# that names a cause)
_MESSENGERS = frozenset({"pta_error", "pta_hccl_error"})
_MESSENGER_LINES = 6
_CONTENT_FREE = re.compile(
    r"\bE[0-9A-Z]\d{4}:?[ \t]*(?:\[PID: ?\d+\][ \t]*)?(?:[\d.:-]+[ \t]*)?"
    r"(?:Inner Error\b[^\n]*)?$"
)


def _below(
    buf: Buffer, hit: ScanHit, kind: str, strong: bool | None, lookahead: int = 0
) -> Iterator[ScanHit]:
    """The hits of the lines after ``hit``'s, within ``lookahead`` bytes (default: NCCL's),
    first to last: where a summary or announcing line looks for the line it stands for."""
    start = buf.find(b"\n", hit.offset)
    if start < 0:
        return
    window = bytes(buf[start + 1 : start + 1 + (lookahead or _NCCL_LOOKAHEAD)])
    yield from _search(window, _combined(kind, strong), kind, 0, hit.line + 1, start + 1)


def _is_messenger(hit: ScanHit) -> bool:
    return hit.pattern in _MESSENGERS or hit.pattern.startswith("catalogue_torch_npu_")


def _messenger_cause(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit | None:
    """The line under a torch_npu summary that says what failed, with the summary's label when
    its own is only generic; None when none does within a few lines."""
    for h in _below(buf, hit, kind, False):
        if h.line - hit.line > _MESSENGER_LINES:
            return None
        if _is_messenger(h) or _CONTENT_FREE.search(h.text):
            continue
        if _announces_exception(h) or _logger_prefix_word(buf, h, hit.offset):
            continue  # another rank's traceback header, a frame under a logger's prefix
        if h.label in _GENERAL and hit.label not in _GENERAL:
            # the line is cited for its words, the summary's kind and pattern name it (the
            # Ascend rule reads the summary's family)
            return replace(h, pattern=hit.pattern, label=hit.label, severity=hit.severity)
        return h
    return None


def _raised(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit:
    """The first weak hit, the exception line ending the traceback it is the header of, or the
    CANN message under a torch_npu summary."""
    if _is_messenger(hit):
        return _messenger_cause(buf, hit, kind) or hit
    if _LAUNCHER_HANDLER.search(hit.text) and not _CHILD_CODE.search(hit.text):
        return _child_code(buf, hit, kind) or hit
    if _IPYTHON_HEADER.match(hit.text):
        return _ipython_exception(buf, hit, kind)
    if not _announces_exception(hit):
        return hit
    start = buf.find(b"\n", hit.offset)
    if start < 0:
        return hit
    window = bytes(buf[start + 1 : start + 1 + _TRACEBACK_LOOKAHEAD])
    return _exception_line(window, start + 1, hit.line + 1, kind) or hit


# DeepSpeed's launcher ("[ERROR] [launch.py:320:sigkill_handler] ['python', …] exits with return
# code = -9") says what killed its child only at the end of a line holding the whole command: a
# terminal or a chat wraps it, or a title quotes only its prefix (batch 30: the "-9" stood alone
# on "] exits with return code = -9" eight lines down). The line with the code is cited.
_LAUNCHER_HANDLER = re.compile(r"launch\.py:\d+:sigkill_handler\]")
_CHILD_CODE = re.compile(r"return code =")
_CHILD_CODE_LINES = 12


def _child_code(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit | None:
    for h in _below(buf, hit, kind, False):
        if h.line - hit.line > _CHILD_CODE_LINES:
            return None
        if _CHILD_CODE.search(h.text):
            return h
    return None


# the exception line's shape, whichever weak pattern claimed it first ("RuntimeError: DataLoader
# worker (pid 42) is killed by signal: Killed." is the bare "Killed" pattern's, and names a cause)
_PY_EXCEPTION_LINE = re.compile(r"^[ \t]*(?:\w+\.)*\w*(?:Error|Exception|Interrupt): ")


def _exception_line(window: bytes, base: int, line: int, kind: str) -> ScanHit | None:
    for h in _search(window, _combined(kind, False), kind, 0, line, base):
        if h.pattern == "traceback" and _PY_EXCEPTION_LINE.match(h.text):
            # Python's base class ("Exception: expected value at line 1 column 1") is claimed
            # by the bare-word pattern first; it is the program's own exception line all the same
            return replace(h, pattern="py_exception")
        if h.pattern == "py_exception" or _PY_EXCEPTION_LINE.match(h.text):
            return h
    return None


# NCCL reports a CUDA failure as "unhandled cuda error" and names it (often "out of memory")
# a few lines later: that later line is the cause, the NCCL line its messenger.
_UNHANDLED_CUDA = re.compile(r"unhandled cuda error|ncclUnhandledCudaError", re.I)
_NCCL_LOOKAHEAD = 4096  # bytes after an announcing line searched for the cause it announces


# A first strong line that only announces a cause a few lines later: (its label, what its
# text must say (None: anything), the label of the line that is the cause).
# - NCCL's "unhandled cuda error": the CUDA failure it wraps is the cause, NCCL its messenger.
# - A cancel (scancel, time limit) starts the kill of a step; when its processes then survive
#   SIGKILL ("... NOT ENDING WITH SIGNALS", Kill task failed) the node is the fault.
# - A Volcano vcjob says only that its gang is unschedulable; the PodGroup's own event a line
#   or two later says why (the queue's quota).
# - Open MPI's launcher help box ("ORTE was unable to reliably start one or more daemons")
#   says the launch failed; a daemon's socket error under it ("Connection refused") says why.
_ANNOUNCES: tuple[tuple[str, re.Pattern[str] | None, str], ...] = (
    ("nccl_communication_error", _UNHANDLED_CUDA, "gpu_out_of_memory"),
    ("cancelled_by_user", None, "node_drain_kill_task_failed"),
    (
        "queued_insufficient_resources",
        re.compile(r"gang unschedulable|pod group is not ready", re.I),
        "queued_quota_limit",
    ),
    ("mpi_launch_failed", None, "mpi_network_error"),
    # PyTorch could not open a shared-memory segment because the process had no descriptor
    # left: the EMFILE that follows is the cause, not a full /dev/shm
    (
        "shared_memory_exhausted",
        re.compile(r"unable to open shared memory object"),
        "open_files_limit",
    ),
    # CUDA's error 802 ("system not yet initialized") says only that the GPUs are not ready;
    # NVIDIA Fabric Manager's refusal of the driver's release, a few lines later, says why
    # (a journal pasted under the job's error)
    (
        "gpu_not_available",
        re.compile(r"system not yet initialized|SystemNotReady|SYSTEM_NOT_READY"),
        "cuda_driver_mismatch",
    ),
)
# labels whose first strong line may only announce a cause a few lines later (the chunked
# scan keeps their piece's tail until the lookahead is read)
_ANNOUNCERS = frozenset(label for label, _, _ in _ANNOUNCES)


# PyTorch's summary of a failed NCCL call ("NCCL error in: …ProcessGroupNCCL.cpp:1727, invalid
# usage", "NCCL error: unhandled system error") names only NCCL's error class; NCCL's own
# message follows a few lines later under "Last error:" ("Duplicate GPU detected : rank 3 and
# rank 0 both on CUDA device f000", "socketStartConnect: Connect to … failed : No route to
# host"): that line is the cause, whatever its words.
_NCCL_SUMMARY = re.compile(r"NCCL error(?: in)?: ")
_LAST_ERROR = re.compile(rb"Last error:[ \t]*\r?$")
_LAST_ERROR_WITHIN = 4  # lines after the summary ("ncclInvalidUsage: …" comes between)
# a line NCCL's message is not: an empty "Last error:" is followed by PyTorch's own frames
_NOT_NCCL_MESSAGE = re.compile(r"^\s*(?:$|Exception raised from )")
# labels too general to replace NCCL's own (a socket's "No route to host" inside NCCL is
# NCCL's transport failing, the collective's domain)
_GENERAL = frozenset({"mpi_network_error", "application_error", "unrecognised_failure"})


def _nccl_last_error(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit | None:
    start = buf.find(b"\n", hit.offset)
    if start < 0:
        return None
    lines = bytes(buf[start + 1 : start + 1 + _NCCL_LOOKAHEAD]).split(b"\n")
    offset = start + 1
    for i, raw in enumerate(lines[: _LAST_ERROR_WITHIN + 1]):
        offset += len(raw) + 1
        if not _LAST_ERROR.search(raw) or i + 1 >= len(lines):
            continue
        nxt = lines[i + 1]
        text = decode_line(nxt)
        if _NOT_NCCL_MESSAGE.match(text) or is_harmless(nxt):
            return None
        p = classify(nxt, kind)
        own = p is not None and p.strong and p.label not in _GENERAL
        return ScanHit(
            line=hit.line + i + 2,
            offset=offset,
            text=text,
            pattern=p.name if own and p is not None else "nccl_last_error",
            label=p.label if own and p is not None else hit.label,
            severity=p.severity if own and p is not None else hit.severity,
            strong=True,
            tier=hit.tier,
        )
    return None


# A Slurm client's summary of a failure it has just said in its own words on the lines above
# ("srun: error: fwd_tree_thread: can't find address for host n1", then "srun: error:
# Application launch failed: Can't find an address"; "sbatch: error: QOSGrpGRES", then
# "sbatch: error: Batch job submission failed: …"): a known summary must not outrank the
# unknown line that carries the cause (batches 15-25: the commonest first-line miss). The
# first line of that unbroken run of the same program's error lines is the cause's line; the
# summary keeps naming the cause when that line's words are in no pattern.
# Only umbrella summaries, whose own words name a class of refusal, not the reason: a summary
# carrying Slurm's specific error ("Node count specification invalid", "I/O error writing
# script") is the cause's line itself, whatever the plugin lines above it say.
_CLIENT_SUMMARY = re.compile(
    r"\b(\w+): error: (?:Application launch failed"
    r"|(?:Batch job submission|Job submit/allocate|Unable to allocate resources)(?: failed)?: "
    r"Job violates accounting/QOS policy)"
)
# A Slurm daemon's umbrella lines for a plugin it could not set up, at the end of the lines
# saying why ("Couldn't find the specified plugin name for cgroup/v2 looking at all files",
# "cannot find cgroup plugin for cgroup/v2", then "Unable to initialize cgroup plugin",
# "slurmd initialization failed"): the same rule, the run being the daemon log's error lines
# with the same prefix (a docker compose service name, "slurmd: ") up to their timestamps.
_DAEMON_SUMMARY = re.compile(
    r"\berror: (?:Unable to initialize \w+ plugin|cannot create \w+ context for \S+"
    r"|slurmd initialization failed)"
)
# The step daemon's unbroken run of error lines is one launch: slurmstepd says why first and
# what it could then not do after ("task/cgroup: hwloc_get_obj_below_by_type() failing" above
# "task/cgroup: task[0] unable to set taskset '0x0'", batch 30), so a known line of the run
# cites the run's first line, as an umbrella summary does. A cancel's or preemption's own line
# is its fact, whatever the step said before it.
_STEP_ERROR = re.compile(r"\bslurmstepd(?:-[\w.-]+)?: (?:\[[\d.]+\] )?(?=error: )")
_OWN_FACT = frozenset({"time_limit", "cancelled_by_user", "preempted", "deadline_reached"})
_SUMMARY_LOOKBACK = 4  # lines of the run above the summary looked at
_BACK_BYTES = 4096  # the bytes before a piece kept for a summary's run (a chunked scan)
_DIGITS = re.compile(rb"[0-9]+")


def _summary_run(hit: ScanHit) -> re.Pattern[bytes] | None:
    """What each line of the run ending at an umbrella summary starts with, or None."""
    m = _CLIENT_SUMMARY.search(hit.text)
    if m is not None:
        return re.compile(rb"\b" + re.escape(m.group(1).encode()) + rb": (?:error|fatal): ")
    m = _DAEMON_SUMMARY.search(hit.text)
    at = m.start() if m is not None else None
    if at is None and hit.label not in _OWN_FACT:
        step = _STEP_ERROR.search(hit.text)
        at = step.end() if step is not None else None
    if at is None:
        return None
    # the same prefix, its numbers (a timestamp's) free
    head = _DIGITS.split(hit.text[:at].encode())
    return re.compile(rb"^" + rb"[0-9]+".join(re.escape(h) for h in head) + rb"error: ")


def _run_start(buf: Buffer, hit: ScanHit) -> ScanHit:
    """The first of the unbroken run of ``<program>: error:`` lines ending at a summary hit."""
    own = _summary_run(hit)
    if own is None or hit.offset <= 0:
        return hit
    ls, line, best = hit.offset, hit.line, None
    for _ in range(_SUMMARY_LOOKBACK):
        if ls <= 0:
            break
        prev = buf.rfind(b"\n", 0, ls - 1) + 1
        raw = bytes(buf[prev : ls - 1])
        if not own.search(raw) or is_harmless(raw):
            break
        ls, line = prev, line - 1
        best = (ls, line, raw)
    if best is None:
        return hit
    ls, line, raw = best
    return replace(hit, line=line, offset=ls, text=decode_line(raw))


def _ipython_exception(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit:
    """The line naming the header's exception class ("NoSuchKey: An error occurred …") that
    ends the IPython traceback whose header ``hit`` is ("NoSuchKey      Traceback …"); else
    the header (a paste cut after it)."""
    m = _IPYTHON_HEADER.match(hit.text)
    if m is None:
        return hit
    own = re.compile(r"^[ \t]*(?:\w+\.)*" + re.escape(m.group(1)) + r": ")
    for h in _below(buf, hit, kind, None, _TRACEBACK_LOOKAHEAD):
        if own.match(h.text):
            return h
    return hit


# A Python warning ("…/joblib/_multiprocessing_helpers.py:46: UserWarning: [Errno 28] No space
# left on device.  joblib will operate in serial mode") is printed and the program goes on: when
# an exception with the same error follows, that exception is what failed, and is cited.
_PY_WARNING = re.compile(r"\.py:\d+: \w*Warning: ")
_ERRNO = re.compile(r"\[Errno \d+\]")
# ENOSPC from creating a POSIX semaphore (multiprocessing's SemLock, joblib's probe of it) is
# /dev/shm full - 64 MB in a container by default - not a disk (batch 30; cpython#93253
# reproduces it with docker run --shm-size=1m)
_SEMAPHORE = re.compile(rb"\bSemLock\b|\bsem_open\b|joblib will operate in serial mode")
_SEMAPHORE_BACK = 512  # bytes before the ENOSPC line: the traceback's last frame


# A pending reason quoted as text says a job waits; a failure quoted later in the same paste
# (slurmstepd's "execve(): …/slurm_script: No such file or directory" two comments after "the
# job was pending because of ReqNodeNotAvail", batch 30) says a job ran and failed: the
# failure is the report's cause, the wait a side attempt (a node asked by name while it was out).
_QUOTED_PENDING = "pending_reason_text_"


def _failure_after(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit | None:
    for h in _below(buf, hit, kind, True):
        if h.severity == "critical":
            return h
    return None


def _exception_after_warning(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit | None:
    errno = _ERRNO.search(hit.text)
    for h in _below(buf, hit, kind, True):
        if not _PY_EXCEPTION_LINE.match(h.text):
            continue
        if h.label == hit.label or (errno is not None and errno.group(0) in h.text):
            return h
    return None


def _looks_back(hit: ScanHit) -> bool:
    return hit.label == "disk_full" or _summary_run(hit) is not None


def _in_shared_memory(buf: Buffer, hit: ScanHit) -> ScanHit:
    if hit.label != "disk_full":
        return hit
    end = buf.find(b"\n", hit.offset)
    near = bytes(buf[max(0, hit.offset - _SEMAPHORE_BACK) : end if end >= 0 else len(buf)])
    if not _SEMAPHORE.search(near):
        return hit
    return replace(hit, label="shared_memory_exhausted", pattern="semaphore_enospc")


def _looks_ahead(hit: ScanHit) -> bool:
    """Whether the line :func:`_cause` cites for ``hit`` may come after it (within
    ``_NCCL_LOOKAHEAD`` bytes): the chunked scan keeps the bytes after such a hit."""
    return (
        hit.label in _ANNOUNCERS
        or hit.pattern.startswith(_QUOTED_PENDING)
        or _PY_WARNING.search(hit.text) is not None
    )


def _cause(buf: Buffer, hit: ScanHit, kind: str) -> ScanHit:
    """The first strong hit, or the line after it (within the lookahead) that it only
    announced, or the first line of its program's run of error lines that it sums up."""
    if _PY_WARNING.search(hit.text):
        hit = _exception_after_warning(buf, hit, kind) or hit
    if hit.pattern.startswith(_QUOTED_PENDING):
        hit = _failure_after(buf, hit, kind) or hit
    hit = _in_shared_memory(buf, hit)
    if _IPYTHON_HEADER.match(hit.text):
        return _ipython_exception(buf, hit, kind)
    if hit.label not in _ANNOUNCERS and _summary_run(hit) is not None:
        return _run_start(buf, hit)
    if hit.label == "nccl_communication_error" and _NCCL_SUMMARY.search(hit.text):
        last = _nccl_last_error(buf, hit, kind)
        if last is not None:
            return last
    for label, says, cause in _ANNOUNCES:
        if hit.label != label or (says is not None and not says.search(hit.text)):
            continue
        for h in _below(buf, hit, kind, True):
            if h.label == cause:
                return h
        return hit
    return hit


def past_ipython_header(buf: Buffer, hit: ScanHit, *, kind: str = "app") -> ScanHit:
    """The exception line ending the IPython traceback whose header ``hit`` is (a family's
    rule cites its family's first line, which a Jupyter paste makes the header); else the hit."""
    return _ipython_exception(buf, hit, kind)


def announced_cause(buf: Buffer, hit: ScanHit, *, kind: str = "app") -> ScanHit:
    """The line a strong hit of :func:`iter_errors` only announces (NCCL's "Last error:"
    message under PyTorch's summary, …), as :func:`first_error` resolves it; else the hit."""
    return _cause(buf, hit, kind)


def iter_errors(
    buf: Buffer, *, kind: str = "app", start_offset: int = 0, start_line: int = 1
) -> Iterator[ScanHit]:
    """Every error line (strong and weak) from ``start_offset`` on, lazily, in file order.

    ``start_offset`` must be a line start and ``start_line`` its 1-based number (the log
    viewer resumes from its cursor). Offsets are absolute in ``buf``.
    """
    rx = _combined(kind, None)
    if rx is None or len(buf) == 0:
        return iter(())
    return _search(buf, rx, kind, start_offset, start_line, 0)


def guess_kind(name: str) -> str:
    """Log kind from a file name: slurmctld / slurmd (daemon logs) or app."""
    base = name.rsplit("/", 1)[-1].lower()
    if "slurmctld" in base:
        return "slurmctld"
    if "slurmd" in base and "journal" not in base:
        return "slurmd"
    return "app"
