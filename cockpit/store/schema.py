"""The store's tables and their versions (SQLAlchemy Core; SQLite and PostgreSQL alike).

Versioning is a one-row ``schema_version`` table and an ordered list of steps: a database at
version N gets steps N+1.. applied in one transaction when a cockpit opens it (PostgreSQL: under
an advisory lock, so two cockpits starting together do not both migrate). A database made by a
newer cockpit is refused with one line (:class:`SchemaTooNew`) rather than misread.

Times are stored as float seconds since the epoch (UTC): portable, comparable, no zone games
between SQLite's text and PostgreSQL's timestamptz.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from cockpit.errors import UserError

metadata = sa.MetaData()

schema_version = sa.Table(
    "schema_version", metadata, sa.Column("version", sa.Integer, nullable=False)
)

incidents = sa.Table(
    "incidents",
    metadata,
    sa.Column("key", sa.String, primary_key=True),
    sa.Column("source", sa.String, nullable=False, index=True),
    sa.Column("kind", sa.String, nullable=False),  # subject kind: job, node, cluster ...
    sa.Column("root_cause", sa.String, nullable=False),
    sa.Column("severity", sa.String, nullable=False),
    sa.Column("title", sa.String, nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # the latest Incident as JSON (codec.py)
    sa.Column("first_seen", sa.Float, nullable=False),
    sa.Column("last_seen", sa.Float, nullable=False),
    sa.Column("gone", sa.Boolean, nullable=False, default=False),
    sa.Column("resolved_at", sa.Float, nullable=True),
    # the body's digest (codec.digest): a reader holding a body of this digest does not read
    # the body again (a poll re-read every open incident's body; v4). NULL: not known yet
    sa.Column("digest", sa.BigInteger, nullable=True),
)

# what a sync reads of every row of its source each poll (which exist, which are gone, when
# last seen), from the index alone: the row itself lies behind its body (v5)
incidents_known = sa.Index(
    "ix_incidents_known",
    incidents.c.source,
    incidents.c.key,
    incidents.c.gone,
    incidents.c.last_seen,
)

# every ack and unack, in order: the latest row per key is the incident's state, the rest is
# the history an operator can be asked about
acks = sa.Table(
    "acks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("key", sa.String, nullable=False, index=True),
    sa.Column("action", sa.String, nullable=False),  # ack | unack
    sa.Column("who", sa.String, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("note", sa.Text, nullable=False, default=""),
)

# one row per (alert, channel): the INSERT that succeeds is the one process that sends it
deliveries = sa.Table(
    "deliveries",
    metadata,
    sa.Column("alert_key", sa.String, primary_key=True),
    sa.Column("channel", sa.String, primary_key=True),
    sa.Column("claimed_at", sa.Float, nullable=False),
    sa.Column("by", sa.String, nullable=False),
)

evidence = sa.Table(
    "evidence",
    metadata,
    sa.Column("source", sa.String, primary_key=True),
    sa.Column("subject", sa.String, primary_key=True),  # "kind|id"
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # redacted Artifacts as JSON
)

outages = sa.Table(
    "outages",
    metadata,
    sa.Column("source", sa.String, primary_key=True),
    sa.Column("started", sa.Float, primary_key=True),
    sa.Column("ended", sa.Float, nullable=True),
    sa.Column("error", sa.Text, nullable=False, default=""),
)

cursors = sa.Table(
    "cursors",
    metadata,
    sa.Column("source", sa.String, primary_key=True),
    sa.Column("at", sa.Float, nullable=False),
)


# the latest good snapshot of each source, as the team's one poller polled it (snapshots.py):
# what the TUIs that follow the store read instead of asking slurmctld
published = sa.Table(
    "published",
    metadata,
    sa.Column("source", sa.String, primary_key=True),
    sa.Column("taken_at", sa.Float, nullable=False),
    sa.Column("body", sa.LargeBinary, nullable=False),
)


class SchemaTooNew(UserError):
    """The database was made by a newer cockpit: refuse it, do not guess."""


# ------------------------------------------------------------------ steps (append only)


def _v1(conn: sa.Connection) -> None:
    """Incidents, acks and deliveries (the first release of the store)."""
    for t in (schema_version, acks, deliveries):
        t.create(conn, checkfirst=True)
    # v1's incidents had no gone/resolved_at (added by v2, below)
    sa.Table(
        "incidents",
        sa.MetaData(),
        *(
            sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
            for c in incidents.columns
            if c.name not in ("gone", "resolved_at", "digest")
        ),
    ).create(conn, checkfirst=True)


def _v2(conn: sa.Connection) -> None:
    """Lifecycle (gone, resolved_at), evidence, source outages and sacct cursors."""
    conn.execute(sa.text("ALTER TABLE incidents ADD COLUMN gone BOOLEAN NOT NULL DEFAULT FALSE"))
    conn.execute(sa.text("ALTER TABLE incidents ADD COLUMN resolved_at FLOAT"))
    for t in (evidence, outages, cursors):
        t.create(conn, checkfirst=True)


def _v3(conn: sa.Connection) -> None:
    """Published snapshots: one poller for a team, the TUIs follow the store."""
    published.create(conn, checkfirst=True)


def _v4(conn: sa.Connection) -> None:
    """The body's digest: a poll reads back only the bodies that changed since it last read
    them. The rows already there get theirs (computed here: neither backend has the hash)."""
    conn.execute(sa.text("ALTER TABLE incidents ADD COLUMN digest BIGINT"))
    from cockpit.store.codec import digest

    t = sa.table("incidents", sa.column("key"), sa.column("body"), sa.column("digest"))
    rows = [{"k": k, "d": digest(b)} for k, b in conn.execute(sa.select(t.c.key, t.c.body))]
    if rows:
        conn.execute(
            sa.update(t).where(t.c.key == sa.bindparam("k")).values(digest=sa.bindparam("d")),
            rows,
        )


def _v5(conn: sa.Connection) -> None:
    """An index for the sync's read of its source's rows (key, gone, last_seen): SQLite walked
    past each row's body to reach them, ~1,400 rows every poll at 10k jobs."""
    incidents_known.create(conn, checkfirst=True)


STEPS: tuple[Callable[[sa.Connection], None], ...] = (_v1, _v2, _v3, _v4, _v5)
VERSION = len(STEPS)
_LOCK_ID = 0x636F636B  # "cock": PostgreSQL advisory lock held while migrating


def current_version(conn: sa.Connection) -> int:
    """0 for an empty database."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    v = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
    return int(v or 0)


def migrate(conn: sa.Connection, where: str, upto: int = VERSION) -> int:
    """Bring the database to ``upto`` (default: this cockpit's version) inside ``conn``'s
    transaction; returns the version it was at. Raises :class:`SchemaTooNew`."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
    was = current_version(conn)
    if was > VERSION:
        raise SchemaTooNew(
            f"store {where}: its schema is version {was}, newer than this cockpit's ({VERSION}); "
            "upgrade cockpit, or point [store] url elsewhere"
        )
    for step in STEPS[was:upto]:
        step(conn)
    if upto > was:
        conn.execute(sa.delete(schema_version))
        conn.execute(sa.insert(schema_version).values(version=upto))
    return was
