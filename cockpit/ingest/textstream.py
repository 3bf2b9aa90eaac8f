"""A byte stream read as UTF-8 text: a UTF-16 log (byte order mark, then text) decoded, any
other stream replayed as it is. Shared by the one-file scanner (:mod:`cockpit.ingest.logfile`)
and the bundle reader (:mod:`cockpit.ingest.sources`)."""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from typing import BinaryIO

_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_BINARY_SNIFF = 2048
# a run of NULs in text: padding a crash, a preallocated or a truncated-while-written log
# leaves (lone NULs are binary data, or UTF-16 without its byte order mark)
NUL_RUN = re.compile(rb"\x00{8,}")


def is_utf16(head: bytes) -> bool:
    """Whether ``head`` is UTF-16 text: a byte order mark, and then text with a space or line
    break in it (UTF-8 log text after two stray bytes ``\\xff\\xfe`` decodes to CJK-looking
    characters with neither)."""
    if not head.startswith(_BOMS):
        return False
    sample = head[2 : 2 + _BINARY_SNIFF]
    sample = sample[: len(sample) & ~1]
    enc = "utf-16-le" if head.startswith(codecs.BOM_UTF16_LE) else "utf-16-be"
    text = sample.decode(enc, "replace")
    return len(text) < 16 or any(c in text for c in " \n\t")


def looks_binary(head: bytes) -> bool:
    """Whether ``head`` is data, not text: NULs beyond padding runs, or over a tenth of its
    bytes control characters (ESC and whitespace are text)."""
    if not head:
        return False
    sample = head[:_BINARY_SNIFF]
    if b"\x00" in sample:
        sample = NUL_RUN.sub(b"", sample)
        if not sample or b"\x00" in sample:
            return True
    bad = sum(1 for b in sample if b < 9 or 13 < b < 32 and b != 27)
    return bad > len(sample) * 0.1


def utf8_stream(fh: BinaryIO) -> BinaryIO:
    """``fh`` read as UTF-8: a UTF-16 stream (:func:`is_utf16`) decoded, others as they are."""
    head = _read_up_to(fh, 4096)
    replay = io.BufferedReader(_Replay(head, fh))
    return io.BufferedReader(_Decoded(replay, "utf-16")) if is_utf16(head) else replay


# a compressed stream by its first bytes, not its name (`zcat` output piped in has none):
# a rotated log as logrotate leaves it (slurmctld.log.1.gz, .bz2, .xz), or an archive's body
_OPENERS: dict[bytes, tuple[str, Callable[[BinaryIO], BinaryIO]]] = {
    b"\x1f\x8b": ("gzip", lambda f: gzip.GzipFile(fileobj=f, mode="rb")),
    b"BZ": ("bzip2", lambda f: bz2.BZ2File(f)),
    b"\xfd7": ("xz", lambda f: lzma.LZMAFile(f)),
}
# compressions this reader does not open (no decompressor in Python's standard library), by
# their magic numbers, with the tool that does: named, not scanned as binary data
UNREAD = {
    b"\x28\xb5\x2f\xfd": ("zstd", "zstdcat"),
    b"\x04\x22\x4d\x18": ("lz4", "lz4cat"),
}


def unread_compression(head: bytes) -> tuple[str, str] | None:
    """(name, the tool that reads it) when ``head`` starts a compression not read here."""
    return UNREAD.get(head[:4])


# what a decompressor raises on data cut short or damaged
DAMAGE = (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError)
_PIECE = 16384  # bytes asked of a decompressor at a time


def opener(head: bytes) -> Callable[[BinaryIO], BinaryIO] | None:
    """What reads through the compression ``head`` starts with (None: not compressed)."""
    found = _OPENERS.get(head[:2])
    return found[1] if found else None


