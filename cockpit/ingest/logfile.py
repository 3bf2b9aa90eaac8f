"""A log file or pipe an operator has -> its first red error / every error line.

Reads the file in pieces (memory flat in file size) and hands them to the pure scanner,
:mod:`cockpit.diagnosis.logscan`, which finds the same lines it finds in one buffer.
``cockpit scan-log`` and the benchmarks use it; the log viewer reads through its own
reader (local or remote) and scans buffers.
"""

from __future__ import annotations

import fcntl
import os
import select
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from cockpit.diagnosis.logscan import (
    ScanHit,
    first_error,
    guess_kind,
    iter_errors,
)
from cockpit.diagnosis.logscan_pieces import first_error_in_pieces, iter_errors_in_pieces
from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.ingest.textstream import (
    _read_up_to,
    decompressed,
    looks_binary,
    unread_compression,
    utf8_stream,
)
from cockpit.units import human_size

__all__ = [
    "CHUNK",
    "LONG_LINE",
    "ScanHit",
    "first_error",
    "guess_kind",
    "iter_errors",
    "iter_path",
    "open_input",
    "scan_path",
    "scan_stream",
]

CHUNK = 32 << 20  # bytes read at a time by scan_path/iter_path: memory flat in file size
# a line longer than this and than a quarter of the read size is scanned in pieces (each
# piece of it read as a line of its own: rare enough, and the cost of flat memory)
LONG_LINE = 1 << 20


def _chunks(
    fh: BinaryIO, chunk: int = CHUNK, carry: bytes = b""
) -> Iterator[tuple[int, int, bytearray]]:
    """(byte offset, 1-based line number, bytes) pieces of a file or pipe, cut after a newline.

    Plain reads, not mmap: a log truncated while it is scanned (logrotate copytruncate) would
    kill the process with SIGBUS through a mapping, and pipes cannot be mapped at all. Each
    piece is read straight into a bytearray after the previous piece's partial last line
    (``readinto``), and cut by truncation: no copy of the chunk itself. ``carry``: bytes
    already read from ``fh`` (a head looked at before deciding to stream), scanned first.

    Two bytearrays take turns, each resized in place: a piece stays as it was until the piece
    after the next one is read (a consumer may hold the last piece past the end, as
    :func:`scan_stream` does, or the previous one while it reads the next). A fresh 32 MiB
    bytearray per piece made the kernel fault in and zero 1 GiB of new pages for a 1 GiB log:
    1.8-2.5 s of a ~5 s scan against 0.25-0.7 s reading into a kept one.
    """
    base, line = 0, 1
    bufs = [bytearray(), bytearray()]
    turn = 0
    while True:
        k = len(carry)
        buf = bufs[turn]
        if not buf:
            buf = bufs[turn] = bytearray(k + chunk)
        elif len(buf) > k + chunk:
            del buf[k + chunk :]
        else:  # grows by the few bytes the cut left out last time: the pages stay
            buf.extend(bytes(k + chunk - len(buf)))
        buf[:k] = carry
        with memoryview(buf) as mv, mv[k:] as dest:
            n = fh.readinto(dest)
        del buf[k + (n or 0) :]
        if not n:
            if buf:
                yield base, line, buf
            return
        cut = buf.rfind(b"\n") + 1
        if len(buf) - cut > max(chunk // 4, LONG_LINE):
            # a long line (a 2 GiB line, a progress bar never ended) is not carried whole
            # into the next piece: this piece ends inside it and the next goes on with it,
            # so memory stays that of normal lines (holding the line whole took 4x); the
            # scanner reads every piece, and a line cut so is one line to it
            cut = len(buf)
        elif cut == 0:
            carry = bytes(buf)  # a short read (a pipe) inside a line: read on to its end
            continue
        carry = bytes(buf[cut:])
        del buf[cut:]
        yield base, line, buf
        turn ^= 1
        base += len(buf)
        line += buf.count(b"\n")


_NOT_A_FILE = (
    (stat.S_ISDIR, "a folder, not a file"),
    (stat.S_ISCHR, "a device, not a file"),
    (stat.S_ISBLK, "a device, not a file"),
    (stat.S_ISSOCK, "a socket, not a file"),
)


FIFO_WRITER_WAIT_MS = 3000  # how long a named pipe's writer may take to open its end


def open_input(path: str, folder_ok: str = "") -> BinaryIO:
    """``path`` opened for reading, refused at once (UserError, one line) when no end could be
    read: a device (``/dev/zero`` never ends), a socket, a folder (``folder_ok`` says what
    takes one instead). A named pipe is opened without waiting for a writer: with none it
    reads as empty instead of blocking forever; a pipe with a writer (``<(zcat x.gz)``)
    reads as usual. Raises OSError when it cannot be opened."""
    st = os.stat(path)
    what = next((w for test, w in _NOT_A_FILE if test(st.st_mode)), "")
    if what:
        hint = f" ({folder_ok})" if folder_ok and stat.S_ISDIR(st.st_mode) else ""
        raise UserError(
            _("{path}: {what}{hint}; give a log file, or - to read standard input").format(
                path=path, what=what, hint=hint
            )
        )
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            # a writer still starting (the zcat of `<(zcat x.gz)`, a thread) gets a moment to
            # open its end: read before it does, the pipe is at its end and the writer then
            # waits for a reader forever; none within the moment reads as empty
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP)
            poller.poll(FIFO_WRITER_WAIT_MS)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe: blocking reads from here on
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _text_stream(fh: BinaryIO) -> BinaryIO:
    """``fh`` as UTF-8 bytes: a compressed log (gzip, bzip2, xz) read through, a UTF-16 log
    (byte order mark) decoded, anything else as is."""
    return utf8_stream(decompressed(fh)[0])


