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

import codecs
import io
import lzma
import os
import re
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.ingest import logfile
from cockpit.ingest.logfile import StreamScan, scan_stream
from cockpit.ingest.sniff import scan_kind, sniff
from cockpit.ingest.textstream import (
    DAMAGE,
    NUL_RUN,
    Tolerant,
    _Decoded,
    _read_up_to,
    _Replay,
    _seekable,
    is_utf16,
    looks_binary,
    opener,
    unread_compression,
)
from cockpit.units import human_size

SMALL = 32 << 20  # an input up to this size is read whole and split into parts
MAX_ARCHIVE_BYTES = 8 << 30  # uncompressed bytes read from one archive, at most
# entries of one archive looked at, at most: each costs memory whatever its size (a tar of a
# million empty files took 1.5 GB), and a bundle has dozens; a zip listing more is refused
MAX_MEMBERS = 20_000
# folders below the one given that are read: a ticket bundle is a few levels deep, and a tree
# a thousand deep is made to break a reader (its paths also pass PATH_MAX, 4,096 bytes)
MAX_DEPTH = 32
# bytes of whole inputs held in memory, over all inputs: past it, a log is only scanned
# streaming for its first red error and a table only its head read (said in a note), so
# memory stays flat in the size of a folder or of an archive's members
MAX_HELD = 64 << 20
_MIN_HEAD = 1 << 20  # bytes looked at to recognise an input read past MAX_HELD
_MEMBER_CHUNK = 8 << 20  # bytes scanned at a time of an archive member read streaming
_KEEP_HEAD = 65536  # bytes kept of an input only scanned
_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
SKIP_NAMES = {"expected.toml", "readme.md", ".ds_store"}
# a Windows drive at the start of an archive member's name (``C:``, ``c:/``)
_DRIVE = re.compile(r"[A-Za-z]:")


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


def _archive_kind(head: bytes) -> str:
    if head[:4] == b"PK\x03\x04":
        return "zip"
    if head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00":
        return "compressed"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "tar"
    return ""


class _Notes(list):
    """The notes of one read, and the bytes it may still hold in memory."""

    def __init__(self) -> None:
        super().__init__()
        self.held_left = MAX_HELD


def read_inputs(target: str, stdin: BinaryIO | None = None) -> tuple[list[Input], list[str]]:
    """The inputs of ``target`` (a folder, a file, an archive, or ``-`` for ``stdin``) and
    the notes on what was skipped or cut. Raises UserError when ``target`` does not exist
    (a file that cannot be read, a binary file, an empty archive: a note each)."""
    notes = _Notes()
    if target == "-":
        fh = stdin if stdin is not None else _stdin()
        items = list(_read_stream(fh, "stdin", "", None, notes, archive_ok=True, top=True))
    elif os.path.isdir(target):
        items = list(_read_folder(target, notes))
    elif os.path.exists(target):
        items = list(_read_file(target, os.path.basename(target), notes, top=True))
    else:
        raise UserError(_("{path}: no such file or directory").format(path=target))
    return items, list(notes)


def _stdin() -> BinaryIO:
    import sys

    return sys.stdin.buffer


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


def _walk(root: str, notes: list[str]) -> Iterator[tuple[str, int, list[str], list[str]]]:
    """``os.walk(root)`` top-down (sorted by the caller through ``dirs``), with each folder's
    depth below ``root``, and without recursion: Python 3.11's ``os.walk`` recurses once per
    level, so a folder 1,000 deep raised RecursionError. A folder that cannot be listed is a
    note (``os.walk`` skipped it in silence)."""
    stack = [(root, 0)]
    while stack:
        dirpath, depth = stack.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = list(it)
        except OSError as exc:
            rel = os.path.relpath(dirpath, root)
            notes.append(f"{rel}: folder not read ({exc.strerror or exc})")
            continue
        dirs, files = [], []
        for e in entries:
            try:
                is_dir = e.is_dir()  # as os.walk: a link to a folder is listed with the folders
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(e.name)
        yield dirpath, depth, dirs, files
        for d in reversed(dirs):  # popped in the order the caller left them
            full = os.path.join(dirpath, d)
            if not os.path.islink(full):
                stack.append((full, depth + 1))


