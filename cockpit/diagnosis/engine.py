"""The diagnosis engine: pure functions from (snapshot, artifacts, now) to findings.

Rules are small functions registered per subject kind (``@rule("job")``). A rule
receives one subject object (SlurmJob, SlurmNode, Partition, TrainingJob, Pool, or
the Snapshot itself for kind "site") and a :class:`RuleContext`, and yields Findings.
Rules never do I/O. ``diagnose`` runs them all; ``correlate`` folds findings that
share a cause into incidents.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import attrgetter

from cockpit.model import (
    SEVERITY_RANK,
    AcctRecord,
    Artifacts,
    Evidence,
    Finding,
    Incident,
    LogText,
    Snapshot,
    Subject,
)

RuleFn = Callable[[object, "RuleContext"], Iterable[Finding]]

# kind -> rules, in registration order
_RULES: dict[str, list[RuleFn]] = {}


def rule(kind: str) -> Callable[[RuleFn], RuleFn]:
    """Register ``fn`` for subjects of ``kind``: job | node | partition | training_job | pool | site."""

    def deco(fn: RuleFn) -> RuleFn:
        _RULES.setdefault(kind, []).append(fn)
        return fn

    return deco


def rules_for(kind: str) -> list[RuleFn]:
    _load_rule_modules()
    return list(_RULES.get(kind, ()))


@dataclass(frozen=True)
class RuleContext:
    """What every rule may look at besides its subject; built once per :func:`diagnose`.

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

    def scan(self, log: LogText):  # -> ScanHit | None, cached per log bytes
        """First red error of one log excerpt (cached: several rules ask, and the same
        evidence is diagnosed again every poll; see :data:`SCAN_CACHE`)."""
        from cockpit.diagnosis.logscan import first_error

        key = ("scan", id(log))
        if key not in self.cache:
            kind = _scan_kind(log.kind)
            self.cache[key] = SCAN_CACHE.get(("scan", kind), log.data,
                                             lambda: first_error(log.data, kind=kind))
        return self.cache[key]

    def strong_hits(self, log: LogText, limit: int = 50) -> list:
        """Strong error lines of one log, in order (cached like :meth:`scan`), at most ``limit``."""
        from cockpit.diagnosis.logscan import iter_errors

        key = ("hits", id(log), limit)
        if key not in self.cache:
            kind = _scan_kind(log.kind)

            def hits() -> tuple:
                out = []
                for h in iter_errors(log.data, kind=kind):
                    if h.strong:
                        out.append(h)
                        if len(out) >= limit:
                            break
                return tuple(out)

            self.cache[key] = list(SCAN_CACHE.get(("hits", kind, limit), log.data, hits))
        return self.cache[key]


class ScanCache:
    """Scan results of log bytes, kept across :func:`diagnose` calls (polls), LRU-bounded.

    Keyed by (what, scan kind, length and ``hash`` of the bytes): the hash of a ``bytes``
    object is computed once and cached by CPython, so evidence diagnosed again every poll
    costs one dict lookup instead of a rescan, and a re-read with identical bytes hits too.
    No log bytes are retained; results hold the decoded error lines (≤ 64 KiB each), so the
    cache is bounded both in entries and in the characters of those lines (``max_chars``).
    Equal (length, 64-bit keyed SipHash) for different bytes is the only way to a wrong hit:
    not a practical risk. Thread-safe (pollers diagnose in threads).
    """

    def __init__(self, max_entries: int = 2048, max_chars: int = 16 << 20) -> None:
        from collections import OrderedDict

        self.max_entries = max_entries
        self.max_chars = max_chars
        self._d: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, what: tuple, data: bytes, compute: Callable[[], object]) -> object:
        """The cached result for (``what``, ``data``), else ``compute()`` (outside the lock)."""
        if not isinstance(data, bytes):  # bytearray/memoryview: mutable, not hashable; no caching
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


SCAN_CACHE = ScanCache()  # the process's scan results (Context.scan / strong_hits)


def _scan_kind(kind: str) -> str:
    return kind if kind in {"slurmctld", "slurmd"} else ("events" if kind == "events" else "app")


