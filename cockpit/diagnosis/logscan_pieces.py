"""The first red error and every error line of a stream read in pieces (a multi-GiB log, a
pipe): what :mod:`cockpit.diagnosis.logscan` finds over a whole buffer, piece by piece, with
the same answer (tests/test_logscan.py cuts every bundle into 64-byte pieces). A module of its
own since logscan.py passed 800 lines (tests/test_layout.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from cockpit.diagnosis.logscan import (
    _BACK_BYTES,
    _NCCL_LOOKAHEAD,
    _SUMMARY_LOOKBACK,
    _WEAK_TAIL,
    Buffer,
    ScanHit,
    _cause,
    _combined,
    _first_weak,
    _looks_ahead,
    _looks_back,
    _search,
    iter_errors,
)

# A stream too big to hold (a multi-GiB log, a pipe) is scanned as consecutive pieces:
# (byte offset of the piece, 1-based line number of its first line, its bytes), each cut
# just after a newline (a single line longer than the reader's bound may be cut anywhere).
# Reading the pieces is the caller's business (cockpit.ingest.logfile); results carry
# offsets and line numbers in the whole stream.
Piece = tuple[int, int, Buffer]


# the most kept before a piece: a summary's run of lines longer than this together is cut
_BACK_MAX = 1 << 20


def _keep_back(back: bytes, piece: Buffer) -> bytes:
    """The stream's last whole lines before the next piece: the ``_SUMMARY_LOOKBACK`` lines a
    summary's run may begin in, however long (a plugin path), and at least the ``_BACK_BYTES``
    before it (a semaphore's frame), up to ``_BACK_MAX``; none after a line cut mid-way."""
    tail = back + bytes(piece[-_BACK_MAX:])
    if not tail.endswith(b"\n"):
        return b""
    cut = len(tail) > _BACK_MAX
    tail = tail[-_BACK_MAX:]
    start = len(tail) - 1  # the newline ending the last line
    for _ in range(_SUMMARY_LOOKBACK):
        start = tail.rfind(b"\n", 0, start)
        if start < 0:
            break
    keep = min(start + 1, tail.rfind(b"\n", 0, max(0, len(tail) - _BACK_BYTES)) + 1)
    if keep == 0 and cut:  # the first line was cut by _BACK_MAX: not a line start
        keep = tail.find(b"\n") + 1
    return tail[keep:]


def _shift(hit: ScanHit, base: int, line: int) -> ScanHit:
    return replace(hit, line=hit.line + line - 1, offset=hit.offset + base)


def first_error_in_pieces(pieces: Iterable[Piece], kind: str = "app") -> ScanHit | None:
    """What :func:`first_error` finds over the whole stream, from its pieces in order.

    A strong (root-cause) line anywhere wins over a weak one earlier. Stops reading pieces
    once the answer is known. No pieces (empty input) -> None.
    """
    strong_rx, any_rx = _combined(kind, True), _combined(kind, None)
    weak: ScanHit | None = None
    # a strong hit that may announce a later cause (NCCL's CUDA failure, a cancel's unkillable
    # step) whose lookahead crosses the piece: (offset, line, hit, bytes from it)
    nccl: tuple[int, int, ScanHit, bytes] | None = None
    # the bytes from the first weak line on (the weak line first_error cites may be a later
    # one, or one its lookahead reaches in later pieces): [stream offset, line, the bytes]
    raised: list | None = None
    # the stream's last lines before this piece, whole (an umbrella summary's run of error
    # lines may begin in an earlier piece)
    back = b""
    for base, line, piece in pieces:
        if raised is not None and len(raised[2]) < _WEAK_TAIL:
            raised[2] += bytes(piece[: _WEAK_TAIL - len(raised[2])])
        if nccl is not None:  # the CUDA failure it wraps may be in the next pieces' first bytes
            at, at_line, hit, tail = nccl
            tail += bytes(piece[:_NCCL_LOOKAHEAD])
            end = tail.find(b"\n")
            if end >= 0 and len(tail) - end > _NCCL_LOOKAHEAD:
                return _shift(_cause(tail, replace(hit, line=1, offset=0), kind), at, at_line)
            nccl = (at, at_line, hit, tail)
            continue
        # One regex pass per piece, same result as first_error over the whole stream: strong
        # and weak patterns together until the first weak hit, strong ones only after it.
        start, start_line = 0, 1
        rx = any_rx if weak is None else strong_rx
        while rx is not None:
            hit = next(_search(piece, rx, kind, start, start_line, 0), None)
            if hit is None:
                break
            if hit.strong:
                end = piece.find(b"\n", hit.offset)
                if _looks_ahead(hit) and (end < 0 or len(piece) - end <= _NCCL_LOOKAHEAD):
                    nccl = (base + hit.offset, line + hit.line - 1, hit, bytes(piece[hit.offset :]))
                    break
                if back and not _looks_ahead(hit) and _looks_back(hit):
                    # the run of error lines it sums up, or the frame naming a semaphore, may
                    # begin in an earlier piece
                    n = back.count(b"\n")
                    above = replace(hit, line=hit.line + n, offset=hit.offset + len(back))
                    start_of = _cause(back + bytes(piece), above, kind)
                    return _shift(start_of, base - len(back), line - n)
                return _shift(_cause(piece, hit, kind), base, line)
            weak = _shift(hit, base, line)
            nl = piece.find(b"\n", hit.offset)
            raised = [
                weak.offset,
                weak.line,
                bytearray(piece[hit.offset : hit.offset + _WEAK_TAIL]),
            ]
            if nl < 0:
                break
            start, start_line, rx = nl + 1, hit.line + 1, strong_rx
        back = _keep_back(back, piece)
    if nccl is not None:  # the stream ended within the lookahead
        at, at_line, hit, tail = nccl
        return _shift(_cause(tail, replace(hit, line=1, offset=0), kind), at, at_line)
    if weak is not None and raised is not None:
        rx = _combined(kind, False)
        got = _first_weak(bytes(raised[2]), rx, kind) if rx is not None else None
        return _shift(got, raised[0], raised[1]) if got is not None else weak
    return weak


def iter_errors_in_pieces(pieces: Iterable[Piece], kind: str = "app") -> Iterator[ScanHit]:
    """Every error line of the stream, lazily, in order (:func:`iter_errors` per piece)."""
    last = 0  # a line longer than a piece spans several: it is one error line, said once
    for base, line, piece in pieces:
        for hit in iter_errors(piece, kind=kind):
            hit = _shift(hit, base, line)
            if hit.line != last:
                last = hit.line
                yield hit