def _read_folder(root: str, notes: list[str]) -> Iterator[Input]:
    """The regular files of a folder, down to :data:`MAX_DEPTH` folders below it (a note
    says what lies deeper). Symbolic links are not followed (one may point out of the
    folder: ``/etc/passwd``, ``/dev/zero``), and pipes, sockets and devices are never
    opened (a pipe would wait forever): a note each."""
    too_deep: list[str] = []
    for dirpath, depth, dirs, files in _walk(root, notes):
        if depth >= MAX_DEPTH and dirs:
            too_deep.append(os.path.relpath(dirpath, root))
            dirs.clear()
        for d in sorted(dirs):
            if not d.startswith(".") and os.path.islink(os.path.join(dirpath, d)):
                rel = os.path.relpath(os.path.join(dirpath, d), root)
                notes.append(f"{rel}: symbolic link to a folder, not followed")
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for fn in sorted(files):
            if fn.lower() in SKIP_NAMES or fn.startswith("."):
                continue
            full = os.path.join(dirpath, fn)
            name = os.path.relpath(full, root)
            try:
                st = os.lstat(full)
            except OSError as exc:
                notes.append(f"{name}: not read ({exc.strerror or exc})")
                continue
            if stat.S_ISLNK(st.st_mode):
                notes.append(f"{name}: symbolic link, not followed")
                continue
            if not stat.S_ISREG(st.st_mode):
                what = next((w for test, w in _NOT_REGULAR if test(st.st_mode)), "not a file")
                notes.append(f"{name}: {what}, not a regular file: skipped")
                continue
            yield from _read_file(full, name, notes, top=False)
    if too_deep:
        notes.append(
            f"{too_deep[0]}: the folders in it not read (more than {MAX_DEPTH} levels deep)"
            + (f"; nor those in {len(too_deep) - 1} other folders" if len(too_deep) > 1 else "")
        )


def _read_file(path: str, name: str, notes: list[str], top: bool) -> Iterator[Input]:
    try:
        if top:  # what the operator named: a device or a pipe without a writer is refused
            fh = logfile.open_input(path, "give the folder itself to read it as a bundle")
        else:  # a folder's file: no link followed, no pipe waited on (swapped since lstat)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                notes.append(f"{name}: not a regular file, skipped")
                return
            fh = os.fdopen(fd, "rb")
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
    left = getattr(notes, "held_left", MAX_HELD)
    limit = SMALL if left >= SMALL else max(left, _MIN_HEAD)
    try:
        head = _read_up_to(fh, limit + 1)
        if head[:1] == b"\x00":
            fh, head, size = _skip_nuls(fh, head, name, size, limit, notes)
    except OSError as exc:
        notes.append(f"{name}: not read ({exc.strerror or exc})")
        return
    kind = _archive_kind(head)
    if kind and archive_ok:
        prefix = "" if top else name + "/"
        yield from _read_archive(fh, head, name, prefix, archive_path, kind, notes)
        return
    if not kind and is_utf16(head):
        # UTF-16 with a byte order mark (PowerShell's ``>``): read as UTF-8 from here on
        fh = io.BufferedReader(_Decoded(io.BufferedReader(_Replay(head, fh)), "utf-16"))
        head, size = _read_up_to(fh, limit + 1), None
        notes.append(f"{name}: UTF-16 text, read as such")
    other = unread_compression(head)
    if kind or other:  # not binary data: compressed in a way not read here (or twice)
        if kind == "compressed" and _is_tar(_inflate_head(head)):
            kind = "tar"
        what = (
            f"{other[0]}-compressed ({other[1]} reads it)"
            if other
            else "compressed twice"
            if kind == "compressed"
            else f"a {kind} archive inside an archive"
        )
        notes.append(f"{name}: {what}, not read ({human_size(size or len(head))}), skipped")
        return
    if looks_binary(head):
        notes.append(f"{name}: binary, not text ({human_size(size or len(head))}), skipped")
        return
    if len(head) <= limit and len(head) <= left:
        if hasattr(notes, "held_left"):
            notes.held_left -= len(head)  # type: ignore[attr-defined]
        if b"\x00" in head:  # NUL padding out of the text (line numbers stay)
            padded = len(head)
            head = NUL_RUN.sub(b"", head)
            if len(head) < padded:
                notes.append(f"{name}: {human_size(padded - len(head))} of NUL padding skipped")
        yield Input(name, path, head, len(head))
        return
    # too big to hold: recognise it from its head, then scan it streaming
    why = "too big to hold" if len(head) > SMALL else f"past the {human_size(MAX_HELD)} held"
    head = head[: head.rfind(b"\n") + 1] or head
    role, log_kind = sniff(name, head)
    if role != "log":
        if len(head) > left:  # memory is spent: keep what recognises it
            head = head[: max(left, _KEEP_HEAD)]
            head = head[: head.rfind(b"\n") + 1] or head
        if hasattr(notes, "held_left"):
            notes.held_left -= len(head)  # type: ignore[attr-defined]
        total = human_size(size) if size else "over " + human_size(len(head))
        notes.append(
            f"{name}: {role} table of {total}: only the first {human_size(len(head))} read"
            + ("" if why.startswith("too") else f" ({why} in memory)")
        )
        yield Input(name, path, head, len(head))
        return
    try:
        # an archive's member in smaller pieces: memory stays low however many there are
        chunk = logfile.CHUNK if archive_ok else min(logfile.CHUNK, _MEMBER_CHUNK)
        scan = scan_stream(fh, kind=scan_kind(log_kind), head=head, chunk=chunk)
    except OSError as exc:
        notes.append(f"{name}: read failed after {human_size(len(head))} ({exc.strerror or exc})")
        return
    total = scan.bytes_read if scan.complete else size
    yield Input(name, path, head[:_KEEP_HEAD], total, scan, log_kind)
    notes.append(_stream_note(name, scan, size, why))


