"""Human formatting the widgets share with the cockpit's views."""

from __future__ import annotations


def age(seconds: float | None) -> str:
    """Human age: ``42s``, ``7m``, ``3h12m``, ``2d4h``."""
    if seconds is None:
        return "-"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600}h"
