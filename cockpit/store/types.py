"""What the store hands out: acknowledgements and incidents as the store remembers them.

Plain frozen dataclasses over :mod:`cockpit.model`; no SQL here, so the screens, the report
and the runtime can name them without importing SQLAlchemy.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from datetime import datetime

from cockpit.model import Incident


@dataclass(frozen=True, slots=True)
class Ack:
    """Who acknowledged an incident, when, and the note they left (may be empty)."""

    who: str
    at: datetime
    note: str = ""


@dataclass(frozen=True, slots=True)
class StoredIncident:
    """An incident as the store remembers it, beyond the current poll.

    ``incident`` is its latest form (a refined title, severity or cause updates it in place:
    the key is the failure's identity). ``gone``: no longer in the live data (slurmctld forgot
    the job, the node is no longer drained, the controller answers again); ``resolved_at``: when
    its condition was seen to end. It stays open until acknowledged *and* resolved, or until
    the retention passes.
    """

    incident: Incident
    first_seen: datetime
    last_seen: datetime
    gone: bool = False
    resolved_at: datetime | None = None
    ack: Ack | None = None

    @property
    def key(self) -> str:
        return self.incident.key


def outage_key(source: str, start: datetime) -> str:
    """The incident key of a source outage: the source and when the outage began."""
    return f"source|{source}|{start.isoformat(timespec='seconds')}"


def operator() -> str:
    """Who is at this cockpit: ``$COCKPIT_OPERATOR`` (a team's on-call names), else the login."""
    who = os.environ.get("COCKPIT_OPERATOR", "").strip()
    if who:
        return who[:64]
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        return f"uid{os.getuid()}" if hasattr(os, "getuid") else "operator"