def scan_file(
    path: str, kind: str | None = None, every: bool = False, name: str = ""
) -> tuple[list, str]:
    """The error lines of a file or pipe (the first red one, or ``every`` one in file order)
    and why it may not be a whole log: "gzip data cut short (…), read up to there", or, when
    no line was found, "binary data, 1.0 MiB"; "" for a log read as text to its end. One read:
    a named pipe or ``<(zcat x.gz)`` cannot be read twice, and a gzip bomb is inflated once.
    A compression this reader does not open (zstd, lz4) is a UserError naming the tool that
    does: its bytes scanned as text read as a clean log, or showed made-up lines. ``name``:
    what the messages call the input (default ``path``)."""
    kind = kind or guess_kind(path)
    with open_input(path) as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size if stat.S_ISREG(st.st_mode) else 0
        raw, compression = decompressed(fh)
        other = None if compression else unread_compression(raw.peek(4)[:4])
        if other is not None:
            tool = f"{other[1]} {path}" if not name else other[1]
            raise UserError(
                _("cannot read {path}: {value}").format(
                    path=name or path,
                    value=_("{compression}-compressed; decompress it first: {command}").format(
                        compression=other[0], command=f"{tool} | cockpit scan-log -"
                    ),
                )
            )
        text = utf8_stream(raw)
        head = _read_up_to(text, 1 << 16)
        read = [len(head)]

        def pieces() -> Iterator[tuple[int, int, bytearray]]:
            for base, line, piece in _chunks(text, CHUNK, head):
                read[0] = base + len(piece)
                yield base, line, piece

        if every:
            hits = list(iter_errors_in_pieces(pieces(), kind))
        else:
            hit = first_error_in_pieces(pieces(), kind)
            hits = [hit] if hit else []
        if not hits and looks_binary(head):  # nothing found: the stream was read to its end
            return [], _("binary data, {size}").format(size=human_size(size or read[0]))
        # a cut stream says so with its error lines too: `--all`'s list is not the whole log
        damage = getattr(getattr(raw, "raw", None), "error", None)
    if damage is not None:
        return hits, _("{compression} data cut short ({damage}), read up to there").format(
            compression=compression, damage=damage
        )
    return hits, ""


def scan_path(path: str, kind: str | None = None) -> ScanHit | None:
    """First red error of a file or pipe, read in chunks (memory flat in file size).

    A strong (root-cause) line anywhere wins over a weak one earlier, as in
    :func:`~cockpit.diagnosis.logscan.first_error`. Empty input -> None. Raises OSError if
    the file cannot be opened. ``kind`` defaults to a guess from the file name.
    """
    kind = kind or guess_kind(path)
    with open_input(path) as fh:
        return first_error_in_pieces(_chunks(_text_stream(fh), CHUNK), kind)


def iter_path(path: str, kind: str | None = None) -> Iterator[ScanHit]:
    """Every error line of a file or pipe, lazily, in file order (read in chunks)."""
    kind = kind or guess_kind(path)
    with open_input(path) as fh:
        yield from iter_errors_in_pieces(_chunks(_text_stream(fh), CHUNK), kind)


@dataclass(frozen=True, slots=True)
class StreamScan:
    """What :func:`scan_stream` found: the first red error (None = none), how many bytes and
    lines were read, and whether the end of the stream was seen (False: reading stopped at
    the first red error; compare ``bytes_read`` with the size, when known, for what is left)."""

    hit: ScanHit | None
    bytes_read: int
    lines_read: int
    complete: bool


def scan_stream(
    fh: BinaryIO, kind: str = "app", head: bytes = b"", chunk: int | None = None
) -> StreamScan:
    """First red error of an open stream (file, archive member, pipe) whose first bytes,
    ``head``, were already read; read in ``chunk`` pieces, memory flat in stream size. Stops
    reading at the first strong line, as :func:`scan_path` does."""
    last: list = [0, 1, b"", True]  # the last piece read (base, line, bytes), at EOF

    def pieces() -> Iterator[tuple[int, int, bytearray]]:
        for base, line, piece in _chunks(fh, chunk or CHUNK, head):
            last[:] = [base, line, piece, False]
            yield base, line, piece
        last[3] = True

    hit = first_error_in_pieces(pieces(), kind)
    base, line, piece, eof = last
    lines = line - 1 + piece.count(b"\n") + (1 if piece and not piece.endswith(b"\n") else 0)
    return StreamScan(hit, base + len(piece), lines, eof)
