"""textual-serve, guarded: one TUI process per browser session, every request with the token.

:class:`CockpitServer` keeps textual-serve's routes (the page, ``/ws``, ``/static``,
``/download``) and its protocol to the app process, and changes what a public address needs:

* the guard of :mod:`cockpit.web.access` in front of every route;
* each session's command is built for it (its identity: a short id and the browser's address);
* the page is the cockpit's copy (no font fetched from another site), and names the websocket
  by the address the browser used, so it works unchanged behind a reverse proxy;
* at most ``max_sessions`` TUIs at once (each is a process).

It relies on textual-serve's ``AppService`` and ``Server._process_messages``: pyproject pins
the release range this was written against.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import shlex
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from cockpit.i18n import _
from cockpit.web.access import cookie_name, guard, ws_scheme

log = logging.getLogger(__name__)
TEMPLATES = Path(__file__).parent / "templates"


class CockpitServer(Server):
    def __init__(
        self,
        session_argv: Callable[[str], list[str]],
        *,
        token: str,
        port: int,
        operator: str,
        max_sessions: int = 20,
        say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    ) -> None:
        super().__init__("cockpit", port=port, title="Cockpit", templates_path=TEMPLATES)
        self.session_argv = session_argv  # who -> the session's argv (cockpit.web.session)
        self.token = token
        self.operator = operator  # the account serving: whose name the sessions act under
        self.max_sessions = max_sessions
        self.say = say
        self.sessions: set[web.WebSocketResponse] = set()
        self.on_app: Callable[[web.Application], None] = lambda app: None

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(guard(self.token, cookie_name(self.port)))
        self.on_app(app)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its logo and the bare URL here; ``cockpit web`` has said it."""

    async def on_shutdown(self, app: web.Application) -> None:
        for ws in list(self.sessions):  # each session's handler then stops its TUI
            await ws.close(code=1001, message=b"cockpit web is stopping")

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            # the address the browser used (a reverse proxy's, when there is one)
            "app_websocket_url": f"{ws_scheme(request)}://{request.host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": "Cockpit"},
            # the page's own words, in the language ``cockpit web`` speaks
            "text": {"start": _("Start"), "ended": _("Session ended."), "restart": _("Restart")},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.headers["Cache-Control"] = "no-store"
        return response

    def identity(self, session: str, peer: str) -> str:
        """Who a session's actions and acks are recorded as (at most 64 characters)."""
        return f"{self.operator[:24]} via web {session} from {peer}"[:64]

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's handler, with this session's own command."""
        if len(self.sessions) >= self.max_sessions:
            raise web.HTTPServiceUnavailable(
                text=f"cockpit web: {self.max_sessions} browser sessions are open (the limit)\n"
            )
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        session, peer = secrets.token_hex(3), request.remote or "unknown"
        who = self.identity(session, peer)
        command = shlex.join(self.session_argv(who))
        app_service: AppService | None = None
        self.sessions.add(websocket)
        self.say(f"cockpit: web session {session} from {peer} opened ({len(self.sessions)} open)")
        try:
            await websocket.prepare(request)
            app_service = AppService(
                command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await app_service.start(width, height)
            try:
                await self._process_messages(websocket, app_service)
            finally:
                await app_service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception:  # one broken session must not stop the server
            log.exception("web session %s failed", session)
        finally:
            if app_service is not None:
                await app_service.stop()
                await _reap(app_service)
            self.sessions.discard(websocket)
            self.say(f"cockpit: web session {session} closed ({len(self.sessions)} open)")
        return websocket

    def serve_on(self, sock: socket.socket) -> None:
        """Serve on the bound ``sock`` until SIGINT or SIGTERM."""
        web.run_app(
            self._make_app(),
            sock=sock,
            handle_signals=True,
            print=None,
            shutdown_timeout=10,
            access_log=None,
        )


async def _reap(service: AppService) -> None:
    """Wait for a session's TUI to exit (textual-serve asks it to quit, but never waits): a
    server open for weeks must not collect a zombie per closed tab."""
    proc = getattr(service, "_process", None)
    if proc is None or proc.returncode is not None:
        return
    try:
        await asyncio.wait_for(proc.wait(), 10)
    except TimeoutError:  # a TUI that does not quit when asked
        proc.kill()
        await proc.wait()


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0: any free port); UserError when it cannot be."""
    from cockpit.errors import UserError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UserError(f"--host {host}: {exc.strerror}") from None
    family, kind, proto, _name, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart after a crash
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UserError(
            _("cannot listen on {host}:{port}: {error}").format(
                host=host, port=port, error=exc.strerror or exc
            )
        ) from None
    sock.setblocking(False)
    return sock
