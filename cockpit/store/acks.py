"""Acknowledged incidents, kept across sessions in a small JSON file.

File: ``platformdirs.user_state_dir("cockpit")/state.json`` (override with ``path``;
the demo site uses ``state-demo.json`` so its acks never reach a real site),
shape ``{"version": 1, "acked": ["<incident key>", ...]}``. A missing or corrupt file
means "nothing acknowledged" (the cockpit must start anyway); writes are atomic.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)


def default_state_path() -> Path:
    return Path(platformdirs.user_state_dir("cockpit")) / "state.json"


def demo_state_path() -> Path:
    """Acknowledgements of the demo site: apart from the real ones (``state-demo.json``)."""
    return default_state_path().with_name("state-demo.json")


class AckStore:
    """Incident keys the operator acknowledged (``a`` in the incident view)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_state_path()
        self._acked: set[str] = set()
        self.load_error = ""
        self._load()

    @property
    def acked(self) -> frozenset[str]:
        return frozenset(self._acked)

    def is_acked(self, key: str) -> bool:
        return key in self._acked

    def toggle(self, key: str) -> bool:
        """Acknowledge ``key`` or take the acknowledgement back; saves; returns the new state."""
        if key in self._acked:
            self._acked.discard(key)
        else:
            self._acked.add(key)
        self.save()
        return key in self._acked

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            keys = data.get("acked", []) if isinstance(data, dict) else []
            self._acked = {k for k in keys if isinstance(k, str)}
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            self.load_error = f"{self.path}: {exc}"
            log.warning("ignoring unreadable state file %s", self.path)

    def save(self) -> None:
        """Write atomically (temp file + rename). An unwritable dir is logged, not raised."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".state-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"version": 1, "acked": sorted(self._acked)}, fh, indent=1)
            os.replace(tmp, self.path)
        except OSError:
            log.warning("cannot write state file %s", self.path, exc_info=True)
