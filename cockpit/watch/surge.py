"""Recent PENDING counts per source, kept across polls, so the engine can tell a surge of
pending jobs from the site's normal queue (``Snapshot.pending_history``; the rule is
:func:`cockpit.diagnosis.rules.slurm_site.priority_surge`)."""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from datetime import datetime, timedelta

from cockpit.model import Snapshot

WINDOW = timedelta(hours=2)  # how far back the baseline looks
MAX_SAMPLES = 240  # per source: a 30 s poll over 2 h


class PendingHistory:
    """(taken_at, PENDING count) of each good Slurm poll per source, bounded by :data:`WINDOW`
    and :data:`MAX_SAMPLES`. Thread-safe: pollers call it from worker threads."""

    def __init__(self, window: timedelta = WINDOW, max_samples: int = MAX_SAMPLES) -> None:
        self.window = window
        self._by_source: dict[str, deque[tuple[datetime, int]]] = {}
        self._max = max_samples
        self._lock = threading.Lock()

    def observe(self, snap: Snapshot) -> Snapshot:
        """``snap`` with the counts of the polls before it; this poll's count is kept for the
        next. A failed poll or a ModelArts snapshot passes through unchanged."""
        if snap.kind != "slurm" or snap.error is not None:
            return snap
        count = sum(1 for j in snap.jobs if j.state == "PENDING")
        with self._lock:
            q = self._by_source.setdefault(snap.source, deque(maxlen=self._max))
            while q and (q[0][0] < snap.taken_at - self.window or q[-1][0] > snap.taken_at):
                # too old, or the clock went back (a replay restarted): start over from here
                if q[-1][0] > snap.taken_at:
                    q.clear()
                    break
                q.popleft()
            before = tuple(q)
            q.append((snap.taken_at, count))
        return dataclasses.replace(snap, pending_history=before)


PENDING_HISTORY = PendingHistory()  # the process's, shared by the TUI's and watch's pollers
