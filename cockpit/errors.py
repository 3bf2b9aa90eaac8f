"""Errors a user can fix: shown as one line, exit status 2, no traceback."""

from __future__ import annotations

from cockpit.i18n import _

# Exit status, one scheme for every command (README "Exit status"). scan-log alone answers as
# grep does (0 an error line found, 1 none, 2 unreadable): it is used where grep would be.
EXIT_OK = 0
EXIT_FOUND = 1  # something to act on: a critical finding or incident, an alert, a source unread
EXIT_USAGE = 2  # a usage or configuration error (UserError)
EXIT_NO_SOURCE = 3  # no source answered: an empty answer must not read as "all clear"
EXIT_PIPE = 141  # the reader of the output left (`| head`), as any Unix tool


def source_status(answered: int, asked: int) -> int:
    """The exit status of a command that asked ``asked`` sources and heard ``answered``:
    none -> EXIT_NO_SOURCE, some -> EXIT_FOUND (what it printed is partial), all -> EXIT_OK."""
    if asked and not answered:
        return EXIT_NO_SOURCE
    return EXIT_FOUND if answered < asked else EXIT_OK


class UserError(Exception):
    """Bad config, unknown cluster, missing command: the message says what and where."""


class NoSourceAnswered(UserError):
    """The one source a command needed did not answer (unreachable, timed out): said in one
    line like a UserError, exit status EXIT_NO_SOURCE."""


class ConfigError(UserError):
    """A config file problem; the message names file, line (when known) and key."""

    def __init__(
        self, message: str, path: str = "", line: int | None = None, key: str = ""
    ) -> None:
        where = path + (f":{line}" if line else "")
        prefix = f"{where}: " if where else ""
        keypart = f"[{key}] " if key else ""
        super().__init__(f"{prefix}{keypart}{message}")
        self.path, self.line, self.key, self.message = path, line, key, message


class ConfigErrors(ConfigError):
    """Several config problems at once, one line each (the first's file, line and key)."""

    def __init__(self, errors: list[ConfigError]) -> None:
        # in the file's order, as an editor shows it (the checks run table by table);
        # problems without a line (a missing file, a whole table) first
        errors = sorted(errors, key=lambda e: e.line or 0)
        first = errors[0]
        super().__init__("", first.path, first.line, first.key)
        self.errors = errors
        head = _("{n} problems:").format(n=len(errors))
        self.args = (head + "\n" + "\n".join(f"  {e}" for e in errors),)

    def __str__(self) -> str:
        return self.args[0]


class ParseError(ValueError):
    """Command output or a file could not be parsed; the project's only parser exception.

    ``where`` names the command or file, ``line`` the 1-based line when known.
    """

    def __init__(self, message: str, where: str = "", line: int | None = None) -> None:
        loc = where + (f":{line}" if line else "")
        super().__init__(f"{loc}: {message}" if loc else message)
        self.where, self.line = where, line