def log_evidence(log: LogText, hit, tier: int | None = None) -> Evidence:
    """Evidence for a scan hit: file name, absolute line and byte offset so the viewer jumps."""
    return Evidence(
        where=log.name,
        text=hit.text,
        line=log.file_line(hit.line),
        path=log.path,
        offset=log.file_offset(hit.line, hit.offset),
        tier=hit.tier if tier is None else tier,
    )


_loaded = False
_load_lock = threading.Lock()


def _load_rule_modules() -> None:
    """Import the rule modules once. Pollers diagnose in threads, so the flag is set only after
    every module registered its rules: a second thread must never run with half the rules."""
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        # Imported for their @rule side effects.
        from cockpit.diagnosis import modelarts_rules
        from cockpit.diagnosis import slurm_rules
        from cockpit.diagnosis import storage_rules# noqa: F401

        _loaded = True


def iter_subjects(snapshot: Snapshot) -> Iterator[tuple[str, object]]:
    """(subject kind, subject) for every rule subject of ``snapshot``, kind by kind."""
    for kind, subjects in _subjects_by_kind(snapshot):
        for subject in subjects:
            yield kind, subject


# --------------------------------------------------------------------------- running the rules

# Lower = more likely the root cause when severity and confidence tie: infrastructure and
# specific causes before their symptoms (Kill task failed is often the symptom of an epilog
# or a D-state process; a generic application error is the symptom of everything).
_SYMPTOM_RANK: dict[str, int] = {
    "node_drain_kill_task_failed": 1,
    "node_not_responding": 1,
    "node_drain_admin": 2,
    "cancelled_by_user": 2,
    "pending_resources": 3,
    "pending_priority": 3,
    "pending_dependency": 3,
    "application_error": 4,
    "no_failure": 9,
}
_KIND_RANK = {"cluster": 0, "node": 1, "partition": 2, "pool": 2, "job": 3, "training_job": 3, "file": 4}

# Rule exceptions from the last diagnose() (a broken rule must not hide the others).
LAST_RULE_ERRORS: list[str] = []


_KEY_PREFIX: dict[tuple, tuple] = {}  # (severity, confidence, cause, kind) -> the first four of sort_key


def sort_key(f: Finding) -> tuple:
    """(severity rank, -confidence, cause-before-symptom rank, subject kind rank, subject id)."""
    return (*_key_prefix(f), f.subject.id)


def _key_prefix(f: Finding) -> tuple:
    """The first four parts of :func:`sort_key`, one shared tuple per combination."""
    p = (f.severity, f.confidence, f.root_cause, f.subject.kind)
    pre = _KEY_PREFIX.get(p)
    if pre is None:  # a few dozen combinations per site: computed once, shared by 100k findings
        if len(_KEY_PREFIX) > 4096:
            _KEY_PREFIX.clear()
        pre = _KEY_PREFIX[p] = (
            SEVERITY_RANK.get(f.severity, 3),
            -round(f.confidence, 3),
            _SYMPTOM_RANK.get(f.root_cause, 0),
            _KIND_RANK.get(f.subject.kind, 5),
        )
    return pre


def build_context(snapshot: Snapshot, artifacts: Artifacts, now: datetime) -> RuleContext:
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


def _merge(a: Finding, b: Finding) -> Finding:
    """Two findings with one key: keep the stronger, pool their evidence."""
    keep, other = (a, b) if sort_key(a) <= sort_key(b) else (b, a)
    seen = {(e.where, e.line, e.text) for e in keep.evidence}
    extra = tuple(e for e in other.evidence if (e.where, e.line, e.text) not in seen)
    if not extra:
        return keep
    ev = tuple(sorted(keep.evidence + extra, key=lambda e: e.tier))[:12]
    return replace(keep, evidence=ev)


