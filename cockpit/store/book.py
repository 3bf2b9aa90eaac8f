"""The acknowledgements as the app uses them: instant on the UI thread, written behind it.

:class:`AckBook` answers ``acked`` / ``is_acked`` / ``ack_of`` from memory and writes an
ack or unack to the store on one background thread (in order), so ``a`` never waits for a
database a network away. Without a store it wraps the JSON :class:`~cockpit.store.acks.AckStore`
(tests, and a cockpit built without one).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from cockpit.store.acks import AckStore
from cockpit.store.types import Ack, operator

log = logging.getLogger(__name__)


class AckBook:
    def __init__(self, store: Any = None, legacy: AckStore | None = None) -> None:
        self.store = store
        self.legacy = legacy if store is None else None
        if store is None and self.legacy is None:
            self.legacy = AckStore()
        self.load_error = self.legacy.load_error if self.legacy is not None else ""
        self.who = operator()
        self._local: dict[str, Ack | None] = {}  # given here, not yet read back from the store
        self._read: dict[str, Ack] = {}
        self._writer: ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------ reading

    def update(self, acks: dict[str, Ack]) -> None:
        """The store's acks as read back after a poll (every cockpit's, on a shared store)."""
        self._read = dict(acks)
        # an ack given here stays as given until the store agrees (written and read back);
        # from then on the store's word is the truth (another operator may unack it)
        for key, mine in list(self._local.items()):
            if (mine is None) == (key not in self._read):
                del self._local[key]

    def _all(self) -> dict[str, Ack]:
        if self.legacy is not None:
            return {k: Ack("", datetime.fromtimestamp(0, UTC)) for k in self.legacy.acked}
        merged = dict(self._read)
        for k, a in self._local.items():
            if a is None:
                merged.pop(k, None)
            else:
                merged[k] = a
        return merged

    @property
    def acked(self) -> frozenset[str]:
        if self.legacy is not None:
            return self.legacy.acked
        return frozenset(self._all())

    def is_acked(self, key: str) -> bool:
        return key in self.acked

    def ack_of(self, key: str) -> Ack | None:
        """Who acknowledged ``key``, when, with what note (None: not acknowledged)."""
        return self._all().get(key) if self.legacy is None else None

    # ------------------------------------------------------------------ writing

    def toggle(self, key: str, note: str = "", now: datetime | None = None) -> bool:
        """Acknowledge ``key`` (with ``note``) or take the acknowledgement back; returns the
        new state. The store write happens behind (queued while the store is down)."""
        if self.legacy is not None:
            return self.legacy.toggle(key)
        now = now or datetime.now(UTC)
        if self.is_acked(key):
            self._local[key] = None
            self._write(self.store.unack, key, self.who, now)
            return False
        self._local[key] = Ack(self.who, now, note.strip())
        self._write(self.store.ack, key, self.who, note, now)
        return True

    def _write(self, fn, *args) -> None:
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cockpit-acks")
        fut = self._writer.submit(fn, *args)
        fut.add_done_callback(_log_failure)

    def flush(self, timeout: float | None = None) -> None:
        """Wait for the writes handed to the background thread (quitting, tests)."""
        if self._writer is not None:
            self._writer.submit(lambda: None).result(timeout)


def _log_failure(fut) -> None:
    exc = fut.exception()
    if exc is not None:  # the store catches its own errors: this is a bug
        log.error("writing an acknowledgement failed", exc_info=exc)
