"""``a`` in a drill-down: pick an action, see the exact command, confirm, see what came of it.

Two modal screens: :class:`ActionMenu` lists what can be done to the subject (drain, resume,
down a node; cancel, hold, release, requeue, change the time limit of a job; stop a training
job); :class:`ConfirmAction` asks for the reason or time limit when the action needs one,
shows the command exactly as it will run (updated as one types), runs it on ``enter`` and
shows the result; ``esc`` leaves without running anything. Every run is written to the audit
journal (:mod:`cockpit.audit`), whatever its outcome.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from cockpit import audit
from cockpit.actions import Action, ActionKind, ActionResult, actions_for, build
from cockpit.errors import UserError
from cockpit.i18n import N_, _
from cockpit.text import clean

if TYPE_CHECKING:
    from cockpit.model import Subject
    from cockpit.source import Source

_PLACEHOLDER = {
    "reason": N_("reason (required; shows in sinfo -R), e.g. hw: fan FAN2 failed, ticket 4411"),
    "time": N_("new time limit: 2:00:00, 1-00:00:00, +30 (minutes more), UNLIMITED"),
}


class ActionMenu(ModalScreen["ActionKind | None"]):
    """The actions of one subject; ``enter`` picks one, ``esc`` closes."""

    BINDINGS = [
        Binding("escape,q", "dismiss_none", N_("Close")),
        # the cockpit's j/k everywhere else: here they moved nothing and enter ran the first
        Binding("j", "move('cursor_down')", N_("Down"), show=False),
        Binding("k", "move('cursor_up')", N_("Up"), show=False),
    ]
    DEFAULT_CSS = """
    ActionMenu { align: center middle; }
    ActionMenu > Vertical { width: 64; max-width: 100%; height: auto; border: round $accent;
                            background: $surface; padding: 0 1; }
    ActionMenu OptionList { height: auto; max-height: 12; }
    """

    def __init__(self, subject: Subject, obj: object = None) -> None:
        super().__init__()
        self.subject = subject
        self.kinds = actions_for(subject, obj)
        self.oom = getattr(obj, "state", None) == "OUT_OF_MEMORY"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text(
                    _("Act on {subject}").format(subject=clean(self.subject.label(), 60)),
                    style="bold",
                )
            )
            if self.oom and any(k.verb == "requeue" for k in self.kinds):
                # requeue re-runs the same script with the same --mem: the likely outcome is
                # the same OOM kill, so say so where the operator picks it
                yield Static(
                    Text(
                        _(
                            "OOM-killed: a requeue asks for the same memory and will likely be "
                            "killed again; resubmit with a larger --mem (see MaxRSS in the job "
                            "view)"
                        ),
                        style="yellow",
                    ),
                    id="oom-hint",
                )
            yield OptionList(
                *[
                    Option(Text(_(k.label), style="red" if k.danger else ""), id=k.verb)
                    for k in self.kinds
                ]
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(next(k for k in self.kinds if k.verb == event.option.id))

    def action_move(self, how: str) -> None:
        getattr(self.query_one(OptionList), f"action_{how}")()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ConfirmAction(ModalScreen["ActionResult | None"]):
    """Shows the exact command; ``enter`` runs it once, ``esc`` cancels (or closes after)."""

    BINDINGS = [
        Binding("escape", "close", N_("Cancel")),
        Binding("enter", "run", N_("Run"), show=False),
    ]
    DEFAULT_CSS = """
    ConfirmAction { align: center middle; }
    ConfirmAction > Vertical { width: 90; max-width: 100%; height: auto; border: round $warning;
                               background: $surface; padding: 0 1; }
    ConfirmAction.-danger > Vertical { border: round $error; }
    ConfirmAction #command { margin: 1 0; }
    ConfirmAction #result { height: auto; max-height: 10; }
    """

    def __init__(
        self,
        kind: ActionKind,
        subject: Subject,
        source: Source,
        audit_path: Path | None = None,
    ) -> None:
        super().__init__(classes="-danger" if kind.danger else "")
        self.kind, self.subject, self.source = kind, subject, source
        self.audit_path = audit_path
        self.action_: Action | None = None
        self.result: ActionResult | None = None
        self.running = False

    def compose(self) -> ComposeResult:
        with Vertical():
            what = _("{subject} on {source}").format(
                subject=clean(self.subject.id, 60), source=clean(self.source.name, 40)
            )
            yield Static(Text(f"{_(self.kind.label)}: {what}", style="bold"))
            if self.kind.needs:
                yield Input(placeholder=_(_PLACEHOLDER[self.kind.needs]), id="value")
            yield Static(id="command")
            yield Static(id="result")
            yield Static(Text(_("enter: run it   esc: cancel"), style="dim"), id="hint")

    def on_mount(self) -> None:
        self._preview("")
        if self.kind.needs:
            self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._preview(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_run()

    def _preview(self, value: str) -> None:
        """Build the action from what is typed; show the command or why it is refused."""
        command = self.query_one("#command", Static)
        try:
            self.action_ = build(self.kind, self.subject, value)
        except UserError as exc:
            self.action_ = None
            command.update(Text(f"✗ {exc}", style="yellow"))
            return
        shown = self.action_.command if self.action_.argv else self._api_call()
        command.update(Text.assemble((_("will run: "), "bold"), (clean(shown, 400), "bold cyan")))

    def _api_call(self) -> str:
        return (
            f"ModelArts API: POST /v2/{{project}}/training-jobs/{self.subject.id}/actions terminate"
        )

    def action_run(self) -> None:
        if self.result is not None:  # it ran: enter closes
            self.dismiss(self.result)
            return
        if self.running:
            return
        if self.action_ is None:
            self.app.bell()
            return
        self.running = True
        for box in self.query(Input):
            box.disabled = True
        self.query_one("#hint", Static).update(Text(_("running…"), style="dim"))
        self._run(self.action_)

    @work(exclusive=True, group="action")
    async def _run(self, action: Action) -> None:
        from cockpit.source import Unsupported

        command = action.command if action.argv else self._api_call()
        # journaled before it goes out: quitting while it runs must not leave it unrecorded
        await self._journal(command, ActionResult(None, None, "issued"))
        try:
            result = await self.source.run_action(action)
        except Unsupported as exc:
            result = ActionResult(False, None, str(exc))
        except Exception as exc:  # noqa: BLE001 - a broken source is a result the dialog shows
            result = ActionResult(False, None, f"{type(exc).__name__}: {exc}")
        journal_error = await self._journal(command, result)
        self.result, self.running = result, False
        self._show(result, journal_error)
        if result.ok or result.exit_status is not None:
            # an answered command may have changed something even when it failed (Slurm 22.05
            # holds a PartitionConfig job and still exits 1): the next poll shows the state
            self.app.hub.refresh_now()  # type: ignore[attr-defined]

    async def _journal(self, command: str, result: ActionResult) -> str:
        """One audit line (``ok`` None: issued, its outcome follows); "" or why not written."""
        item = audit.entry(
            at=self.app.hub.clock(),  # type: ignore[attr-defined]
            source=self.source.name,
            subject_kind=self.subject.kind,
            subject_id=self.subject.id,
            action=self.kind.verb,
            command=command,
            ok=result.ok,
            exit_status=result.exit_status,
            output=result.output,
        )
        return await asyncio.to_thread(audit.record, item, self.audit_path)

    def _show(self, result: ActionResult, journal_error: str) -> None:
        t = Text()
        if result.ok:
            t.append("✓ " + _("done"), style="bold green")
        else:
            status = (
                _(" (exit {code})").format(code=result.exit_status)
                if result.exit_status is not None
                else ""
            )
            t.append("✗ " + _("failed") + status, style="bold red")
            if result.exit_status is not None:
                t.append("  " + _("(polling now: the state shows what it did change)"), style="dim")
        if result.output:
            # line by line: clean() drops control characters, newlines included, and Slurm's
            # two messages ran together ("…for job 12slurm_suspend error: …")
            lines = result.output.splitlines()[-12:]
            t.append("".join("\n" + clean(line, 300) for line in lines if line.strip()))
        if journal_error:
            t.append(f"\n{clean(journal_error, 300)}", style="yellow")
        self.query_one("#result", Static).update(t)
        self.query_one("#hint", Static).update(Text(_("enter or esc: close"), style="dim"))

    def action_close(self) -> None:
        if self.running:  # the command is out: wait for its answer, it goes to the journal
            self.notify(
                _("the command is running: its result goes to the audit journal"), timeout=3
            )
            return
        self.dismiss(self.result)
