"""The store over SQLAlchemy Core: SQLite by default, PostgreSQL (psycopg 3) for a team.

Every public call is safe to make when the database is gone: the error is caught, the store
says ``available = False`` with ``last_error`` ("store unavailable: ..."), and the cockpit goes
on from memory: this process's incidents (a mirror kept on every sync), the acks it knows (an
ack given meanwhile is queued and written, in order, by the first call that reaches the
database again), evidence and cursors. While down, ``claim`` answers from this process's own
claims (a page sent twice beats a page never sent) and writes them when the store is back.

Calls block on the database: the TUI makes them in threads (``asyncio.to_thread``), never on
the UI loop. A down database is retried at most every ``RETRY_S`` seconds.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

import cockpit.store.codec as codec
import cockpit.store.schema as schema
from cockpit.model import Artifacts, Incident, Snapshot, Subject
from cockpit.safety import redact, scrub
from cockpit.store.held import Held
from cockpit.store.held import folded as _folded
from cockpit.store.types import Ack, StoredIncident, operator

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_S = 2.0  # a down database is tried again at most this often (each poll does)
PRUNE_EVERY_S = 3600.0
# an unchanged incident's last_seen is written when it is this old (or a hundredth of the
# retention, if less): only the retention reads it
LAST_SEEN_STEP_S = 300.0
CHUNK = 500  # keys per IN (...) list: under every backend's bound-parameter limit
MEM_EVIDENCE = 2000  # subjects whose evidence is kept in memory while the store is down
MEM_CLAIMS = 50_000


def _ts(t: datetime) -> float:
    return t.timestamp()


def _dt(x: float | None) -> datetime | None:
    return None if x is None else datetime.fromtimestamp(x, UTC)


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


def _subject_key(s: Subject) -> str:
    return f"{s.kind}|{s.id}"


class StoreDown(Exception):
    """The database cannot be read now (its last error is the message)."""


class _Down(Exception):
    """The database could not be reached (already recorded in ``last_error``)."""


class Store:
    """See :mod:`cockpit.store` for the contract; ``where`` is the URL as shown to people
    (no password)."""

    def __init__(self, engine: sa.Engine, where: str, retention_days: float = 7.0) -> None:
        self.engine = engine
        self.where = where
        self.retention = timedelta(days=retention_days)
        self.available = True
        self.last_error = ""
        self.by = operator()
        self._lock = threading.RLock()
        self._ready = False  # connected once and migrated
        self._tried = 0.0  # monotonic time of the last failed attempt
        self._pruned = 0.0
        self._mirror: dict[str, StoredIncident] = {}
        self._written: dict[str, int] = {}  # key -> digest of the body this process last wrote
        self._held = Held()  # the incidents encoded and read, by their bodies' digests
        # key -> ((first_seen, last_seen, gone, resolved_at) read, what was handed out): a read
        # back hands out the same StoredIncident while its row and ack stay
        self._handed: dict[str, tuple[tuple, StoredIncident]] = {}
        self._acks: dict[str, Ack] = {}
        self._pending: list[tuple[str, str, str, str, float]] = []  # ack ops while down
        self._pending_claims: list[tuple[str, str, float]] = []
        self._claimed: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._evidence: OrderedDict[tuple[str, str], Artifacts] = OrderedDict()
        self._cursors: dict[str, datetime] = {}
        self._outages: dict[str, datetime] = {}  # source -> start of its open outage

    # ------------------------------------------------------------------ plumbing

    def open(self, legacy_acks: Callable[[], Iterable[str]] | None = None) -> None:
        """Connect and migrate now (raises :class:`schema.SchemaTooNew`); a database that
        cannot be reached leaves the store unavailable, retried by later calls."""
        try:
            self._connect(legacy_acks)
        except _Down:
            pass

    def _connect(self, legacy_acks: Callable[[], Iterable[str]] | None = None) -> None:
        try:
            with self.engine.begin() as conn:
                was = schema.migrate(conn, self.where)
                if was == 0 and legacy_acks is not None:
                    self._import_acks(conn, legacy_acks)
        except schema.SchemaTooNew:
            raise
        except sa.exc.SQLAlchemyError as exc:
            self._down(exc)
            raise _Down from exc
        self._ready = True

    def _import_acks(self, conn: sa.Connection, keys: Callable[[], Iterable[str]]) -> None:
        """The acks of the JSON state file the cockpit used before the store (state.json): the
        operators keep them."""
        now = time.time()
        rows = [
            {"key": k, "action": "ack", "who": self.by, "at": now, "note": "from state.json"}
            for k in sorted(set(keys()))
        ]
        if rows:
            conn.execute(sa.insert(schema.acks), rows)

    def _down(self, exc: BaseException) -> None:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        with self._lock:
            self.available = False
            self.last_error = f"store unavailable: {redact(first)[:200]}"
            self._tried = time.monotonic()
        log.warning("%s (%s)", self.last_error, self.where)

    def _db(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run ``fn`` in a transaction; raises :class:`_Down` when the database is away (the
        queued acks and claims go first, in the same transaction, once it is back)."""
        if not self.available and time.monotonic() - self._tried < RETRY_S:
            raise _Down
        if not self._ready:
            try:
                self._connect()
            except schema.SchemaTooNew as exc:  # swapped under us: stay away from it
                self._down(exc)
                raise _Down from exc
        try:
            with self.engine.begin() as conn:
                if self._pending or self._pending_claims:
                    self._flush(conn)
                result = fn(conn)
        except sa.exc.SQLAlchemyError as exc:
            self._down(exc)
            raise _Down from exc
        if not self.available:
            with self._lock:
                self.available, self.last_error = True, ""
            log.warning("store available again (%s)", self.where)
        return result

    def _flush(self, conn: sa.Connection) -> None:
        with self._lock:
            ops, claims = list(self._pending), list(self._pending_claims)
        for action, key, who, note, at in ops:
            conn.execute(
                sa.insert(schema.acks).values(key=key, action=action, who=who, at=at, note=note)
            )
        for key, channel, at in claims:
            conn.execute(self._insert_claim(conn, key, channel, at))
        with self._lock:  # only what was written: an ack queued meanwhile stays queued
            del self._pending[: len(ops)]
            del self._pending_claims[: len(claims)]

    def _insert(self, conn: sa.Connection, table: sa.Table) -> Any:
        return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)

    def close(self) -> None:
        if self._pending or self._pending_claims:  # one last try for acks given while it was away
            self._tried = 0.0
            try:
                self._db(lambda conn: None)
            except _Down:
                pass
        self.engine.dispose()

    # ------------------------------------------------------------------ incidents

    def sync_incidents(
        self, sources: Sequence[str], incidents: Sequence[Incident], now: datetime
    ) -> None:
        live = {i.key: i for i in incidents if i.subject.source in sources or not sources}
        memo: dict[str, Any] = {}
        self._sync_mirror(sources, live, now, memo)
        try:
            written = self._db(lambda conn: self._sync_db(conn, sources, live, now, memo))
        except _Down:
            return
        # only what the database took: a body remembered from a refused transaction made the
        # next polls compare equal and leave its row stale for good
        self._written.update(written)

    def _sync_mirror(
        self,
        sources: Sequence[str],
        live: dict[str, Incident],
        now: datetime,
        memo: dict[str, Any] | None = None,
    ):
        cutoff = now - self.retention
        # as the database's last_seen: made again once a step, not every poll
        stale = now - timedelta(seconds=min(LAST_SEEN_STEP_S, self.retention.total_seconds() / 100))
        with self._lock:
            m, acks = self._mirror, self._acks
            for key, inc in live.items():
                prev = m.get(key)
                ack = acks.get(key)
                if (
                    prev is not None
                    and prev.incident is inc
                    and not prev.gone
                    and prev.ack == ack
                    and prev.last_seen >= stale
                ):
                    continue
                first = prev.first_seen if prev else (inc.first_seen or now)
                m[key] = StoredIncident(inc, first, now, False, None, ack)
            folded = set(_folded([k for k in m if k not in live], live, memo))
            for key, si in list(m.items()):
                if si.last_seen < cutoff or key in folded:
                    del m[key]
                elif key not in live and si.incident.subject.source in sources and not si.gone:
                    m[key] = StoredIncident(si.incident, si.first_seen, si.last_seen, True, now)

    def _sync_db(
        self,
        conn: sa.Connection,
        sources: Sequence[str],
        live: dict[str, Incident],
        now: datetime,
        memo: dict[str, Any] | None = None,
    ) -> dict[str, int]:
        """Returns the digests of the bodies written (key -> digest), to remember once the
        transaction commits."""
        t = schema.incidents
        at = _ts(now)
        touched = sorted(set(sources) | {i.subject.source for i in live.values()})
        known = {
            r.key: r
            for r in conn.execute(
                sa.select(t.c.key, t.c.source, t.c.gone, t.c.last_seen).where(
                    t.c.source.in_(touched)
                )
            )
        }
        new, changed, seen = [], [], []
        written: dict[str, int] = {}
        # an unchanged incident's last_seen is written once a step, not every poll: only the
        # retention reads it, and ~1,000 rows rewritten every poll cost more than the changes
        stale = at - min(LAST_SEEN_STEP_S, self.retention.total_seconds() / 100)
        self._held.fresh = fresh = {}
        for key, inc in live.items():
            # the pipeline hands back the same Incident while nothing in it changed: encoding
            # (and redacting) every member of a 1000-job incident each poll is not needed
            enc = self._held.encoded.get(key)
            body = None
            if enc is not None and enc[0] is inc:
                dg, title = enc[1], enc[2]
            else:
                fresh[key] = value = codec.incident_json(inc)
                body = codec.dumps(value)
                dg = codec.digest(body)
                # a column a team's database keeps and anyone may SELECT: as the body,
                # redacted and cleaned of escapes (a job name's OSC 52 must not reach psql)
                title = scrub(inc.title, 1000, repeated=True)
                self._held.encoded[key] = (inc, dg, title)
            written[key] = dg
            row = known.get(key)
            if row is not None and not row.gone and self._written.get(key) == dg:
                if row.last_seen < stale:
                    seen.append(key)
                continue
            fields = {
                "source": inc.subject.source,
                "kind": inc.subject.kind,
                "root_cause": inc.root_cause,
                "severity": inc.severity,
                "title": title,
                # the body is not kept between polls: made again for a row that needs it
                "body": codec.incident_to_json(inc) if body is None else body,
                "digest": dg,
                "last_seen": at,
                "gone": False,
                "resolved_at": None,
            }
            if row is None:
                first = _ts(inc.first_seen or now)
                new.append({"key": key, "first_seen": first, **fields})
            else:
                changed.append({"k": key, **fields})
        if new:
            # another cockpit may insert the same key meanwhile: its row wins, ours updates
            ins = self._insert(conn, t)
            conn.execute(ins.on_conflict_do_nothing(index_elements=["key"]), new)
        if changed:
            conn.execute(
                sa.update(t)
                .where(t.c.key == sa.bindparam("k"))
                .values({c: sa.bindparam(c) for c in changed[0] if c != "k"}),
                changed,
            )
        for part in _chunks(seen):
            conn.execute(sa.update(t).where(t.c.key.in_(part)).values(last_seen=at))
        left = [k for k, r in known.items() if r.source in sources and k not in live]
        # a job that joined a group (the array's other tasks failed too) left its own incident
        # for the group's: it is not gone, and one job is not two incidents
        folded = _folded(left, live, memo)
        for part in _chunks(folded):
            conn.execute(sa.delete(t).where(t.c.key.in_(part)))
        # ... and a group whose other jobs left the live data leaves its last job an incident
        # of its own: the gone group no longer lists the jobs that are still live elsewhere
        # (the groups leaving at this sync only: one gone earlier is not read and decoded again
        # every poll)
        leaving = [k for k in left if k.startswith("group|") and not known[k].gone]
        folded += self._dissolved(conn, leaving, live)
        gone = [k for k in left if not known[k].gone and k not in folded]
        for part in _chunks(gone):
            conn.execute(
                sa.update(t)
                .where(t.c.key.in_(part))
                .values(gone=True, resolved_at=sa.func.coalesce(t.c.resolved_at, at))
            )
        for k in (*gone, *folded):
            self._written.pop(k, None)
            self._held.encoded.pop(k, None)
        codec.forget_findings(e[0] for e in list(self._held.encoded.values()))
        if time.monotonic() - self._pruned > PRUNE_EVERY_S:
            self._prune(conn, now)
        return written

    def _dissolved(
        self, conn: sa.Connection, keys: Sequence[str], live: dict[str, Incident]
    ) -> list[str]:
        """Groups gone from the live data (``keys``) without the jobs still live in another
        incident; a group left with none is deleted. Returns the keys deleted."""
        if not keys:
            return []
        t = schema.incidents
        jobs = {
            (s.kind, s.source, s.id)
            for inc in live.values()
            for s in (inc.subject, *inc.affected)
            if s.kind == "job"
        }
        deleted = []
        rows = conn.execute(sa.select(t.c.key, t.c.digest, t.c.body).where(t.c.key.in_(keys)))
        for key, dg, body in rows:
            inc = self._held.decode(key, body, dg)
            if inc is None:
                continue
            kept = tuple(s for s in inc.affected if (s.kind, s.source, s.id) not in jobs)
            if len(kept) == len(inc.affected):
                continue
            if not kept:
                deleted.append(key)  # deleted below, together
                continue
            title = re.sub(r"^\d+ jobs", f"{len(kept)} jobs", inc.title)
            out = replace(
                inc,
                affected=kept,
                title=title,
                findings=tuple(f for f in inc.findings if f.subject in kept) or inc.findings[:1],
            )
            body = codec.incident_to_json(out)
            conn.execute(
                sa.update(t)
                .where(t.c.key == key)
                # the column as _sync_db writes it: the body's title is only redacted, and a
                # job name's escapes (or a NUL, which PostgreSQL refuses: every later sync
                # failed on it) must not reach the column
                .values(
                    title=scrub(title, 1000, repeated=True),
                    body=body,
                    digest=codec.digest(body),
                )
            )
        # with churn, ~50 groups of starved jobs dissolve a poll at 10k jobs: one DELETE each
        # cost more than their decoding
        for part in _chunks(deleted):
            conn.execute(sa.delete(t).where(t.c.key.in_(part)))
        return deleted

    def _prune(self, conn: sa.Connection, now: datetime) -> None:
        """Forget what is past the retention: incidents not seen since, and what hangs off them
        (their acks, deliveries, evidence), closed outages."""
        cutoff = _ts(now - self.retention)
        t = schema.incidents
        old = [r.key for r in conn.execute(sa.select(t.c.key).where(t.c.last_seen < cutoff))]
        for part in _chunks(old):
            conn.execute(sa.delete(schema.acks).where(schema.acks.c.key.in_(part)))
            conn.execute(sa.delete(t).where(t.c.key.in_(part)))
        conn.execute(sa.delete(schema.deliveries).where(schema.deliveries.c.claimed_at < cutoff))
        conn.execute(sa.delete(schema.evidence).where(schema.evidence.c.at < cutoff))
        conn.execute(sa.delete(schema.outages).where(schema.outages.c.ended < cutoff))
        self._pruned = time.monotonic()

    def incidents(self, now: datetime) -> list[StoredIncident]:
        """Open incidents: not (acknowledged and resolved), seen within the retention."""
        try:
            rows, bodies, acks = self._db(
                lambda conn: (*self._rows(conn, now), self._latest_acks(conn))
            )
        except _Down:
            with self._lock:
                acks = dict(self._acks)
                cutoff = now - self.retention
                found = [
                    StoredIncident(
                        si.incident,
                        si.first_seen,
                        si.last_seen,
                        si.gone,
                        si.resolved_at,
                        acks.get(si.key),
                    )
                    for si in self._mirror.values()
                    if si.last_seen >= cutoff
                ]
            return [si for si in found if not (si.ack and si.resolved_at)]
        with self._lock:
            self._acks = acks | {
                op[1]: Ack(op[2], _dt(op[4]), op[3]) for op in self._pending if op[0] == "ack"
            }
            for op in self._pending:
                if op[0] == "unack":
                    self._acks.pop(op[1], None)
            acks = dict(self._acks)
        out = []
        held = self._held
        if len(held.decoded) > 2 * len(rows) + 1000:  # forget what left the store
            live = {r[0] for r in rows}
            held.decoded = {k: v for k, v in held.decoded.items() if k in live}
            self._handed = {k: v for k, v in self._handed.items() if k in live}
        handed = self._handed
        for key, dg, *row in rows:  # row: first_seen, last_seen, gone, resolved_at
            got = bodies.get(key)
            inc = held.decode(key, got[1], got[0]) if got is not None else held.known(key, dg)
            if inc is None:
                continue
            ack = acks.get(key)
            if ack is not None and row[3] is not None:
                continue
            kept = handed.get(key)
            if kept is not None and kept[0] == row:
                si = kept[1]
                if si.incident is inc and si.ack == ack:
                    out.append(si)
                    continue
            si = StoredIncident(inc, _dt(row[0]), _dt(row[1]), bool(row[2]), _dt(row[3]), ack)
            handed[key] = (row, si)
            out.append(si)
        held.fresh = {}
        return out

    def _rows(
        self, conn: sa.Connection, now: datetime
    ) -> tuple[list[Any], dict[str, tuple[int | None, str]]]:
        """The open rows without their bodies, and the bodies (key -> (digest, body)) this
        process does not hold decoded or wrote itself: a poll read every open incident's body
        back, ~1,400 at 10k jobs, of which a few hundred had changed (all written here)."""
        t = schema.incidents
        cutoff = _ts(now - self.retention)
        rows = list(
            conn.execute(
                sa.select(
                    t.c.key, t.c.digest, t.c.first_seen, t.c.last_seen, t.c.gone, t.c.resolved_at
                ).where(t.c.last_seen >= cutoff)
            )
        )
        holds = self._held.holds
        want = [key for key, dg, *_ in rows if not holds(key, dg)]
        bodies: dict[str, tuple[int | None, str]] = {}
        for part in _chunks(want):
            for key, dg, body in conn.execute(
                sa.select(t.c.key, t.c.digest, t.c.body).where(t.c.key.in_(part))
            ):
                bodies[key] = (dg, body)
        return rows, bodies

    # ------------------------------------------------------------------ acknowledgements

    def _latest_acks(self, conn: sa.Connection) -> dict[str, Ack]:
        a = schema.acks
        latest = sa.select(sa.func.max(a.c.id)).group_by(a.c.key).scalar_subquery()
        rows = conn.execute(sa.select(a).where(a.c.id.in_(latest), a.c.action == "ack"))
        return {r.key: Ack(r.who, _dt(r.at), r.note) for r in rows}

    def ack(self, key: str, who: str, note: str, now: datetime) -> None:
        self._ack_op("ack", key, who, redact(note.strip())[:500], now)

    def unack(self, key: str, who: str, now: datetime) -> None:
        self._ack_op("unack", key, who, "", now)

    def _ack_op(self, action: str, key: str, who: str, note: str, now: datetime) -> None:
        with self._lock:
            if action == "ack":
                self._acks[key] = Ack(who, now, note)
            else:
                self._acks.pop(key, None)
            # queued first: a failed write leaves it queued, a good one flushes it
            self._pending.append((action, key, who, note, _ts(now)))
        try:
            self._db(lambda conn: None)
        except _Down:
            pass

    def acks(self) -> dict[str, Ack]:
        try:
            found = self._db(self._latest_acks)
        except _Down:
            with self._lock:
                return dict(self._acks)
        with self._lock:
            self._acks = found
            return dict(found)

    def known_acks(self) -> dict[str, Ack]:
        """The acks as last read or given here: no database round trip (the UI thread)."""
        with self._lock:
            return dict(self._acks)

    @property
    def pending(self) -> int:
        """Acks given while the store was down, not written yet."""
        return len(self._pending)

    # ------------------------------------------------------------------ evidence

    def save_evidence(
        self, source: str, subject: Subject, artifacts: Artifacts, now: datetime
    ) -> None:
        """The first capture is kept (what ``scontrol show job`` said while it still answered)."""
        mem = (source, _subject_key(subject))
        with self._lock:
            if mem not in self._evidence:
                self._evidence[mem] = artifacts
                while len(self._evidence) > MEM_EVIDENCE:
                    self._evidence.popitem(last=False)
        body = codec.artifacts_to_json(artifacts)

        def write(conn: sa.Connection) -> None:
            ins = self._insert(conn, schema.evidence).values(
                source=source, subject=mem[1], at=_ts(now), body=body
            )
            conn.execute(ins.on_conflict_do_nothing(index_elements=["source", "subject"]))

        try:
            self._db(write)
        except _Down:
            pass

    def evidence(self, source: str, subject: Subject) -> Artifacts | None:
        e = schema.evidence
        mem = (source, _subject_key(subject))
        try:
            body = self._db(
                lambda conn: conn.execute(
                    sa.select(e.c.body).where(e.c.source == source, e.c.subject == mem[1])
                ).scalar()
            )
        except _Down:
            with self._lock:
                return self._evidence.get(mem)
        if body is None:
            return None
        try:
            return codec.artifacts_from_json(body)
        except (ValueError, KeyError, TypeError):
            log.warning("store: unreadable evidence for %s %s", source, mem[1])
            return None

    # ------------------------------------------------------------------ published snapshots

    def publish(self, snap: Snapshot) -> None:
        """The team's poller: ``snap`` is its source's latest (followers read it)."""
        import cockpit.store.snapshots as snapshots

        body = snapshots.encode(snap)
        at = _ts(snap.taken_at)

        def write(conn: sa.Connection) -> None:
            ins = self._insert(conn, schema.published).values(
                source=snap.source, taken_at=at, body=body
            )
            conn.execute(
                ins.on_conflict_do_update(
                    index_elements=["source"], set_={"taken_at": at, "body": body}
                )
            )

        try:
            self._db(write)
        except _Down:
            pass

    def published_at(self, source: str) -> datetime | None:
        """When ``source``'s published snapshot was taken (None: none published). Raises
        :class:`StoreDown` when the database cannot be read."""
        p = schema.published
        try:
            at = self._db(
                lambda conn: conn.execute(
                    sa.select(p.c.taken_at).where(p.c.source == source)
                ).scalar()
            )
        except _Down as exc:
            raise StoreDown(self.last_error or "store unavailable") from exc
        return _dt(at)

    def published(self, source: str) -> Snapshot | None:
        """``source``'s published snapshot. Raises :class:`StoreDown` when the database cannot
        be read, ValueError when the body cannot."""
        import cockpit.store.snapshots as snapshots

        p = schema.published
        try:
            body = self._db(
                lambda conn: conn.execute(sa.select(p.c.body).where(p.c.source == source)).scalar()
            )
        except _Down as exc:
            raise StoreDown(self.last_error or "store unavailable") from exc
        return snapshots.decode(body) if body is not None else None

    # ------------------------------------------------------------------ deliveries

    def _insert_claim(self, conn: sa.Connection, key: str, channel: str, at: float) -> Any:
        ins = self._insert(conn, schema.deliveries).values(
            alert_key=key, channel=channel, claimed_at=at, by=self.by
        )
        # RETURNING names the row only when this INSERT made it (rowcount is not portable)
        return ins.on_conflict_do_nothing(index_elements=["alert_key", "channel"]).returning(
            schema.deliveries.c.alert_key
        )

    def claim(self, alert_key: str, channel: str, now: datetime) -> bool:
        """True for exactly one caller per (alert, channel) across every process on this store."""
        mem = (alert_key, channel)
        try:
            won = self._db(
                lambda conn: (
                    conn.execute(self._insert_claim(conn, alert_key, channel, _ts(now))).first()
                    is not None
                )
            )
        except _Down:
            with self._lock:
                if mem in self._claimed:
                    return False
                self._pending_claims.append((alert_key, channel, _ts(now)))
                if len(self._pending_claims) > MEM_CLAIMS:  # a long outage: the oldest go
                    del self._pending_claims[: len(self._pending_claims) - MEM_CLAIMS]
                won = True
        with self._lock:
            self._claimed[mem] = None
            while len(self._claimed) > MEM_CLAIMS:
                self._claimed.popitem(last=False)
        return won

    def claimed_since(self, prefix: str, channel: str, since: datetime) -> bool:
        """Whether an alert key starting with ``prefix`` was claimed on ``channel`` after
        ``since`` by any process (a group's last update page: the group interval is the
        team's, not each cockpit's). False when the store does not answer."""
        d = schema.deliveries.c
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = (
            sa.select(d.alert_key)
            .where(d.alert_key.like(like, escape="\\"), d.channel == channel)
            .where(d.claimed_at > _ts(since))
            .limit(1)
        )
        try:
            return self._db(lambda conn: conn.execute(query).first() is not None)
        except _Down:
            return False

    # ------------------------------------------------------------------ cursors and outages

    def cursor(self, source: str) -> datetime | None:
        c = schema.cursors
        try:
            at = self._db(
                lambda conn: conn.execute(sa.select(c.c.at).where(c.c.source == source)).scalar()
            )
        except _Down:
            return self._cursors.get(source)
        return _dt(at)

    def set_cursor(self, source: str, at: datetime) -> None:
        self._cursors[source] = at

        def write(conn: sa.Connection) -> None:
            ins = self._insert(conn, schema.cursors).values(source=source, at=_ts(at))
            conn.execute(ins.on_conflict_do_update(index_elements=["source"], set_={"at": _ts(at)}))

        try:
            self._db(write)
        except _Down:
            pass

    def open_outage(self, source: str, now: datetime, error: str) -> datetime:
        """The start of ``source``'s open outage: one another cockpit opened, else now. Every
        cockpit thus keys the same outage incident (``source|NAME|START``) alike."""
        o = schema.outages

        def find_or_open(conn: sa.Connection) -> float:
            started = conn.execute(
                sa.select(sa.func.min(o.c.started)).where(o.c.source == source, o.c.ended.is_(None))
            ).scalar()
            if started is not None:
                return started
            ins = self._insert(conn, o).values(
                source=source, started=_ts(now), error=redact(error)[:1000]
            )
            conn.execute(ins.on_conflict_do_nothing(index_elements=["source", "started"]))
            return _ts(now)

        with self._lock:
            known = self._outages.get(source)
        if known is not None:
            return known
        try:
            start = _dt(self._db(find_or_open)) or now
        except _Down:
            start = now
        with self._lock:
            self._outages[source] = start
        return start

    def close_outage(self, source: str, now: datetime) -> None:
        """The source answers again: its outage ends now."""
        o = schema.outages
        with self._lock:
            self._outages.pop(source, None)
        try:
            self._db(
                lambda conn: conn.execute(
                    sa.update(o)
                    .where(o.c.source == source, o.c.ended.is_(None))
                    .values(ended=_ts(now))
                )
            )
        except _Down:
            pass