def diagnose(snapshot: Snapshot, artifacts: Artifacts | None = None, now: datetime | None = None,
             kinds: frozenset[str] | None = None) -> list[Finding]:
    """Every registered rule over every subject of ``snapshot``; most likely root cause first.

    ``artifacts``: on-demand sacct rows and log excerpts (None = none). ``now``: the clock
    (defaults to ``snapshot.taken_at``). Findings sharing a :attr:`Finding.key` are merged.
    Order: severity, then confidence, then cause-before-symptom. Pure; never raises for bad
    data (a rule that raises is skipped and noted in :data:`LAST_RULE_ERRORS`; set
    ``COCKPIT_STRICT_RULES=1`` to re-raise). ``kinds``: run only the rules of these subject
    kinds (None = all), for a caller that keeps only some subjects' findings.
    """
    _load_rule_modules()
    ctx = build_context(snapshot, artifacts or Artifacts(), now or snapshot.taken_at)
    strict = bool(os.environ.get("COCKPIT_STRICT_RULES"))
    # Keyed like Finding.key, as a tuple: no string formatted per finding (60k at a big site).
    found: dict[tuple[str, str, str, str], Finding] = {}
    errors: list[str] = []
    for kind, subjects in _subjects_by_kind(snapshot):
        if kinds is not None and kind not in kinds:
            continue
        fns = _RULES.get(kind, ())
        for subject in subjects:
            for fn in fns:
                try:
                    produced = fn(subject, ctx)
                    if produced is None:
                        continue
                    for f in produced:
                        s = f.subject
                        k = (f.root_cause, s.kind, s.source, s.id)
                        prev = found.get(k)
                        found[k] = f if prev is None else _merge(prev, f)
                except Exception as exc:  # noqa: BLE001 - one bad rule must not blind the cockpit
                    if strict:
                        raise
                    errors.append(f"{fn.__module__}.{fn.__name__}: {type(exc).__name__}: {exc}")
    LAST_RULE_ERRORS[:] = errors
    return sort_findings(found.values())


