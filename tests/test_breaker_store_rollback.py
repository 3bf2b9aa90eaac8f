"""A sync whose transaction the database refuses must not be remembered as written (hostile
test): the store compares each incident's body with the one it last wrote, and an incident it
thought written was only touched (last_seen) at every later poll, its row stale for good."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from cockpit.model import Finding, Incident, Subject
from cockpit.store import open_store, schema
from tests.pg import postgres  # noqa: F401 - the session fixture

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
KEY = "job|lab|22|2026-12-01T08:59"


def _incident(cause: str, title: str) -> Incident:
    s = Subject("job", "lab", "22")
    return Incident(KEY, cause, "critical", s, title, (Finding(cause, "critical", s, title),))


# the database itself refuses the sync's UPDATE once (a full disk, a deadlock with another
# cockpit, a statement timeout): a trigger, so the refusal comes from the real database
REFUSE = {
    "sqlite": [
        "CREATE TRIGGER refuse BEFORE UPDATE OF body ON incidents "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
        "RAISE EXCEPTION 'could not extend file: No space left on device'; END $$ "
        "LANGUAGE plpgsql",
        "CREATE TRIGGER refuse BEFORE UPDATE OF body ON incidents "
        "FOR EACH ROW EXECUTE FUNCTION refuse()",
    ],
}
ALLOW = {"sqlite": ["DROP TRIGGER refuse"], "postgresql": ["DROP TRIGGER refuse ON incidents"]}


def _run(store, statements):
    with store.engine.begin() as conn:
        for s in statements:
            conn.exec_driver_sql(s)


def test_a_refined_cause_the_database_refused_once_is_written_at_the_next_poll(url):
    store = open_store(url)
    dialect = store.engine.dialect.name
    store.sync_incidents(["lab"], [_incident("nonzero_exit", "job 22: non-zero exit")], T0)
    sharp = _incident("command_not_found", "job 22: bwa-mem2: command not found")
    _run(store, REFUSE[dialect])
    store.sync_incidents(["lab"], [sharp], T0 + timedelta(minutes=1))
    assert not store.available  # the refusal is seen
    _run(store, ALLOW[dialect])
    for minute in (2, 3):
        store._tried = 0.0  # its retry pause passed
        store.sync_incidents(["lab"], [sharp], T0 + timedelta(minutes=minute))
    assert store.available
    with store.engine.begin() as conn:
        row = conn.execute(sa.select(schema.incidents.c.title, schema.incidents.c.root_cause)).one()
    assert tuple(row) == ("job 22: bwa-mem2: command not found", "command_not_found")
    # another cockpit reading the team's store sees the refined cause too
    [si] = open_store(url).incidents(T0 + timedelta(minutes=3))
    assert si.incident.root_cause == "command_not_found"
