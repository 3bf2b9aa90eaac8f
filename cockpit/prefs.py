"""What the operator chose in the UI and expects to find again: the columns each pane shows.

One small JSON file, ``platformdirs.user_state_dir("cockpit")/ui.json``:
``{"version": 1, "hidden_columns": {"queue": ["QOS", "NODES"], ...}}``. A missing or damaged
file means the defaults (the cockpit must start anyway); writes are atomic.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)


def default_prefs_path() -> Path:
    return Path(platformdirs.user_state_dir("cockpit")) / "ui.json"


class Prefs:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_prefs_path()
        self.hidden: dict[str, list[str]] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            hidden = data.get("hidden_columns", {}) if isinstance(data, dict) else {}
            self.hidden = {
                str(k): [str(x) for x in v] for k, v in hidden.items() if isinstance(v, list)
            }
        except FileNotFoundError:
            pass
        except (OSError, ValueError, AttributeError, RecursionError):
            log.warning("ignoring unreadable UI preferences %s", self.path)

    def hidden_columns(self, pane: str) -> list[str]:
        return list(self.hidden.get(pane, ()))

    def set_hidden_columns(self, pane: str, labels: list[str]) -> str:
        """Remember ``labels`` for ``pane``; returns "" or why it could not be saved."""
        self.hidden[pane] = sorted(labels)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".ui-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"version": 1, "hidden_columns": self.hidden}, fh, indent=1)
            os.replace(tmp, self.path)
        except OSError as exc:
            return f"cannot save column choice to {self.path}: {exc.strerror or exc}"
        return ""
