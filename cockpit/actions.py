"""Guarded actions: what an operator may do to a cluster from the cockpit, as exact argv.

Read-only by default (k9s ``--readonly``): a cluster's actions are off unless its config says
``allow_actions = true``, and ``cockpit --readonly`` turns them off whatever the config says.
Each action is built here as the exact argv to run (never a shell string), after every value
in it went through :mod:`cockpit.safety`'s validators; the confirm dialog shows that argv, the
source runs it (:meth:`cockpit.source.Source.run_action`), and :mod:`cockpit.audit` records who
ran what and the outcome. Pure: no I/O here.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from cockpit.i18n import N_
from cockpit.model import Subject
from cockpit.safety import UnsafeValue, validate_job_id, validate_node_name

REASON_MAX = 200  # characters of a drain reason Slurm keeps readable in sinfo -R
# A time limit as scontrol takes it: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS,
# or UNLIMITED; a leading + or - changes the current limit by that much.
_TIME_RE = re.compile(r"^[+-]?(?:\d{1,6}(?::\d{1,2}){0,2}|\d{1,4}-\d{1,2}(?::\d{1,2}){0,2})\Z")


@dataclass(frozen=True, slots=True)
class ActionKind:
    """One action of the catalogue. ``needs``: what the operator must type ("reason", "time",
    or "" for nothing); ``danger``: shown red in the confirm dialog."""

    verb: str
    subject_kind: str
    label: str
    needs: str = ""
    danger: bool = False


CATALOGUE: tuple[ActionKind, ...] = (
    ActionKind("drain", "node", N_("Drain node (running jobs finish, no new ones)"), "reason"),
    ActionKind("resume", "node", N_("Resume node (undrain / back from DOWN)")),
    ActionKind("down", "node", N_("Set node DOWN (its running jobs are killed)"), "reason", True),
    # the dangerous one last: a double-tapped enter must not cancel a job
    ActionKind("hold", "job", N_("Hold pending job")),
    ActionKind("release", "job", N_("Release held job")),
    ActionKind("requeue", "job", N_("Requeue job")),
    ActionKind("timelimit", "job", N_("Change time limit"), "time"),
    ActionKind("cancel", "job", N_("Cancel job (scancel)"), danger=True),
    ActionKind("stop", "training_job", N_("Stop training job"), danger=True),
)


@dataclass(frozen=True, slots=True)
class Action:
    """An action ready to confirm: ``argv`` is exactly what runs (``command`` shows it)."""

    kind: ActionKind
    subject: Subject
    argv: tuple[str, ...]
    value: str = ""  # the reason or time limit typed

    @property
    def command(self) -> str:
        """The argv as one would type it (quoted), for the confirm dialog and the audit."""
        return shlex.join(self.argv) if self.argv else f"{self.kind.verb} {self.subject.id}"


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What running an action gave: ``ok`` is exit status 0 (or the API said yes)."""

    ok: bool | None  # None only for the audit's "issued" line, before the answer
    exit_status: int | None
    output: str  # stdout and stderr, trimmed


def actions_for(subject: Subject, obj: object = None) -> tuple[ActionKind, ...]:
    """The subject's actions, the likely one first: resume for a node already drained or
    down, release for a held job (``obj``: the node or job as last polled, if known)."""
    kinds = [k for k in CATALOGUE if k.subject_kind == subject.kind]
    first = ""
    state = str(getattr(obj, "state", "") or "").upper()
    if subject.kind == "node":
        flags = {str(f).upper() for f in getattr(obj, "flags", ()) or ()}
        if state.startswith(("DOWN", "DRAIN")) or flags & {"DRAIN", "DOWN", "DRAINED"}:
            first = "resume"
    elif subject.kind == "job" and str(getattr(obj, "reason", "")).startswith("JobHeld"):
        first = "release"
    if subject.kind == "job" and state:
        # only what Slurm would do for the job's state: "Release held job" on a job nobody
        # held, or "Requeue" on a pending one, only earn an error from scontrol
        ok = _job_actions(state, str(getattr(obj, "reason", "") or ""))
        kinds = [k for k in kinds if k.verb in ok]
    return tuple(sorted(kinds, key=lambda k: k.verb != first))


_ACTIVE = ("PENDING", "RUNNING", "SUSPENDED", "CONFIGURING", "REQUEUED", "RESIZING")


def _job_actions(state: str, reason: str) -> set[str]:
    """The job actions that make sense in ``state`` (squeue's long state name)."""
    held = reason.startswith("JobHeld")
    out: set[str] = set()
    if state == "PENDING":
        out |= {"release"} if held else {"hold"}
    if state in _ACTIVE:
        out |= {"timelimit", "cancel"}
    if state != "PENDING":
        out.add("requeue")  # a running or ended batch job goes back to the queue
    return out


def validate_reason(reason: str) -> str:
    """A drain/down reason: one printable line, not empty, at most ``REASON_MAX``."""
    text = reason.strip()
    if not text:
        raise UnsafeValue("a reason is required: it shows in sinfo -R for the next shift")
    if len(text) > REASON_MAX:
        raise UnsafeValue(f"reason longer than {REASON_MAX} characters")
    if not text.isprintable():
        # control, bidi, zero-width and line-separator characters: the dialog would show one
        # reason and sinfo -R another (clean() hides them on screen)
        raise UnsafeValue("reason must be one line of printable text")
    return text


def validate_time_limit(value: str) -> str:
    text = value.strip()
    if text.upper() == "UNLIMITED":
        return "UNLIMITED"
    if not _TIME_RE.fullmatch(text):
        raise UnsafeValue(
            f"not a Slurm time limit: {value!r} (minutes, HH:MM:SS, D-HH:MM:SS, +30 or -10)"
        )
    return text


def build(kind: ActionKind, subject: Subject, value: str = "") -> Action:
    """The action's argv with every value validated; raises UnsafeValue with one clear line."""
    if kind.subject_kind != subject.kind:
        raise UnsafeValue(f"{kind.verb} is not an action on a {subject.kind}")
    verb = kind.verb
    if subject.kind == "node":
        node = validate_node_name(subject.id)
        if verb == "resume":
            return Action(kind, subject, ("scontrol", "update", f"NodeName={node}", "State=RESUME"))
        reason = validate_reason(value)
        state = "DRAIN" if verb == "drain" else "DOWN"
        argv = ("scontrol", "update", f"NodeName={node}", f"State={state}", f"Reason={reason}")
        return Action(kind, subject, argv, reason)
    if subject.kind == "job":
        job = validate_job_id(subject.id)
        if verb == "cancel":
            return Action(kind, subject, ("scancel", job))
        if verb == "timelimit":
            limit = validate_time_limit(value)
            argv = ("scontrol", "update", f"JobId={job}", f"TimeLimit={limit}")
            return Action(kind, subject, argv, limit)
        return Action(kind, subject, ("scontrol", verb, job))
    if subject.kind == "training_job":
        # the ModelArts API call, not a command line: the dialog shows what it asks for
        return Action(kind, subject, ())
    raise UnsafeValue(f"no actions on a {subject.kind}")
