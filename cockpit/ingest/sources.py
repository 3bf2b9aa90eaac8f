"""Reading what an operator has: a folder, one file, an archive (``.tar``, ``.tar.gz``,
``.tgz``, ``.zip``, a lone ``.gz``) or standard input (a pasted terminal session).

Every input becomes :class:`Input` items. An item up to :data:`SMALL` bytes is read whole;
a larger one is recognised from its head and then scanned streaming for its first red error
(:func:`cockpit.ingest.logfile.scan_stream`), so a 1 GiB log costs a pass at grep speed and
flat memory. Whatever is not read (binary files, archive members past the byte cap, paths
that climb out of an archive, the rest of a stream after its first red error) is said in a
note: a report never keeps quiet about what it did not look at.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from cockpit.errors import UserError
from cockpit.ingest.logfile import StreamScan, scan_stream
from cockpit.ingest.sniff import scan_kind, sniff

SMALL = 32 << 20  # an input up to this size is read whole and split into parts
MAX_ARCHIVE_BYTES = 8 << 30  # uncompressed bytes read from one archive, at most
SKIP_NAMES = {"expected.toml", "readme.md", ".ds_store"}
_BINARY_SNIFF = 2048


@dataclass(frozen=True, slots=True)
class Input:
    """One file as the operator knows it. ``data`` is the whole content when ``scan`` is
    None, else the head of a large input whose first red error ``scan`` holds; ``size``
    the bytes it has (None when a stream was not read to its end)."""

    name: str
    path: str
    data: bytes
    size: int | None
    scan: StreamScan | None = None
    kind: str = ""  # the large input's log kind, recognised from its head


def human_size(n: float) -> str:
    """A byte count as people read it: 1.0 GiB, 150.0 MiB, 4.9 KiB, 12 B."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def looks_binary(head: bytes) -> bool:
    if not head:
        return False
    sample = head[:_BINARY_SNIFF]
    if b"\x00" in sample:
        return True
    bad = sum(1 for b in sample if b < 9 or 13 < b < 32 and b != 27)
    return bad > len(sample) * 0.1


def _archive_kind(head: bytes) -> str:
    if head[:4] == b"PK\x03\x04":
        return "zip"
    if head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00":
        return "compressed"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "tar"
    return ""


def read_inputs(target: str, stdin: BinaryIO | None = None) -> tuple[list[Input], list[str]]:
    """The inputs of ``target`` (a folder, a file, an archive, or ``-`` for ``stdin``) and
    the notes on what was skipped or cut. Raises UserError when ``target`` does not exist
    (a file that cannot be read, a binary file, an empty archive: a note each)."""
    notes: list[str] = []
    if target == "-":
        fh = stdin if stdin is not None else _stdin()
        items = list(_read_stream(fh, "stdin", "", None, notes, archive_ok=True, top=True))
    elif os.path.isdir(target):
        items = list(_read_folder(target, notes))
    elif os.path.exists(target):
        items = list(_read_file(target, os.path.basename(target), notes, top=True))
    else:
        raise UserError(f"{target}: no such file or directory")
    return items, notes


def _stdin() -> BinaryIO:
    import sys

    return sys.stdin.buffer


def _read_folder(root: str, notes: list[str]) -> Iterator[Input]:
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for fn in sorted(files):
            if fn.lower() in SKIP_NAMES or fn.startswith("."):
                continue
            full = os.path.join(dirpath, fn)
            yield from _read_file(full, os.path.relpath(full, root), notes, top=False)


def _read_file(path: str, name: str, notes: list[str], top: bool) -> Iterator[Input]:
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, after the generator is done
    except OSError as exc:
        notes.append(f"{name}: not read ({exc.strerror or exc})")
        return
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:
            size = None
        yield from _read_stream(fh, name, path, size, notes, True, top, archive_path=path)


