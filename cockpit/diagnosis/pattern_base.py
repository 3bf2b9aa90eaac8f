"""What an error pattern is (:class:`Pattern`) and how the tables build one: shared by the
strong patterns (:mod:`cockpit.diagnosis.patterns`) and the weak ones
(:mod:`cockpit.diagnosis.patterns_weak`)."""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.model import Severity


@dataclass(frozen=True, slots=True)
class Pattern:
    """One catalogue entry. ``regex`` is bytes; ``kinds`` limits it to log kinds (None = all)."""

    name: str
    regex: bytes
    label: str
    severity: Severity = "critical"
    tier: int = 2
    strong: bool = True
    kinds: frozenset[str] | None = None


DAEMON_KINDS = frozenset({"slurmctld", "slurmd"})
# Generic patterns that would fire on every line of a daemon log.
NOT_DAEMON = frozenset({"app", "stdout", "stderr", "events", "startup", "command", "journal"})


def spec(
    name: str,
    regex: str | bytes,
    label: str,
    severity: Severity = "critical",
    tier: int = 2,
    strong: bool = True,
    kinds: frozenset[str] | None = None,
) -> Pattern:
    raw = regex.encode() if isinstance(regex, str) else regex
    return Pattern(name, raw, label, severity, tier, strong, kinds)


def specs(rows: list[tuple[str, str, str, Severity, int, bool]]) -> tuple[Pattern, ...]:
    """Patterns from a data table's (name, regex, label, severity, tier, strong) rows."""
    return tuple(spec(*row) for row in rows)