def _skip_nuls(
    fh: BinaryIO, head: bytes, name: str, size: int | None, limit: int, notes: list[str]
) -> tuple[BinaryIO, bytes, int | None]:
    """Past the NUL bytes a log starts with when it was truncated while written to
    (logrotate's copytruncate): the stream, its head from the first other byte, its size."""
    skipped = 0
    while True:
        rest = head.lstrip(b"\x00")
        skipped += len(head) - len(rest)
        if rest or len(head) <= limit:
            break
        head = _read_up_to(fh, limit + 1)
    if not rest or looks_binary(rest):  # a binary that starts with NULs (a core file)
        return fh, (head if head.strip(b"\x00") else b"\x00" * min(skipped, 2048)), size
    head = rest + _read_up_to(fh, limit + 1 - len(rest))
    notes.append(
        f"{name}: {human_size(skipped)} of NUL bytes before its first line skipped "
        "(left by a log truncated while written to)"
    )
    return fh, head, (size - skipped if size is not None else None)


def _stream_note(name: str, scan: StreamScan, size: int | None, why: str = "") -> str:
    """What streaming read of a large input, and what it did not."""
    why = why or "too big to hold"
    head = f"{name} ({human_size(size or scan.bytes_read)}, {why}): read streaming"
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


# --------------------------------------------------------------------------- archives


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
        with memoryview(b) as mv, mv[: min(len(b), self.left)] as dest:
            n = self._fh.readinto(dest) or 0  # in place: no copy of a large read
        self.left -= n
        return n


def _damage_note(name: str, tol: Tolerant) -> str:
    if tol.got == 0:
        return f"{name}: damaged compressed data, nothing readable ({tol.error})"
    return (
        f"{name}: damaged compressed data after {human_size(tol.got)} ({tol.error}); "
        "what came before the damage is read, the rest is not"
    )


def _safe_member(name: str) -> str | None:
    """The member's path inside the archive, or None when it would land outside it: absolute,
    climbing with ``..``, or on a Windows drive (``C:\\x\\..\\..\\name``: normalised, its ``..``
    would first eat the drive and leave a harmless-looking ``name``, so the drive is looked
    for before)."""
    raw = name.replace("\\", "/")
    if _DRIVE.match(raw):
        return None
    norm = os.path.normpath(raw)
    if os.path.isabs(norm) or norm == ".." or norm.startswith("../"):
        return None
    return norm


def _read_archive(
    fh: BinaryIO, head: bytes, name: str, prefix: str, path: str, kind: str, notes: list[str]
) -> Iterator[Input]:
    budget = MAX_ARCHIVE_BYTES
    members: Iterator[tuple[str, int, BinaryIO | None]]
    if kind == "zip":
        if not path:
            raise UserError(
                _("{name}: a zip archive cannot be read from a pipe; save it first").format(
                    name=name
                )
            )
        entries = _zip_entries(path)
        if entries is not None and entries > MAX_MEMBERS:
            notes.append(
                f"{name}: a zip of {entries:,} entries, more than the {MAX_MEMBERS:,} this "
                "reader opens (a bundle has dozens): not read"
            )
            return
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            notes.append(f"{name}: damaged archive, not read ({exc})")
            return
        members = _zip_members(zf, name, notes)
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
            mfh, inner = _member_inflated(mfh, inner)
            tol = Tolerant(mfh)
            capped = _Capped(tol, budget)  # inflated bytes count against the archive's cap
            label = prefix + inner
            yield from _read_stream(io.BufferedReader(capped), label, "", msize, notes, False)
            budget = capped.left
            if tol.error is not None:
                notes.append(_damage_note(label, tol))
            if capped.cut:
                notes.append(f"{label}: cut at the archive's {human_size(MAX_ARCHIVE_BYTES)} cap")
    except DAMAGE as exc:
        notes.append(f"{name}: archive damaged, read up to there ({exc})")
    if skipped:
        notes.append(
            f"{name}: {len(skipped)} member(s) past the {human_size(MAX_ARCHIVE_BYTES)} cap "
            "not read: " + ", ".join(skipped[:5]) + (" …" if len(skipped) > 5 else "")
        )


