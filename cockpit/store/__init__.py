"""The store: incidents, acknowledgements, evidence, alert deliveries and source outages.

A SQLite file in the state dir by default (``cockpit.db``; the demo site ``cockpit-demo.db``,
so demo acks never reach a real site); PostgreSQL when ``[store] url = "postgresql://..."``
is set, so an on-call team shares incidents, acks and alert deliveries::

    [store]
    url = "postgresql://cockpit@db.example/cockpit"   # or "sqlite:///path/to/cockpit.db"
    retention_days = 7

The contract (implemented by :class:`cockpit.store.sql.Store`)::

    sync_incidents(sources, incidents, now)   upsert by key; absent ones of `sources` -> gone
    incidents(now) -> [StoredIncident]        open: not (acked and resolved), within retention
    ack(key, who, note, now) / unack(key, who, now) / acks() -> {key: Ack}
    save_evidence(source, subject, artifacts, now) / evidence(source, subject)
    claim(alert_key, channel, now) -> bool    True for exactly one caller across processes
    cursor(source) / set_cursor(source, at)   the last good poll the store remembers
    open_outage(source, now, error) -> start / close_outage(source, now)
    available, last_error                     "store unavailable: ..."; calls never raise then

This module stays import-light: SQLAlchemy and psycopg load inside :func:`open_store`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from cockpit.i18n import _
from cockpit.store.types import Ack, StoredIncident, operator

if TYPE_CHECKING:
    from cockpit.store.sql import Store

__all__ = ["Ack", "StoredIncident", "default_store_path", "open_store", "operator", "shown_url"]


def default_store_path(demo: bool = False) -> Path:
    import platformdirs

    name = "cockpit-demo.db" if demo else "cockpit.db"
    return Path(platformdirs.user_state_dir("cockpit")) / name


def shown_url(url: str) -> str:
    """``url`` without its password, for messages and the status line."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: the error that follows names it
        return url


def open_store(
    url: str | None = None,
    *,
    demo: bool = False,
    config: object | None = None,
    retention_days: float | None = None,
    legacy_acks: Path | None = None,
) -> Store:
    """Open (create, migrate) the store. ``url`` None: ``[store] url`` from ``config`` (a loaded
    :class:`cockpit.config.Config`), else the SQLite file in the state dir.

    Raises :class:`~cockpit.errors.UserError` for a URL that is not one, or a database made by
    a newer cockpit. A database that cannot be reached is not an error: the store starts
    unavailable and works from memory until it can be reached.
    ``legacy_acks``: the JSON state file whose acks a new database takes over (default: the
    state dir's ``state.json``, ``state-demo.json`` for the demo).
    """
    import sqlalchemy as sa

    from cockpit.errors import UserError
    from cockpit.store.acks import AckStore, default_state_path, demo_state_path
    from cockpit.store.sql import Store

    cfg = getattr(config, "store", None)
    if url is None and cfg is not None and not demo:
        url = cfg.url or None
    if retention_days is None:
        retention_days = cfg.retention_days if cfg is not None else 7.0
    if url is None:
        path = default_store_path(demo)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if path.exists():  # made by an older cockpit with the umask's 0644: ours to tighten
                path.chmod(0o600)
        except OSError as exc:
            raise UserError(
                _("store {path}: {error}").format(path=path, error=exc.strerror or exc)
            ) from None
        url = f"sqlite:///{path}"
    try:
        parsed = sa.engine.make_url(url)
        parsed.port  # noqa: B018 - a port that is not a number fails here, not at first use
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise UserError(
            _("[store] url {url} is not a database URL: {error}").format(
                url=shown_url(url), error=exc
            )
        ) from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
        engine = sa.create_engine(
            parsed, pool_pre_ping=True, pool_size=2, connect_args={"connect_timeout": 5}
        )
    elif backend == "sqlite":
        engine = _sqlite_engine(parsed)
    else:
        raise UserError(
            _("[store] url {url}: only sqlite:/// and postgresql:// work").format(
                url=shown_url(url)
            )
        )
    store = Store(engine, shown_url(url), retention_days)
    legacy = legacy_acks or (demo_state_path() if demo else default_state_path())
    store.open(lambda: AckStore(legacy).acked if legacy.exists() else ())
    return store


def _create_private(path: Path) -> None:
    """``path`` created empty with mode 0600 unless it exists."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def _sqlite_engine(url):
    import sqlalchemy as sa

    if url.database and url.database != ":memory:":
        from cockpit.errors import UserError

        folder = Path(url.database).expanduser().parent
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            # incident bodies quote job output and logs: a new store is the user's alone
            # (SQLite gives its -wal and -shm files the database file's mode); an existing one
            # keeps the mode its owner chose (a store a group shares)
            _create_private(Path(url.database).expanduser())
        except OSError as exc:
            raise UserError(
                f"[store] url sqlite:///{url.database}: {exc.strerror or exc}"
            ) from None
    # a TUI and a cron `cockpit watch` share the file: wait for each other's writes, and let
    # readers go on while one writes (WAL)
    kw = {}
    if not url.database or url.database == ":memory:":
        kw["poolclass"] = sa.pool.StaticPool  # one in-memory database, whichever thread asks
    engine = sa.create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, **kw)

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:
        # pysqlite commits before every DDL statement on its own, so a migration's ALTERs were
        # not one transaction (an interrupted one left "duplicate column" for good) and two
        # first opens raced: take the transactions from the driver (SQLAlchemy's recipe) and
        # begin each one IMMEDIATE, so a migration is atomic and one writer goes at a time
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        if url.database and url.database != ":memory:":
            cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine
