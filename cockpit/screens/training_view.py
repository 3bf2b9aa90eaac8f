"""A training job's drill-down, the parts that read its startup: where a stuck startup log
stopped against the closest good run (cockpit.watch.baseline), and the stages timeline."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from cockpit.i18n import _
from cockpit.model import TrainingJob
from cockpit.text import clean
from cockpit.views import age


def _secs(s: float | None) -> str:
    return "-" if s is None else age(s)


def baseline_diff(hub: object, t: TrainingJob, now: datetime) -> Text | None:
    """Where the stuck startup log stopped vs the closest good run (cockpit.watch.baseline),
    or None."""
    from cockpit.watch.baseline import diff_against_baseline, strip_time

    store = getattr(getattr(hub, "baselines", None), "store", None)
    b = store.closest_baseline(t) if store is not None else None
    if b is None:
        return None
    d = diff_against_baseline(t.log_preview.splitlines(), b, now)
    out = Text(clean(f"{b.name} ({b.pool or '-'}): ", 200), style="bold")
    if d.passed == d.total:
        out.append(_("reached every step of the good run's startup"), style="green")
        return out
    stopped = (
        _("stopped after step {passed}/{total}").format(passed=d.passed, total=d.total)
        if d.last_passed
        else _("stopped before the first step")
    )
    out.append(stopped, style="bold yellow")
    if d.next_expected:
        out.append(
            clean(
                _("; next in the good run: {line}").format(
                    line=repr(strip_time(d.next_expected[0]))
                ),
                300,
            ),
            style="yellow",
        )
    if d.then_next_s is not None:
        out.append(_(" took {age} then").format(age=_secs(d.then_next_s)), style="yellow")
    if d.stalled_s is not None:
        out.append(_(", silent {age} now").format(age=_secs(d.stalled_s)), style="bold red")
    passed = [x for x in d.steps if x.status == "passed"]
    extra = [x for x in d.steps if x.status == "extra"]
    missing = [x for x in d.steps if x.status == "missing"]
    # the last step both reached, what only the stuck log has (often the error), what should
    # come next
    for mark, style, steps in (
        ("✓", "green", passed[-1:]),
        ("+", "bold red", extra[-2:]),
        ("✗", "dim", missing[:1]),
    ):
        for x in steps:
            out.append(f"\n {mark} ", style=style)
            out.append(
                _("then {then} now {now}  ").format(
                    then=f"{_secs(x.then_s):>4}", now=f"{_secs(x.now_s):>4}"
                ),
                style="dim",
            )
            out.append(clean(strip_time(x.text), 160), style=style if mark != "✓" else "")
    return out


def timeline(t: TrainingJob, now: datetime) -> Text:
    out = Text()
    for i, s in enumerate(t.stages):
        if i:
            out.append(" → ", style="dim")
        end = s.end_time or now
        dur = (end - s.start_time).total_seconds() if s.start_time else None
        open_ = s.end_time is None
        out.append(
            f"{s.name} {age(dur)}{'…' if open_ else ''}", style="bold yellow" if open_ else ""
        )
        if s.message:
            out.append(f" ({clean(s.message, 200)})", style="dim")
    return out