def _read_stream(
    fh: BinaryIO,
    name: str,
    path: str,
    size: int | None,
    notes: list[str],
    archive_ok: bool,
    top: bool = False,
    archive_path: str = "",
) -> Iterator[Input]:
    """Inputs from one stream: itself, or an archive's members (named as inside the archive
    when the archive is what the operator gave, else under the archive's own name)."""
    try:
        head = _read_up_to(fh, SMALL + 1)
    except OSError as exc:
        notes.append(f"{name}: not read ({exc.strerror or exc})")
        return
    kind = _archive_kind(head)
    if kind and archive_ok:
        prefix = "" if top else name + "/"
        yield from _read_archive(fh, head, name, prefix, archive_path, kind, notes)
        return
    if kind or looks_binary(head):
        notes.append(f"{name}: binary, not text ({human_size(size or len(head))}), skipped")
        return
    if len(head) <= SMALL:
        yield Input(name, path, head, len(head))
        return
    # too big to hold: recognise it from its head, then scan it streaming
    head = head[: head.rfind(b"\n") + 1] or head
    role, log_kind = sniff(name, head)
    if role != "log":
        total = human_size(size) if size else "over " + human_size(SMALL)
        notes.append(
            f"{name}: {role} table of {total}: only the first {human_size(len(head))} read"
        )
        yield Input(name, path, head, len(head))
        return
    try:
        scan = scan_stream(fh, kind=scan_kind(log_kind), head=head)
    except OSError as exc:
        notes.append(f"{name}: read failed after {human_size(len(head))} ({exc.strerror or exc})")
        return
    total = scan.bytes_read if scan.complete else size
    yield Input(name, path, head[:65536], total, scan, log_kind)
    notes.append(_stream_note(name, scan, size))


def _stream_note(name: str, scan: StreamScan, size: int | None) -> str:
    """What streaming read of a large input, and what it did not."""
    head = f"{name} ({human_size(size or scan.bytes_read)}, too big to hold): read streaming"
    if scan.hit is None:
        return f"{head}; no error line in its {scan.lines_read:,} lines"
    left = (size - scan.bytes_read) if size is not None else None
    if scan.complete or left == 0:
        return f"{head}; only its first red error, line {scan.hit.line:,}, is diagnosed"
    rest = f"the remaining {human_size(left)}" if left is not None else "the rest of the stream"
    return (
        f"{head} up to its first red error, line {scan.hit.line:,}; {rest} not read, and only "
        "that line is diagnosed"
    )


