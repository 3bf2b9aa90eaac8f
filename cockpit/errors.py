"""Errors a user can fix: shown as one line, exit status 2, no traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad config, unknown cluster, missing command: the message says what and where."""


class ConfigError(UserError):
    """A config file problem; the message names file, line (when known) and key."""

    def __init__(
        self, message: str, path: str = "", line: int | None = None, key: str = ""
    ) -> None:
        where = path + (f":{line}" if line else "")
        prefix = f"{where}: " if where else ""
        keypart = f"[{key}] " if key else ""
        super().__init__(f"{prefix}{keypart}{message}")
        self.path, self.line, self.key = path, line, key


class ConfigErrors(ConfigError):
    """Several config problems at once, one line each (the first's file, line and key)."""

    def __init__(self, errors: list[ConfigError]) -> None:
        first = errors[0]
        super().__init__("", first.path, first.line, first.key)
        self.errors = errors
        self.args = (f"{len(errors)} problems:\n" + "\n".join(f"  {e}" for e in errors),)

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