def _member_inflated(mfh: BinaryIO, inner: str) -> tuple[BinaryIO, str]:
    """A member compressed on its own (``slurmctld.log.1.gz`` in a bundle's tar.gz, as
    logrotate leaves it) read through its compression, named without the suffix as in a
    folder; one level only (what is inside is text or a note), and never a tar inside: the
    member then was a note 'binary, not text' and the bundle said 'nothing looks wrong'."""
    peek = getattr(mfh, "peek", None)
    try:
        head = peek(1 << 16) if peek is not None else b""
    except DAMAGE:  # a damaged member: read as it is, its note says where it broke
        return mfh, inner
    open_ = opener(head)
    if open_ is None or _is_tar(_inflate_head(head)):
        return mfh, inner
    stem, dot, ext = inner.rpartition(".")
    return open_(mfh), (stem if dot and ext.lower() in ("gz", "bz2", "xz") else inner)


def _zip_entries(path: str) -> int | None:
    """The entry count a zip's end record gives, read before the whole directory is (which
    costs memory per entry); None when it cannot be found (the zip reader then says why)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - (1 << 16) - 22))
            tail = fh.read()
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or len(tail) < at + 22:
                return None
            count = int.from_bytes(tail[at + 10 : at + 12], "little")
            loc = tail.rfind(b"PK\x06\x07", 0, at)  # Zip64: the count is in its own record
            if count == 0xFFFF and loc >= 0:
                fh.seek(int.from_bytes(tail[loc + 8 : loc + 16], "little"))
                rec = fh.read(56)
                if rec[:4] == b"PK\x06\x06":
                    count = int.from_bytes(rec[32:40], "little")
            return count
    except OSError:
        return None


def _zip_members(
    zf: zipfile.ZipFile, name: str, notes: list[str]
) -> Iterator[tuple[str, int, BinaryIO | None]]:
    """A zip's members, each opened in turn: one that cannot be opened (a damaged header, an
    unknown compression, a password) is a note, and the others are still read."""
    for i in zf.infolist():
        if i.is_dir():
            continue
        try:
            mfh = zf.open(i)
        except (*DAMAGE, NotImplementedError, RuntimeError) as exc:
            notes.append(f"{name}: {i.filename}: not read ({exc})")
            continue
        with mfh:
            yield i.filename, i.file_size, mfh


def _tar_members(
    tf: tarfile.TarFile, name: str, notes: list[str]
) -> Iterator[tuple[str, int, BinaryIO | None]]:
    for n, m in enumerate(tf, 1):
        tf.members.clear()  # a stream read: the entries seen need not be kept
        if n > MAX_MEMBERS:
            notes.append(
                f"{name}: more than {MAX_MEMBERS:,} entries: the first {MAX_MEMBERS:,} read, "
                "the rest not (a bundle has dozens)"
            )
            return
        if m.isdir():
            continue
        if not m.isfile():
            notes.append(f"{name}: {m.name}: not a regular file (link or device), skipped")
            continue
        yield m.name, m.size, tf.extractfile(m)


def _inflate_head(head: bytes) -> bytes:
    """The first decompressed bytes of a compressed head ("" when they cannot be had)."""
    open_ = opener(head)
    if open_ is None:
        return b""
    try:
        with open_(io.BytesIO(head[: 1 << 20])) as z:
            return z.read(1024)
    except (OSError, EOFError, lzma.LZMAError):
        return b""


def _is_tar(data: bytes) -> bool:
    return len(data) > 262 and data[257:262] == b"ustar"


def _read_compressed(fh: BinaryIO, head: bytes, name: str, notes: list[str]) -> Iterator[Input]:
    """A lone compressed file (``slurmctld.log.gz``): read through the decompressor."""
    open_ = opener(head)
    if open_ is None:
        notes.append(f"{name}: compressed in a format this reader does not open, skipped")
        return
    inner = name.rsplit(".", 1)[0] if name.endswith((".gz", ".bz2", ".xz")) else name
    reopen = None
    if _seekable(fh):  # on damage, read again up to it a byte at a time (Tolerant)

        def reopen() -> BinaryIO:
            fh.seek(0)
            return open_(fh)

    tol = Tolerant(open_(io.BufferedReader(_Replay(head, fh))), reopen)
    capped = _Capped(tol, MAX_ARCHIVE_BYTES)
    yield from _read_stream(io.BufferedReader(capped), inner, "", None, notes, False)
    if tol.error is not None:
        notes.append(_damage_note(name, tol))
    if capped.cut:
        notes.append(f"{inner}: cut at {human_size(MAX_ARCHIVE_BYTES)} uncompressed")
