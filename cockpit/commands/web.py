"""``cockpit web``: the cockpit in a browser (textual-serve), behind an access token.

Prints one URL carrying a random access token (or the one in ``--token-file`` or
``$COCKPIT_WEB_TOKEN``); a request without it is refused. Listens on loopback unless
``--host`` says otherwise; TLS belongs to a reverse proxy in front (docs/WEB.md). Each
browser tab runs the TUI as a follower of the store: read-only unless ``[web] actions = true``,
and with no site poller (``[store] follow``) this process polls, once per interval whatever the
number of tabs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

from cockpit import i18n
from cockpit.errors import UserError
from cockpit.i18n import _

NEEDS_EXTRA = (
    "cockpit web needs textual-serve: pip install -e '.[web]' in the cockpit's clone "
    "(or pip install textual-serve)"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "web",
        help=_("serve the cockpit to a browser (token, loopback, read-only)"),
        description=__doc__.split("\n\n")[0].replace("``", "") + " " + _DESCRIPTION,
    )
    add_common(p)
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help=_(
            "address to listen on (default 127.0.0.1: this host only; put a TLS proxy in "
            "front before using another)"
        ),
    )
    p.add_argument(
        "--port", type=_port, default=8000, help=_("port to listen on (default 8000; 0: any free)")
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help=_(
            "the access token in FILE (one line, 16+ characters) instead of a random one; "
            "also $COCKPIT_WEB_TOKEN"
        ),
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=20,
        metavar="N",
        help=_("browser sessions open at once (each is a TUI process; default 20)"),
    )
    p.set_defaults(func=run)


_DESCRIPTION = (
    "With --demo, --config is read for its [web] table only. "
    "Each browser tab runs the TUI as a follower of the store; with no site poller "
    "([store] follow = true and a `cockpit watch`), this process polls once per interval for "
    "all tabs. Read-only unless the config says [web] actions = true; every action from a "
    "browser is audited with its session's identity."
)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port (0-65535): {text!r}")
    return port


def _url_host(host: str) -> str:
    """How the printed URL names ``host`` (a wildcard address: this host's name)."""
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def run(args: argparse.Namespace) -> int:
    try:
        import textual_serve  # noqa: F401 - the `web` extra
    except ModuleNotFoundError:
        raise UserError(NEEDS_EXTRA) from None
    from cockpit.config import load_config
    from cockpit.store.types import operator
    from cockpit.web import session
    from cockpit.web.access import TOKEN_ENV, resolve_token
    from cockpit.web.server import CockpitServer, listen

    if args.max_sessions < 1:
        raise UserError(_("--max-sessions must be at least 1"))
    token, notes = resolve_token(args.token_file, os.environ)
    # the sessions' processes (and the commands they run) need not inherit it
    os.environ.pop(TOKEN_ENV, None)
    # with --demo, an explicit --config is read for its [web] table only
    config = load_config(args.config) if args.config or not args.demo else None
    if not args.demo and args.config and not config.has_sources:  # type: ignore[union-attr]
        raise UserError(
            _("{config}: no [clusters.NAME] or [modelarts.NAME] entries").format(config=args.config)
        )
    # no sources configured at all: the demo, as the TUI
    demo = args.demo or config is None or not config.has_sources
    actions = bool(config is not None and config.web.actions)
    follow_site = bool(config is not None and not demo and config.store.follow)

    sock = listen(args.host, args.port)  # port in use: one line, exit 2, before any poll
    port = sock.getsockname()[1]
    workdir = Path(tempfile.mkdtemp(prefix="cockpit-web-"))  # 0700: the demo's store
    try:
        hub = store = None
        store_url: str | None = None
        epoch: float | None = None
        if demo:
            from cockpit.commands.tui import demo_clock
            from cockpit.connect import select_sources
            from cockpit.store import open_store
            from cockpit.web.poller import publishing_hub

            epoch = time.time()
            clock = demo_clock(epoch)
            store_url = f"sqlite:///{workdir / 'demo-store.db'}"
            store = open_store(store_url, demo=True)
            demo_args = argparse.Namespace(demo=True, demo_seed=args.demo_seed)
            hub = publishing_hub(select_sources(demo_args, clock=clock), store, clock)
        elif not follow_site:
            from cockpit.connect import select_sources
            from cockpit.store import open_store
            from cockpit.web.poller import publishing_hub

            store = open_store(config=config)  # a newer schema, a bad url: one line, exit 2
            hub = publishing_hub(select_sources(args), store)

        def session_argv(who: str) -> list[str]:
            return session.argv(
                who=who,
                config=None if demo else args.config,
                demo=args.demo,
                demo_seed=args.demo_seed,
                store_url=store_url,
                demo_epoch=epoch,
                actions=actions,
                lang=i18n.language(),
            )

        server = CockpitServer(
            session_argv,
            token=token,
            port=port,
            operator=operator(),
            max_sessions=args.max_sessions,
        )
        if hub is not None:
            from cockpit.web.poller import run_beside

            server.on_app = lambda app: run_beside(app, hub)
        for note in notes:
            print(f"cockpit: {note}", file=sys.stderr)
        _say_how(args.host, actions, demo, follow_site)
        # stopped before the server's own handlers are in place (systemd, a test that got the
        # URL): a clean stop, exit 0, as after them
        signal.signal(signal.SIGTERM, _stop_now)
        print(f"http://{_url_host(args.host)}:{port}/?token={token}", flush=True)
        server.serve_on(sock)
    finally:
        sock.close()
        if store is not None:
            store.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _stop_now(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _say_how(host: str, actions: bool, demo: bool, follow_site: bool) -> None:
    from cockpit.web.access import is_loopback

    lines = []
    if is_loopback(host):
        lines.append(
            _(
                "listening on loopback only; to reach it from elsewhere, put a reverse "
                "proxy with TLS in front (docs/WEB.md)"
            )
        )
    else:
        lines.append(
            _(
                "WARNING: listening on {host}, not loopback: the token and every screen cross "
                "the network as plain HTTP. TLS belongs to a reverse proxy in front "
                "(docs/WEB.md); bind 127.0.0.1 behind it"
            ).format(host=host)
        )
    lines.append(
        _("actions from browsers: ON ([web] actions = true), each audited with its session")
        if actions
        else _("browsers are read-only (actions: set [web] actions = true)")
    )
    if follow_site:
        lines.append(_("sessions follow the store: the site's `cockpit watch` polls"))
    else:
        lines.append(
            _("this process polls the demo site once per interval for every browser session")
            if demo
            else _("this process polls the sources once per interval for every browser session")
        )
    for line in lines:
        print(f"cockpit: {line}", file=sys.stderr)
    print(_("open this URL (it carries the access token):"), file=sys.stderr, flush=True)
