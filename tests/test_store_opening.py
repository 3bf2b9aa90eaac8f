"""The store the TUI opens on a thread (cockpit.store.opening): the status line never waits
for it, a method waits only when called, and a store that cannot open says why."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from cockpit.errors import UserError
from cockpit.store import open_store
from cockpit.store.opening import OpeningStore

AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def test_while_it_opens_the_status_answers_at_once_and_a_method_waits_only_when_called(
    tmp_path,
):
    gate = threading.Event()
    url = f"sqlite:///{tmp_path}/c.db"

    def slow():
        gate.wait(10)
        return open_store(url)

    store = OpeningStore(slow)
    store.start()
    t0 = time.monotonic()
    assert (store.ready, store.available, store.last_error, store.pending) == (False, True, "", 0)
    cursor = store.cursor  # read on the event loop by asyncio.to_thread(store.cursor, ...)
    assert time.monotonic() - t0 < 1.0  # none of that waited for the gate
    got: list = []
    caller = threading.Thread(target=lambda: got.append(cursor("lab")))
    caller.start()
    caller.join(0.2)
    assert caller.is_alive()  # the call waits for the open
    gate.set()
    caller.join(10)
    assert got == [None] and store.ready and store.available
    store.set_cursor("lab", AT)
    assert open_store(url).cursor("lab") == AT  # the real store took the write
    store.close()


def test_a_store_that_cannot_open_reports_why_and_closes_quietly(tmp_path):
    def refused():
        raise UserError("store sqlite:///x.db: its schema is version 99, newer than this cockpit")

    store = OpeningStore(refused)
    assert store.settled() is not None  # starts the open itself
    assert not store.available and "newer than this cockpit" in store.last_error
    with pytest.raises(UserError, match="newer"):
        store.cursor("lab")
    store.close()  # nothing to close, nothing raised


def test_a_store_never_started_closes_without_opening(tmp_path):
    opened: list[int] = []
    store = OpeningStore(lambda: opened.append(1))
    store.close()
    assert opened == [] and store.pending == 0
