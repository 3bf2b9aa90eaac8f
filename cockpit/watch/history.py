"""The alert history: an append-only JSON-lines file that survives restarts.

Default path: ``platformdirs.user_state_dir("cockpit")/alerts.jsonl``. When the file
passes ``max_bytes`` it is renamed to ``alerts.jsonl.1`` (older rotations shift to
``.2`` ... up to ``backups``) and a new one starts, so the history stays bounded.
One JSON object per line (:meth:`Alert.to_json`); a torn or foreign line is skipped
on load, never fatal.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path

import platformdirs

from cockpit.safety import redact
from cockpit.text import json_line, lines
from cockpit.watch.alerts import Alert

DEFAULT_MAX_BYTES = 1024 * 1024


def default_history_path() -> Path:
    return Path(platformdirs.user_state_dir("cockpit")) / "alerts.jsonl"


class AlertHistory:
    """Append and load alerts. Thread-safe within a process; appends are single
    ``O_APPEND`` writes of whole lines, so a cron ``cockpit watch`` and the TUI can share it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        backups: int = 2,
    ) -> None:
        self.path = Path(path) if path is not None else default_history_path()
        self.max_bytes = max_bytes
        self.backups = max(1, backups)
        self.skipped = 0  # malformed lines seen by the last load
        self._lock = threading.Lock()

    def _rotated(self, i: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{i}")

    def append(self, alerts: Iterable[Alert]) -> None:
        """Append alerts (rotating first when the file is over ``max_bytes``).

        Raises OSError when the state directory cannot be written; callers in the
        TUI catch it and show it on the status line.
        """
        # alert texts quote log lines, which may hold credentials; redacting the values (not the
        # serialised line) keeps each line valid JSON whatever the secret's quotes and escapes
        data = "".join(json_line(redact(a.to_json())) + "\n" for a in alerts).encode()
        if not data:
            return
        with self._lock:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            if size and size + len(data) > self.max_bytes:
                self._rotate()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    def _rotate(self) -> None:
        for i in range(self.backups, 1, -1):
            older = self._rotated(i - 1)
            if older.exists():
                os.replace(older, self._rotated(i))
        os.replace(self.path, self._rotated(1))

    def load(self, last: int | None = 200) -> list[Alert]:
        """The newest ``last`` alerts (all if None), oldest first, from rotated files as needed."""
        self.skipped = 0
        files = [self.path, *(self._rotated(i) for i in range(1, self.backups + 1))]
        newest_first: list[list[Alert]] = []
        count = 0
        for f in files:
            if last is not None and count >= last:
                break
            try:
                text = _read_text(f)
            except FileNotFoundError:
                continue
            keep: deque[Alert] | list[Alert] = (
                deque(maxlen=last - count) if last is not None else []
            )
            for line in lines(text):
                if not line.strip():
                    continue
                try:
                    keep.append(Alert.from_json(json.loads(line)))
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                    # RecursionError: a line of thousands of nested brackets (json recurses)
                    self.skipped += 1
            newest_first.append(list(keep))
            count += len(keep)
        out: list[Alert] = []
        for chunk in reversed(newest_first):
            out.extend(chunk)
        return out


def _read_text(path: Path) -> str:
    """A history file's text. Anything but a regular file is refused with an OSError (which
    the caller shows as one line): a named pipe without a writer would block forever, and a
    device (``/dev/zero``) would be read until memory ran out."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return fh.read().decode("utf-8", errors="replace")
