"""GPU host findings: NVIDIA Xid lines, the driver asking for a GPU reset, and host-memory
(DIMM/EDAC/mcelog) errors in dmesg, journals and bundle files.

An application Xid (31: the program touched a bad address) leaves the node healthy; a
hardware Xid (79: the GPU fell off the bus) means drain it. Host-memory errors are their own
cause with their own remedy, never a GPU fault. Tables: :mod:`cockpit.diagnosis.xid_codes`.
"""

from __future__ import annotations

from collections.abc import Iterator

from cockpit.diagnosis import xid_codes
from cockpit.diagnosis.context import SCAN_CACHE, RuleContext
from cockpit.diagnosis.logscan import ScanHit, iter_errors
from cockpit.diagnosis.rules.platform_logs import (
    Explained,
    family_hit,
    file_finding,
    logs_to_read,
    scan_kind,
)
from cockpit.i18n import _
from cockpit.model import Finding, LogText, Snapshot

NAMES = frozenset(
    name for name, *_ in xid_codes.pattern_specs(True) + xid_codes.pattern_specs(False)
)


def explain(text: str) -> Explained | None:
    """What one GPU/host-memory line means; None for other lines."""
    v = xid_codes.describe(text)
    if v is None:
        return None
    host = v.label == "host_memory_error"
    what = (
        _("The host's own memory (DIMM) reported errors; this is not a GPU fault.")
        if host
        else _("The GPU driver logged {what}.").format(what=v.what)
    )
    return Explained(v.label, v.severity, v.what, what, v.remedy)


def _worst_line(lt: LogText, ctx: RuleContext) -> ScanHit | None:
    """The log's GPU/host-memory line that decides: the first critical fault (a hardware Xid,
    a reset request, an uncorrectable DIMM error) wherever it is, else the first such line.
    An application Xid 13 followed by a hardware Xid 109 is a node to drain, not a bug."""
    first = family_hit(lt, ctx, NAMES, anywhere=True)
    if first is None or first.severity == "critical":
        return first
    kind = scan_kind(lt.kind)

    def worst() -> ScanHit | None:
        for n, h in enumerate(
            iter_errors(lt.data, kind=kind, start_offset=first.offset, start_line=first.line)
        ):
            if n >= 500:
                break
            if h.pattern in NAMES and h.severity == "critical" and h.strong:
                return h
        return None

    return SCAN_CACHE.get(("gpu_worst", kind), lt.data, worst) or first


def gpu_host_logs(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Unclaimed logs and node logs with a GPU or host-memory fault. On a node's log the
    finding is the node's, whatever its Slurm state: a GPU that fell off the bus on an IDLE
    node still needs draining."""
    for lt, subject in logs_to_read(snap, ctx, with_nodes=True):
        h = _worst_line(lt, ctx)
        if h is None:
            continue
        e = explain(h.text)
        if e is not None:
            yield file_finding(lt, subject, h, e)
