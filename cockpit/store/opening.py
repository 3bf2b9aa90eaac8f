"""The store while it opens: the TUI's first rows do not wait for it.

Opening the store imports SQLAlchemy and checks (or migrates) the schema: ~0.5 s of a
2-core machine's time, which used to come before the first frame and so before the first
squeue. :class:`OpeningStore` runs :func:`cockpit.store.open_store` on a thread the app
starts with the pollers (``start()``), while the first poll waits for squeue; the first rows
need no store. Until it is open:

* ``available``, ``last_error`` and ``pending`` answer at once (the status line reads them on
  the UI thread every frame): available, no error, nothing queued;
* everything else waits for the open (the pollers and the ack writer call the store on
  threads) and then is the store's own;
* ``error`` is what the open raised (a database made by a newer cockpit, a ``[store] url``
  that is not one): the app quits on it and ``cockpit`` prints it as one line, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any


class OpeningStore:
    """A store opened on a thread by ``opener`` (:func:`cockpit.store.open_store` with its
    arguments bound), standing in for it meanwhile."""

    def __init__(self, opener: Callable[[], Any]) -> None:
        self._opener = opener
        self._store: Any = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def start(self) -> None:
        """Begin opening (once; later calls do nothing)."""
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._open, name="cockpit-store-open", daemon=True
                )
                self._thread.start()

    def _open(self) -> None:
        try:
            self._store = self._opener()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits (the app quits)
            self._error = exc
        finally:
            self._done.set()

    @property
    def ready(self) -> bool:
        """The open has ended (opened or failed)."""
        return self._done.is_set()

    @property
    def error(self) -> BaseException | None:
        return self._error

    def wait(self) -> Any:
        """The store, once open (starting the open if nobody did); raises what the open
        raised."""
        error = self.settled()
        if error is not None:
            raise error
        return self._store

    def settled(self) -> BaseException | None:
        """Wait for the open to end; what it raised, or None (for a thread that only needs
        to know)."""
        self.start()
        self._done.wait()
        return self._error

    # read on the UI thread every frame: never wait there
    @property
    def available(self) -> bool:
        if not self.ready:
            return True
        return self._error is None and bool(self._store.available)

    @property
    def last_error(self) -> str:
        if not self.ready:
            return ""
        if self._error is not None:
            return f"store: {self._error}"
        return self._store.last_error

    @property
    def pending(self) -> int:
        return getattr(self._store, "pending", 0) if self._store is not None else 0

    def close(self) -> None:
        """Close the store if it was opened (waits for an open under way; never raises for
        a failed one)."""
        if self._thread is None:
            return
        self._done.wait()
        if self._store is not None:
            self._store.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends: not the store's
            raise AttributeError(name)
        if name in _CALLS and not self.ready:
            # ``asyncio.to_thread(store.cursor, ...)`` reads the method on the event loop:
            # the wait belongs to the call, on the thread that makes it
            return partial(self._call, name)
        return getattr(self.wait(), name)

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.wait(), name)(*args, **kwargs)


# the store's methods (cockpit.store's contract): read before the open ends, each waits for
# it only when called
_CALLS = frozenset(
    {
        "sync_incidents",
        "incidents",
        "ack",
        "unack",
        "acks",
        "known_acks",
        "save_evidence",
        "evidence",
        "claim",
        "cursor",
        "set_cursor",
        "open_outage",
        "close_outage",
    }
)
