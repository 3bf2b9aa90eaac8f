"""A group of failed jobs dissolving (its other jobs left the live data) rewrote its title column
from its stored body: redacted there, never cleaned of escapes (hostile test)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Finding, Subject
from cockpit.store import open_store, schema
from tests.pg import postgres  # noqa: F401 - the session fixture

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TITLE = "SIGSEGV in train \x1b]52;c;cm0gLXJmIH4=\x07 \u202eevil --api_key s3cretKey done"


def _failed(jid: str, title: str = TITLE) -> Finding:
    return Finding(
        "application_error", "critical", Subject("job", "hpc", jid), title, first_seen=T0
    )


def _titles(store) -> list[str]:
    with store.engine.begin() as conn:
        return list(conn.execute(sa.select(schema.incidents.c.title)).scalars())


def test_a_dissolving_groups_title_column_stays_redacted_and_clean(url):
    # the title column is what psql and dashboards read: an OSC 52 there is replayed on them
    store = open_store(url)
    store.sync_incidents(["hpc"], correlate([_failed(str(i)) for i in range(10)]), T0)
    store.sync_incidents(["hpc"], correlate([_failed("9")]), T0)  # nine left: it dissolves
    titles = _titles(store)
    assert "9 jobs: SIGSEGV in train  evil --api_key <redacted> done" in titles
    for t in titles:
        assert "s3cretKey" not in t and not any(c in t for c in "\x1b\x07\u202e"), repr(t)


def test_a_group_with_a_nul_in_its_title_dissolving_leaves_postgresql_usable(postgres):  # noqa: F811
    # PostgreSQL refuses a NUL in text: the dissolving group's UPDATE failed the whole sync,
    # and the next one tried the same group again: the store stayed unavailable, poll after poll
    store = open_store(postgres.fresh_database("breaker_nul_dissolve"))
    title = "prog\x00zz: command not found"
    store.sync_incidents(["hpc"], correlate([_failed(str(i), title) for i in range(10)]), T0)
    assert store.available, store.last_error
    for minute in (1, 2):
        store._tried = 0.0  # its retry pause passed
        later = T0 + timedelta(minutes=minute)
        store.sync_incidents(["hpc"], correlate([_failed("9", title)]), later)
        assert store.available, store.last_error
    assert "9 jobs: progzz: command not found" in _titles(store)
