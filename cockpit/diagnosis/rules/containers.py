"""Kubernetes, Volcano and docker findings: a pod's reason and the message after it, read
from ``kubectl describe``/``get events`` output, kubelet journals and compose logs.

:func:`explain` reads one line (the reason table is :mod:`cockpit.diagnosis.k8s_reasons`);
a ``CrashLoopBackOff`` is refined by the container's ``Last State`` block (exit 127: the
command is missing; 139: SIGSEGV). :func:`container_logs` files the finding for unclaimed
logs; the ModelArts rules use :func:`explain` for events passed through from Kubernetes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from cockpit.diagnosis import k8s_reasons
from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.rules.platform_logs import (
    STRONG_CONFIDENCE,
    Explained,
    family_hit,
    file_finding,
    line_evidence,
    logs_to_read,
)
from cockpit.i18n import N_, _
from cockpit.model import Evidence, Finding, LogText, Snapshot

NAMES = frozenset(r.name for r in k8s_reasons.REASONS) | {"container_entrypoint"}

_IMAGE = re.compile(r"[Ii]mage \\?\"([^\"\\]+)\\?\"|image (\S+:\S+)")
_ENTRYPOINT = k8s_reasons.K8sReason(
    "container_entrypoint",
    "",
    "container_entrypoint_failed",
    N_("container could not start its command"),
    N_(
        "The image lacks the command or its interpreter (exec: not found, exit 127) or it is not "
        "executable: run the image locally with the same command (docker run --rm -it <image> "
        "<command>), fix the path/shebang or start it with /bin/sh -c."
    ),
)


def explain(text: str, pattern: str = "") -> Explained | None:
    """What one Kubernetes/container line means (``pattern``: the catalogue pattern that
    matched it, when known); None when no reason of the table is on the line."""
    r = (
        _ENTRYPOINT
        if pattern == "container_entrypoint"
        else k8s_reasons.reason(pattern) or k8s_reasons.describe(text)
    )
    if r is None:
        return None
    what = _(r.what)
    phrase = what
    res = k8s_reasons.resources(text)
    if res and r.label in {"queued_insufficient_resources", "pod_evicted"}:
        names = ", ".join(res)
        phrase += (
            " ("
            + (
                _("low on {resources}").format(resources=names)
                if r.label == "pod_evicted"
                else f"Insufficient {names}"  # the scheduler's own word
            )
            + ")"
        )
    m = _IMAGE.search(text)
    if m and r.label == "image_pull_failed":
        phrase += f": {m.group(1) or m.group(2)}"
    return Explained(
        r.label,
        r.severity,
        phrase,
        _("Kubernetes/runtime reports: {what}.").format(what=what),
        _(r.remedy),
    )


# The container's last termination in `kubectl describe pod`: what CrashLoopBackOff hides.
_LAST_STATE = re.compile(rb"Last State:\s+Terminated")
_FIELD = re.compile(rb"^\s+(Reason|Exit Code):\s+(\S+)", re.MULTILINE)


def last_exit(data: bytes) -> tuple[str, int, int] | None:
    """(reason, exit code, byte offset of the block) of the first ``Last State: Terminated``
    block, else None."""
    m = _LAST_STATE.search(data)
    if m is None:
        return None
    block = data[m.end() : m.end() + 600]
    fields = {k.decode(): v.decode() for k, v in _FIELD.findall(block)}
    code = fields.get("Exit Code", "")
    return (fields.get("Reason", ""), int(code), m.start()) if code.isdigit() else None


def _crash_loop(lt: LogText) -> tuple[Explained, Evidence | None] | None:
    got = last_exit(lt.data)
    if got is None:
        return None
    why, code, at = got
    ev = line_evidence(lt, b"Exit Code:", start=at)
    if code in (126, 127) or why in {"StartError", "ContainerCannotRun"}:
        return Explained(
            "container_entrypoint_failed",
            "critical",
            _("container restarts, its command cannot run (exit {code})").format(code=code),
            _(
                "The container's last run ended with exit {code} ({why}): the "
                "command or its interpreter is missing or not executable."
            ).format(code=code, why=why or _("no reason")),
            _(_ENTRYPOINT.remedy),
        ), ev
    # 128+N: the signal that ended the last run (132 SIGILL: built for CPU instructions the
    # node lacks, e.g. TensorFlow's AVX)
    sig = {
        132: "SIGILL",
        134: "SIGABRT",
        136: "SIGFPE",
        137: "SIGKILL",
        139: "SIGSEGV",
        143: "SIGTERM",
    }.get(code)
    what = f"exit {code}" + (f", {sig}" if sig else "")
    return Explained(
        "application_error",
        "critical",
        _("container crashes at every restart ({what}, CrashLoopBackOff)").format(what=what),
        _(
            "The container's last run ended with {what} ({why}); Kubernetes keeps restarting it."
        ).format(what=what, why=why or _("no reason")),
        _(
            "`kubectl logs <pod> --previous` shows the last run's own error; fix that error; "
            "a SIGKILL without OOMKilled is usually a failing liveness probe."
        )
        if code == 137
        else _("`kubectl logs <pod> --previous` shows the last run's own error; fix that error."),
    ), ev


def container_logs(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Unclaimed logs whose first red error is a pod reason or a container runtime failure:
    the reason's meaning with the message's detail (resource, image) and its remedy."""
    for lt, subject in logs_to_read(snap, ctx):
        h = family_hit(lt, ctx, NAMES)
        if h is None:
            continue
        if h.pattern in {"k8s_crashloop", "container_entrypoint"}:
            refined = _crash_loop(lt)
            if refined is not None:
                e, ev = refined
                conf = STRONG_CONFIDENCE if h.strong else 0.75  # the exit code names the cause
                yield file_finding(lt, subject, h, e, extra=(ev,) if ev else (), confidence=conf)
                continue
        e = explain(h.text, h.pattern)
        if e is None:
            continue
        if not h.strong:
            e = dataclasses.replace(e, severity="warning")
        yield file_finding(lt, subject, h, e)