_subject_id = attrgetter("subject.id")


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """``sorted(findings, key=sort_key)``, faster for many findings: grouped by the first four
    parts of the key (a few dozen groups: 50k "will run" findings share one), each group sorted
    by subject id alone (a C-level key). Same order, ties kept in input order."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        pre = _key_prefix(f)
        g = groups.get(pre)
        if g is None:
            groups[pre] = [f]
        else:
            g.append(f)
    out: list[Finding] = []
    for pre in sorted(groups):
        g = groups[pre]
        g.sort(key=_subject_id)
        out += g
    return out


def _subjects_by_kind(snapshot: Snapshot) -> Iterator[tuple[str, Iterable[object]]]:
    """:func:`iter_subjects` grouped by kind (the rule list is looked up once per kind)."""
    yield "job", snapshot.jobs
    yield "node", snapshot.nodes
    yield "partition", snapshot.partitions
    yield "training_job", snapshot.training_jobs
    yield "pool", snapshot.pools
    yield "site", (snapshot,)


def verdicts(findings: Iterable[Finding]) -> dict[tuple[str, str, str], Finding]:
    """(subject kind, source, id) -> the top finding for that subject (table verdict columns)."""
    # One pass, no sort: most subjects have one finding, and only a second one for the same
    # subject needs sort keys. A tie keeps the earlier finding, as a stable sort would.
    out: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        s = f.subject
        k = (s.kind, s.source, s.id)
        prev = out.get(k)
        if prev is None:
            out[k] = f
        elif sort_key(f) < sort_key(prev):
            out[k] = f
    return out


# Job causes that a sick node explains (the job is a symptom of the node).
_NODE_SYMPTOMS = frozenset({
    "node_not_responding", "application_error", "oom_killed", "node_down_unexpected_reboot",
    "gpu_hardware_error", "mpi_network_error", "nccl_communication_error", "disk_full",
    "node_drain_kill_task_failed", "node_drain_prolog_epilog_failed", "pending_launch_failed_held",
})


def correlate(findings: list[Finding]) -> list[Incident]:
    """Fold findings into incidents: one cause, many symptoms.

    A node finding (DRAIN/DOWN with its reason) absorbs the critical/warning job findings
    whose ``related`` names that node and whose cause a sick node explains (NODE_FAIL,
    Killed, OOM, ...): one incident naming the node, the jobs in ``affected``. Other
    critical/warning findings are one incident each; info findings (will run) are none.
    Incident keys are stable across polls (acks survive). Sorted by severity, then oldest.
    """
    # info findings (will run) are never part of an incident: sorting only the rest (~13k of
    # 60k at a big site) keeps the same relative order, the sort being stable
    ordered = sort_findings(f for f in findings if f.severity != "info")
    node_heads: dict[tuple[str, str], Finding] = {}
    for f in ordered:
        if f.subject.kind == "node" and f.severity != "info":
            node_heads.setdefault((f.subject.source, f.subject.id), f)
    grouped: dict[tuple[str, str], list[Finding]] = {k: [] for k in node_heads}
    singles: list[Finding] = []
    for f in ordered:
        if f.subject.kind == "node":
            if node_heads.get((f.subject.source, f.subject.id)) is not f:
                grouped[(f.subject.source, f.subject.id)].append(f)
            continue
        target = None
        if f.root_cause in _NODE_SYMPTOMS:
            for rel in f.related:
                if rel.kind == "node" and (rel.source, rel.id) in node_heads:
                    target = (rel.source, rel.id)
                    break
        if target is not None:
            grouped[target].append(f)
        else:
            singles.append(f)
    singles = _fold_bulk(singles)
    incidents: list[Incident] = []
    for (source, node), head in node_heads.items():
        members = grouped[(source, node)]
        affected = tuple(dict.fromkeys(m.subject for m in members if m.subject.kind != "node"))
        firsts = [x.first_seen for x in (head, *members) if x.first_seen is not None]
        title = head.title + (f" ({len(affected)} job{'s' if len(affected) != 1 else ''} affected)" if affected else "")
        incidents.append(Incident(
            key=f"node|{source}|{node}|{head.root_cause}",
            root_cause=head.root_cause,
            severity=min((head, *members), key=lambda x: SEVERITY_RANK[x.severity]).severity,
            subject=head.subject,
            title=title,
            findings=(head, *members),
            affected=affected,
            first_seen=min(firsts) if firsts else None,
        ))
    for item in singles:
        if isinstance(item, Incident):
            incidents.append(item)
            continue
        f = item
        incidents.append(Incident(key=f.key, root_cause=f.root_cause, severity=f.severity, subject=f.subject,
                                  title=f.title, findings=(f,), affected=f.related, first_seen=f.first_seen))

    def inc_key(i: Incident) -> tuple:
        ts = i.first_seen.timestamp() if i.first_seen else float("inf")
        return (SEVERITY_RANK.get(i.severity, 3), ts, i.key)

    return sorted(incidents, key=inc_key)


# Causes that hit many jobs of one user at once (a QOS/association limit): one incident per
# (cluster, cause, user), or folded into the cluster's surge incident when there is one.
_BULK = frozenset({"pending_qos_limit", "cancelled_by_user"})


def _fold_bulk(singles: list[Finding]) -> list[Finding | Incident]:
    surge = {f.subject.source: f for f in singles if f.root_cause == "priority_qos_surge"}
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    out: list[Finding | Incident] = []
    for f in singles:
        if f.root_cause in _BULK and f.subject.kind == "job":
            user = next((r.id for r in f.related if r.kind == "user"), "")
            head = surge.get(f.subject.source)
            key = (f.subject.source, "surge", "") if head else (f.subject.source, f.root_cause, user)
            groups.setdefault(key, []).append(f)
        elif f.root_cause != "priority_qos_surge":
            out.append(f)
    for (source, cause, user), members in groups.items():
        head = surge.pop(source) if cause == "surge" else members[0]
        rest = [m for m in members if m is not head]
        affected = tuple(dict.fromkeys(m.subject for m in rest))
        firsts = [x.first_seen for x in (head, *rest) if x.first_seen is not None]
        if cause == "surge":
            title, key = head.title, head.key
        else:
            who = f" ({user})" if user else ""
            title = f"{len(members)} jobs{who}: {head.title}" if len(members) > 1 else head.title
            key = f"bulk|{source}|{cause}|{user}" if len(members) > 1 else head.key
        out.append(Incident(
            key=key, root_cause=head.root_cause,
            severity=min((head, *rest), key=lambda x: SEVERITY_RANK[x.severity]).severity,
            subject=head.subject if cause == "surge" or len(members) == 1 else Subject("cluster", source, source),
            title=title, findings=(head, *rest), affected=affected,
            first_seen=min(firsts) if firsts else None,
        ))
    out.extend(surge.values())  # a surge with no member findings stays an incident of its own
    return out


def subject_label(s: Subject) -> str:
    """``job 191``, ``node c05``, ``training job abc``: the subject without its source."""
    return f"{ {'training_job': 'training job'}.get(s.kind, s.kind)} {s.id}"