def decompressed(fh: BinaryIO) -> tuple[BinaryIO, str]:
    """``fh`` read through its compression (gzip, bzip2, xz: named second) or as it is ("").
    A damaged stream ends at the damage: ``.raw`` of the result is its :class:`Tolerant`."""
    peek = getattr(fh, "peek", None)
    got = peek(6) if peek is not None else b""
    if len(got) >= 2 or (peek is not None and not got):
        # a buffered file or pipe: looked at without taking (no layer to copy 32 MiB through);
        # a pipe that gave one byte so far is read below, to be sure of its two
        if _OPENERS.get(got[:2]) is None:
            return fh, ""
    head = _read_up_to(fh, 6)
    replay: BinaryIO = io.BufferedReader(_Replay(head, fh))
    found = _OPENERS.get(head[:2])
    if found is None:
        return replay, ""
    name, open_ = found
    reopen = None
    if _seekable(fh):  # a file: on damage, read again in small pieces up to it (Tolerant)

        def reopen() -> BinaryIO:
            fh.seek(0)
            return open_(fh)

    return io.BufferedReader(Tolerant(open_(replay), reopen)), name


def _seekable(fh: BinaryIO) -> bool:
    try:
        return fh.seekable()
    except (OSError, ValueError):
        return False


class Tolerant(io.RawIOBase):
    """A decompressing stream that ends where its data is damaged instead of raising: what
    decompressed before the damage is kept (a rotated log copied while written); ``error``
    says what stopped it and ``got`` how many bytes came before."""

    def __init__(self, fh: BinaryIO, reopen: Callable[[], BinaryIO] | None = None) -> None:
        self._fh, self.got = fh, 0
        self._read = getattr(fh, "read1", fh.read)
        self.error: BaseException | None = None
        self._reopen, self._piece = reopen, _PIECE

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        if self.error is not None:
            return 0
        if self._piece == 1:
            return self._bytewise(b)
        try:  # small pieces: a read that fails loses what it had decompressed
            data = self._read(min(len(b), self._piece))
        except DAMAGE as exc:
            if self._reopen is None or not self._again():
                self.error = exc
                return 0
            return self.readinto(b)
        b[: len(data)] = data
        self.got += len(data)
        return len(data)

    def _again(self) -> bool:
        """After damage, the stream decompressed once more from its start, up to where it
        failed, then on a byte at a time: the failing read loses what it had
        decompressed, and an xz block's check is verified after its last 16 KiB were
        decoded (a bad CRC lost the log's last lines, where its error is; ``xz -dc`` prints
        them). Once; False when it cannot be read again."""
        reopen, self._reopen = self._reopen, None
        try:
            fh = reopen()  # type: ignore[misc]
            read = getattr(fh, "read1", fh.read)
            left = self.got
            while left > 0:
                data = read(min(left, 4096))
                if not data:
                    return False
                left -= len(data)
        except DAMAGE:
            return False
        self._fh, self._read, self._piece = fh, read, 1
        return True

    def _bytewise(self, b) -> int:
        """Up to the damage a byte at a time (it is at most a piece away): a read loses what
        it decompressed when it fails, so each read holds one byte."""
        n = 0
        while n < min(len(b), _PIECE):
            try:
                data = self._read(1)
            except DAMAGE as exc:
                self.error = exc
                break
            if not data:
                break
            b[n] = data[0]
            n += 1
        self.got += n
        return n


def _read_up_to(fh: BinaryIO, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = fh.read(n - got)
        if not b:
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


class _Replay(io.RawIOBase):
    """A stream whose first bytes were already read: serves them again, then the rest."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        into = getattr(self._rest, "readinto", None)
        if into is not None:  # straight into the caller's buffer: no copy of a 32 MiB read
            return into(b) or 0
        data = self._rest.read(len(b))
        b[: len(data)] = data
        return len(data)


class _Decoded(io.RawIOBase):
    """A text stream in another encoding, served as UTF-8 (undecodable bytes replaced)."""

    def __init__(self, fh: BinaryIO, encoding: str) -> None:
        self._fh, self._out = fh, b""
        self._dec = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        while not self._out and not self._eof:
            raw = self._fh.read(1 << 16)
            self._eof = not raw
            self._out = self._dec.decode(raw, final=self._eof).encode("utf-8")
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n
