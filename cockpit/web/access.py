"""Who may open the cockpit in a browser: the holder of one token, on every request.

The token reaches the server in the URL ``cockpit web`` prints (``?token=``); the first page
load trades it for a cookie (HttpOnly: no script reads it; SameSite=Strict: no other site's
page sends it) and redirects to the bare URL, so the token leaves the address bar and the
browser's history. The page's websocket and static files carry the cookie. A request with
neither is refused (403) before textual-serve sees it; a websocket whose page came from
another origin is refused too (the cookie alone would not stop a page that the browser
treats as same-site).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import stat
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from cockpit.errors import UserError
from cockpit.i18n import _

TOKEN_ENV = "COCKPIT_WEB_TOKEN"
MIN_TOKEN = 16  # characters: a fixed token shorter than this is guessable over a night
REFUSED = "cockpit web: this address needs its access token (the URL `cockpit web` printed)\n"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _checked(token: str, where: str) -> str:
    token = token.strip()
    if not token:
        raise UserError(_("{where} is empty: it should hold the access token").format(where=where))
    if len(token) < MIN_TOKEN:
        raise UserError(
            _("{where}: a token of {n} characters is too short (at least 16)").format(
                where=where, n=len(token)
            )
        )
    if any(c.isspace() or not c.isprintable() for c in token):
        raise UserError(
            _("{where}: the token has spaces or control characters (one line, no spaces)").format(
                where=where
            )
        )
    return token


def resolve_token(token_file: str | None, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """(the token, warnings): ``--token-file``, else ``$COCKPIT_WEB_TOKEN``, else a new random
    one. Raises :class:`UserError` for a file that cannot be read or a token unfit for use."""
    notes: list[str] = []
    if token_file:
        path = Path(token_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise UserError(f"--token-file {path}: {why}") from None
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            notes.append(_("{path} is readable by other users: chmod 600 it").format(path=path))
        return _checked(text, f"--token-file {path}"), notes
    if env.get(TOKEN_ENV, "").strip():
        return _checked(env[TOKEN_ENV], f"${TOKEN_ENV}"), notes
    return new_token(), notes


def is_loopback(host: str) -> bool:
    """True for an address only this host reaches (127.0.0.0/8, ::1, ``localhost``)."""
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def same(given: str, token: str) -> bool:
    """Constant time: how much of a guess was right does not show in the answer's timing."""
    return hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def _same_origin(request: web.Request) -> bool:
    """A websocket opened by a page of this server (no Origin: not a browser's, the token
    decides alone)."""
    origin = request.headers.get("Origin")
    if not origin:
        return True
    return urlsplit(origin).netloc.lower() == (request.host or "").lower()


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def guard(
    token: str, cookie: str
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """aiohttp middleware: every request carries ``token`` (query or cookie ``cookie``)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        in_query = request.query.get("token", "")
        given = in_query or request.cookies.get(cookie, "")
        if not same(given, token) or not _same_origin(request):
            raise web.HTTPForbidden(text=REFUSED)
        if in_query and request.method == "GET" and request.path == "/":
            # the token becomes a cookie and leaves the URL (history, a shared screen)
            query = {k: v for k, v in request.query.items() if k != "token"}
            target = request.rel_url.with_query(query)
            redirect = web.HTTPSeeOther(location=str(target))
            redirect.set_cookie(
                cookie,
                token,
                httponly=True,
                samesite="Strict",
                path="/",
                secure=_behind_tls(request),
            )
            redirect.headers["Cache-Control"] = "no-store"
            redirect.headers["Referrer-Policy"] = "no-referrer"
            raise redirect
        response = await handler(request)
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("X-Frame-Options", "DENY")  # no framing by another site
        return response

    return middleware


def _behind_tls(request: web.Request) -> bool:
    """The browser reached us over HTTPS (directly, or through a reverse proxy that says so)."""
    return request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"


def ws_scheme(request: web.Request) -> str:
    return "wss" if _behind_tls(request) else "ws"


def cookie_name(port: int) -> str:
    """Per port: two ``cockpit web`` on one host (cookies ignore the port) keep theirs apart."""
    return f"cockpit_web_{port}"
