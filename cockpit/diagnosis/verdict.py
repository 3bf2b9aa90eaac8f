"""One verdict per subject: the finding every view shows for it.

The dashboard's verdict column, the drill-down, the CLI, alerts, incidents and bundles all
read this one answer, so they never contradict each other. They agree because they ask the
same question the same way: a subject with evidence is diagnosed in the context of the whole
snapshot (``diagnose(..., focus=subject)``: the other jobs, partitions and nodes a verdict may
depend on, and the site rules' findings about it), the thresholds live in the rules (alerts
read them there), and the top finding is picked here. ``tests/test_verdict_consistency.py``
checks it over every subject of the demo site.
"""

from __future__ import annotations

from collections.abc import Iterable

from cockpit.diagnosis.engine import sort_key
from cockpit.model import Finding


def verdicts(findings: Iterable[Finding]) -> dict[tuple[str, str, str], Finding]:
    """(subject kind, source, id) -> the top finding for that subject (table verdict columns)."""
    # One pass, no sort: most subjects have one finding, and only a second one for the same
    # subject needs sort keys. A tie keeps the earlier finding, as a stable sort would.
    out: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        s = f.subject
        k = (s.kind, s.source, s.id)
        prev = out.get(k)
        if prev is None:
            out[k] = f
        elif sort_key(f) < sort_key(prev):
            out[k] = f
    return out
