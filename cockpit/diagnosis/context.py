"""What every rule may use: :class:`RuleContext`, the registry's entry types, the scan cache.

Rule modules import this module, never :mod:`cockpit.diagnosis.engine` (which imports the
registry, which imports the rule modules): the imports form a tree, not a cycle.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cockpit.diagnosis import logscan
from cockpit.model import AcctRecord, Artifacts, Evidence, Finding, LogText, Snapshot

# A rule: (subject, context) -> findings. ``None`` or an empty iterable means "nothing to say";
# hot rules return None rather than being generators, so a subject they skip costs one call.
RuleFn = Callable[[Any, "RuleContext"], Iterable[Finding] | None]


@dataclass(frozen=True, slots=True)
class Rule:
    """A registry entry: ``fn`` runs for every subject of its kind (a job rule with ``states``
    only for jobs in those states: the engine looks a job's rules up by its state)."""

    fn: RuleFn
    states: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class FirstOf:
    """A registry entry whose rules are tried in order for each subject until one finds
    something: the order is the precedence, and the subject gets at most one of them (a
    pending job has one reason, an ended job one verdict). A rule that raises ends the
    entry too: falling through to a later rule would give a verdict the order says is wrong.
    """

    rules: tuple[RuleFn, ...]
    states: frozenset[str] | None = None


@dataclass(frozen=True)
class RuleContext:
    """What every rule may look at besides its subject; built once per ``diagnose``.

    ``partitions``/``nodes``/``pools`` map names (pool id) to objects; ``acct`` maps a job
    id to its sacct rows (job row first); ``logs`` maps a subject id (job id, node name,
    training job id, "" for unattributed bundle files) to its log excerpts. ``cache`` holds
    per-snapshot aggregates rules compute once (site rules, scans); keys are the rule's.
    """

    snapshot: Snapshot
    artifacts: Artifacts
    now: datetime
    # lookups built once per diagnose() so rules stay O(1) per subject
    partitions: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    pools: dict = field(default_factory=dict)
    acct: dict = field(default_factory=dict)
    logs: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)

    def acct_for(self, job_id: str) -> list[AcctRecord]:
        return self.acct.get(job_id, [])

    def logs_for(self, subject_id: str) -> list[LogText]:
        return self.logs.get(subject_id, [])

    def scan(self, log: LogText) -> logscan.ScanHit | None:
        """First red error of one log excerpt (cached: several rules ask, and the same
        evidence is diagnosed again every poll; see :data:`SCAN_CACHE`)."""
        key = ("scan", id(log))
        if key not in self.cache:
            kind = _scan_kind(log.kind)
            self.cache[key] = SCAN_CACHE.get(
                ("scan", kind), log.data, lambda: logscan.first_error(log.data, kind=kind)
            )
        return self.cache[key]

    def strong_hits(self, log: LogText, limit: int = 50) -> list[logscan.ScanHit]:
        """Strong error lines of one log, in order (cached like :meth:`scan`), at most ``limit``."""
        key = ("hits", id(log), limit)
        if key not in self.cache:
            kind = _scan_kind(log.kind)

            def hits() -> tuple:
                out = []
                for h in logscan.iter_errors(log.data, kind=kind):
                    if h.strong:
                        out.append(h)
                        if len(out) >= limit:
                            break
                return tuple(out)

            self.cache[key] = list(SCAN_CACHE.get(("hits", kind, limit), log.data, hits))
        return self.cache[key]


def build_context(snapshot: Snapshot, artifacts: Artifacts, now: datetime) -> RuleContext:
    """The context of one ``diagnose``: lookups by name, sacct rows by job (job row first),
    logs by subject id."""
    acct: dict[str, list[AcctRecord]] = {}
    for r in artifacts.acct:
        acct.setdefault(r.job_id, []).append(r)
    for rows in acct.values():
        rows.sort(key=lambda r: r.step != "")
    logs: dict[str, list[LogText]] = {}
    for lt in artifacts.logs:
        logs.setdefault(lt.subject_id, []).append(lt)
    return RuleContext(
        snapshot=snapshot,
        artifacts=artifacts,
        now=now,
        partitions={p.name: p for p in snapshot.partitions},
        nodes={n.name: n for n in snapshot.nodes},
        pools={p.pool_id: p for p in snapshot.pools},
        acct=acct,
        logs=logs,
    )


class ScanCache:
    """Scan results of log bytes, kept across ``diagnose`` calls (polls), LRU-bounded.

    Keyed by (what, scan kind, length and ``hash`` of the bytes): the hash of a ``bytes``
    object is computed once and cached by CPython, so evidence diagnosed again every poll
    costs one dict lookup instead of a rescan, and a re-read with identical bytes hits too.
    No log bytes are retained; results hold the decoded error lines (≤ 64 KiB each), so the
    cache is bounded both in entries and in the characters of those lines (``max_chars``).
    Equal (length, 64-bit keyed SipHash) for different bytes is the only way to a wrong hit:
    not a practical risk. Thread-safe (pollers diagnose in threads).
    """

    def __init__(self, max_entries: int = 2048, max_chars: int = 16 << 20) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._d: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, what: tuple, data: bytes, compute: Callable[[], Any]) -> Any:
        """The cached result for (``what``, ``data``), else ``compute()`` (outside the lock)."""
        if not isinstance(data, bytes):  # bytearray/memoryview: mutable, not hashable
            return compute()
        key = (*what, len(data), hash(data))
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                self.hits += 1
                return self._d[key][0]
            self.misses += 1
        value = compute()
        size = _result_chars(value)
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self._chars -= old[1]
            self._d[key] = (value, size)
            self._chars += size
            while self._d and (len(self._d) > self.max_entries or self._chars > self.max_chars):
                self._chars -= self._d.popitem(last=False)[1][1]
        return value

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._chars = 0
            self.hits = self.misses = 0


def _result_chars(value: object) -> int:
    """Characters of decoded log text a scan result holds (a ScanHit, a list of them, None)."""
    if isinstance(value, list):
        return sum(len(getattr(h, "text", "")) for h in value) + 1
    return len(getattr(value, "text", "")) + 1


SCAN_CACHE = ScanCache()  # the process's scan results (RuleContext.scan / strong_hits)


def _scan_kind(kind: str) -> str:
    # a prolog/epilog's output has its own patterns (any failure in it is the prolog's)
    return kind if kind in {"slurmctld", "slurmd", "events", "prolog"} else "app"


def log_evidence(log: LogText, hit: logscan.ScanHit, tier: int | None = None) -> Evidence:
    """Evidence for a scan hit: file name, absolute line and byte offset so the viewer jumps."""
    return Evidence(
        where=log.name,
        text=hit.text,
        line=log.file_line(hit.line),
        path=log.path,
        offset=log.file_offset(hit.line, hit.offset),
        tier=hit.tier if tier is None else tier,
        quoted=True,
    )


def clip(text: str, limit: int = 100) -> str:
    """``text`` cut to ``limit`` characters at a word boundary with ``…`` (a title must not
    end mid-word: "must start" read as the whole sentence). Inner spaces are kept: a path's
    trailing space can be the finding itself."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    if cut < limit // 2:
        cut = limit - 1
    return text[:cut].rstrip() + "…"