def _read_up_to(fh: BinaryIO, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = fh.read(n - got)
        if not b:
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


# --------------------------------------------------------------------------- archives


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
        data = self._rest.read(len(b))
        b[: len(data)] = data
        return len(data)


class _Capped(io.RawIOBase):
    """At most ``budget`` bytes of a member: a zip bomb or a huge member cannot exhaust the
    machine; ``cut`` tells that bytes were left unread."""

    def __init__(self, fh: BinaryIO, budget: int) -> None:
        self._fh, self.left, self.cut = fh, budget, False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        if self.left <= 0:
            self.cut = self.cut or bool(self._fh.read(1))
            return 0
        data = self._fh.read(min(len(b), self.left))
        b[: len(data)] = data
        self.left -= len(data)
        return len(data)


def _safe_member(name: str) -> str | None:
    """The member's path inside the archive, or None when it would land outside it."""
    norm = os.path.normpath(name.replace("\\", "/"))
    if os.path.isabs(norm) or norm == ".." or norm.startswith("../") or ":" in norm[:3]:
        return None
    return norm


def _read_archive(
    fh: BinaryIO, head: bytes, name: str, prefix: str, path: str, kind: str, notes: list[str]
) -> Iterator[Input]:
    budget = MAX_ARCHIVE_BYTES
    members: Iterator[tuple[str, int, BinaryIO | None]]
    if kind == "zip":
        if not path:
            raise UserError(f"{name}: a zip archive cannot be read from a pipe; save it first")
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            notes.append(f"{name}: damaged archive, not read ({exc})")
            return
        members = (
            (i.filename, i.file_size, None if i.is_dir() else zf.open(i)) for i in zf.infolist()
        )
    elif kind == "compressed" and not _is_tar(_inflate_head(head)):
        yield from _read_compressed(fh, head, name, notes)
        return
    else:  # a tar, plain or compressed: read as a stream (stdin cannot seek)
        try:
            tf = tarfile.open(fileobj=io.BufferedReader(_Replay(head, fh)), mode="r|*")
        except (tarfile.TarError, OSError, EOFError) as exc:
            notes.append(f"{name}: damaged archive, not read ({exc})")
            return
        members = _tar_members(tf, name, notes)
    skipped: list[str] = []
    try:
        for mname, msize, mfh in members:
            if mfh is None:
                continue
            inner = _safe_member(mname)
            if inner is None:
                notes.append(f"{name}: {mname}: refused (path outside the archive)")
                continue
            if os.path.basename(inner).lower() in SKIP_NAMES or os.path.basename(inner)[:1] == ".":
                continue
            if budget <= 0:
                skipped.append(inner)
                continue
            capped = _Capped(mfh, budget)
            label = prefix + inner
            yield from _read_stream(io.BufferedReader(capped), label, "", msize, notes, False)
            budget = capped.left
            if capped.cut:
                notes.append(f"{label}: cut at the archive's {human_size(MAX_ARCHIVE_BYTES)} cap")
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        notes.append(f"{name}: archive damaged, read up to there ({exc})")
    if skipped:
        notes.append(
            f"{name}: {len(skipped)} member(s) past the {human_size(MAX_ARCHIVE_BYTES)} cap "
            "not read: " + ", ".join(skipped[:5]) + (" …" if len(skipped) > 5 else "")
        )


def _tar_members(
    tf: tarfile.TarFile, name: str, notes: list[str]
) -> Iterator[tuple[str, int, BinaryIO | None]]:
    for m in tf:
        if m.isdir():
            continue
        if not m.isfile():
            notes.append(f"{name}: {m.name}: not a regular file (link or device), skipped")
            continue
        yield m.name, m.size, tf.extractfile(m)


_OPENERS = {b"\x1f\x8b": gzip.GzipFile, b"BZ": bz2.BZ2File, b"\xfd7": lzma.LZMAFile}


def _opener(head: bytes):
    return _OPENERS.get(head[:2])


def _inflate_head(head: bytes) -> bytes:
    """The first decompressed bytes of a compressed head ("" when they cannot be had)."""
    opener = _opener(head)
    if opener is None:
        return b""
    try:
        with opener(fileobj=io.BytesIO(head[: 1 << 20])) as z:
            return z.read(1024)
    except (OSError, EOFError, lzma.LZMAError):
        return b""


def _is_tar(data: bytes) -> bool:
    return len(data) > 262 and data[257:262] == b"ustar"


def _read_compressed(fh: BinaryIO, head: bytes, name: str, notes: list[str]) -> Iterator[Input]:
    """A lone compressed file (``slurmctld.log.gz``): read through the decompressor."""
    opener = _opener(head)
    if opener is None:
        notes.append(f"{name}: compressed in a format this reader does not open, skipped")
        return
    inner = name.rsplit(".", 1)[0] if name.endswith((".gz", ".bz2", ".xz")) else name
    capped = _Capped(opener(fileobj=io.BufferedReader(_Replay(head, fh))), MAX_ARCHIVE_BYTES)
    try:
        yield from _read_stream(io.BufferedReader(capped), inner, "", None, notes, False)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        notes.append(f"{name}: damaged compressed file, read up to there ({exc})")
    if capped.cut:
        notes.append(f"{inner}: cut at {human_size(MAX_ARCHIVE_BYTES)} uncompressed")
