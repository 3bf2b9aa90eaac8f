"""One browser session's TUI: ``python -m cockpit.web.session`` (textual-serve runs it per tab).

The same TUI as ``cockpit`` in a terminal (:func:`cockpit.commands.tui.run`), with three
differences a :class:`WebSession` carries: it follows the store instead of polling, it is
read-only unless ``[web] actions = true``, and whatever it writes (the audit journal of an
action, an acknowledgement) names the browser session (``$COCKPIT_OPERATOR``), not only the
account that runs ``cockpit web``. Its stdout is textual-serve's channel to the browser:
nothing else may print there.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

from cockpit import i18n
from cockpit.errors import UserError


@dataclass(frozen=True, slots=True)
class WebSession:
    """What makes a TUI a browser session (read by :func:`cockpit.commands.tui.run`)."""

    store_url: str | None = None  # None: the configured store
    demo_epoch: float | None = None  # the poller's demo clock (POSIX seconds at DEMO_START)
    actions: bool = False  # [web] actions: guarded actions allowed (each audited)


def argv(
    *,
    who: str,
    config: str | None,
    demo: bool,
    demo_seed: int,
    store_url: str | None,
    demo_epoch: float | None,
    actions: bool,
    lang: str = "en",
) -> list[str]:
    """The command line of one session (no secret on it: ``ps`` shows it to every user); it
    speaks ``lang``, the language ``cockpit web`` was started in."""
    out = [sys.executable, "-m", "cockpit.web.session", "--who", who, "--demo-seed", str(demo_seed)]
    out += ["--lang", lang]
    if config:
        out += ["--config", config]
    if demo:
        out.append("--demo")
    if store_url:
        out += ["--store-url", store_url]
    if demo_epoch is not None:
        out += ["--demo-epoch", repr(demo_epoch)]
    if actions:
        out.append("--actions")
    return out


def main(args_in: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cockpit.web.session")
    p.add_argument("--who", required=True)
    p.add_argument("--config")
    p.add_argument("--demo", action="store_true")
    p.add_argument("--demo-seed", type=int, default=7)
    p.add_argument("--store-url")
    p.add_argument("--demo-epoch", type=float)
    p.add_argument("--actions", action="store_true")
    p.add_argument("--lang", choices=i18n.LANGUAGES, default="en")
    a = p.parse_args(args_in)
    i18n.set_language(a.lang)
    # who acts and acks: the audit journal and the store read it (cockpit.store.types.operator)
    os.environ["COCKPIT_OPERATOR"] = a.who
    from cockpit.commands.tui import run
    from cockpit.safety import install_log_redaction

    install_log_redaction()
    args = argparse.Namespace(
        command=None,
        config=a.config,
        demo=a.demo,
        demo_seed=a.demo_seed,
        no_bell=False,
        record=None,
        replay=None,
        readonly=False,
        web_session=WebSession(a.store_url, a.demo_epoch, a.actions),
    )
    try:
        return run(args)
    except UserError as exc:  # shown on the server's console when the session ends
        print(f"cockpit web session: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
