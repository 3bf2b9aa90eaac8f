"""A Slurm cluster read through slurmrestd (``transport = "rest"``), for sites that expose Slurm's
REST API instead of SSH and for fleets where one gateway serves many readers.

Per connection it asks ``/openapi/v3`` once for the data_parser versions the server offers and
uses the newest (``/slurm/v0.0.NN/``); each poll is one GET per kind (jobs, nodes,
partitions), sending ``update_time`` (the previous answer's ``last_update``): slurmrestd then
answers 304 (nodes, partitions) or an empty job list with "No job changes since" and the last
parse is reused, so an unchanged cluster costs the controller little. The payloads are
data_parser shapes, parsed by :mod:`cockpit.slurm.parse_json` into the same model as
squeue/scontrol. The token (JWT, ``scontrol token``) is read from ``token_env`` or
``token_file`` on every request, so a renewed token is used without a restart; a missing,
expired or refused one is a status-line error (``auth``), never a crash.

slurmrestd serves no files and no accounting of its own here: drill-downs get the job as the
controller knows it, without stdout/stderr or slurmctld.log (use ``ssh`` for those).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import Artifacts, LogLocation, Snapshot, SourceError, Subject
from cockpit.slurm.parse_json import parse_partitions_json, parse_sinfo_json, parse_squeue_json
from cockpit.source import Source
from cockpit.transport import FileStat, RemoteFileError

KINDS = ("jobs", "nodes", "partitions")
_PARSER_RE = re.compile(r"^/slurm/(v0\.0\.(\d+))/jobs/?$")
_NO_CHANGE_RE = re.compile(r"No (?:job|node|partition)s? changes? since", re.I)


class RestError(Exception):
    """One failed request, already phrased for the status line (``kind`` as SourceError)."""

    def __init__(self, kind: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.where = kind, message, where


@dataclass(frozen=True, slots=True)
class RestReply:
    status: int
    body: bytes


def newest_parser(openapi: dict[str, Any]) -> str:
    """The newest ``v0.0.NN`` with a ``/slurm/v0.0.NN/jobs`` path in an OpenAPI document; ""
    when there is none (a server without the slurmctld plugin)."""
    best = (-1, "")
    for path in (openapi.get("paths") or {}) if isinstance(openapi, dict) else ():
        m = _PARSER_RE.match(str(path))
        if m and int(m.group(2)) > best[0]:
            best = (int(m.group(2)), m.group(1))
    return best[1]


def server_version(openapi: dict[str, Any]) -> str:
    """``Slurm-24.11.5&openapi/slurmctld`` (info.version) -> ``24.11.5``."""
    info = openapi.get("info") if isinstance(openapi, dict) else None
    m = re.search(r"(\d+\.\d+\.\d+)", str((info or {}).get("version") or ""))
    return m.group(1) if m else ""


def payload_version(doc: dict[str, Any]) -> str:
    """``meta.slurm.release`` (23.02+) or ``meta.Slurm.release`` (22.05)."""
    meta = doc.get("meta") or {}
    slurm = meta.get("slurm") or meta.get("Slurm") or {}
    return str(slurm.get("release") or "") if isinstance(slurm, dict) else ""


def _errors(doc: Any) -> list[str]:
    out = []
    for e in (doc.get("errors") or ()) if isinstance(doc, dict) else ():
        if isinstance(e, dict):
            # "Failure to query nodes" + "Unable to contact slurm controller (connect failure)"
            said = [str(e[k]) for k in ("description", "error") if e.get(k)]
            out.append(": ".join(dict.fromkeys(said)) or str(e))
    return out


def unchanged(doc: dict[str, Any], kind: str) -> bool:
    """An answer to ``update_time`` that says "nothing changed" (an empty list and the
    warning), rather than "the cluster has no jobs"."""
    if doc.get(kind):
        return False
    warns = [
        str(w.get("description", "")) for w in doc.get("warnings") or () if isinstance(w, dict)
    ]
    return any(_NO_CHANGE_RE.search(w) for w in warns)


def _last_update(doc: dict[str, Any]) -> int | None:
    v = doc.get("last_update")
    if isinstance(v, dict):
        v = v.get("number") if v.get("set", True) else None
    return int(v) if isinstance(v, int | float) and v > 0 else None


class RestClient:
    """GETs against one slurmrestd with the JWT headers; urllib in a worker thread (three
    requests per poll need no connection pool). Raises :class:`RestError`."""

    def __init__(
        self,
        url: str,
        token: Callable[[], str],
        user: str | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.user = user
        self.timeout = timeout
        self.requests = 0  # how many requests were sent (tests, benchmarks)

    async def get(self, path: str, params: dict[str, str] | None = None) -> RestReply:
        token = self._token()  # RestError("auth") when missing: before any network
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        headers = {"X-SLURM-USER-TOKEN": token, "Accept": "application/json"}
        if self.user:
            headers["X-SLURM-USER-NAME"] = self.user
        req = urllib.request.Request(self.url + path + query, headers=headers)
        self.requests += 1
        return await asyncio.to_thread(self._send, req, path)

    def _send(self, req: urllib.request.Request, path: str) -> RestReply:
        where = f"{self.url}{path}"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310
                return RestReply(resp.status, resp.read())
        except urllib.error.HTTPError as exc:
            body = exc.read() if exc.fp is not None else b""
            if exc.code == 304:
                return RestReply(304, b"")
            raise _http_error(exc.code, body, where, self.url) from None
        except TimeoutError:
            raise RestError(
                "timeout", f"slurmrestd {self.url} did not answer within {self.timeout:g} s", where
            ) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise RestError(
                    "timeout",
                    f"slurmrestd {self.url} did not answer within {self.timeout:g} s",
                    where,
                ) from None
            text = getattr(reason, "strerror", None) or str(reason)
            raise RestError("unreachable", f"slurmrestd {self.url}: {text}", where) from None
        except (OSError, ValueError) as exc:  # reset connections, bad URLs
            raise RestError("unreachable", f"slurmrestd {self.url}: {exc}", where) from None


def _http_error(code: int, body: bytes, where: str, url: str) -> RestError:
    try:
        errs = _errors(json.loads(body or b"{}"))
    except (ValueError, UnicodeDecodeError):
        errs = []
    detail = f": {errs[0]}" if errs else ""
    if code in (401, 403, 511):
        # slurmrestd answers 401/511 for a missing, malformed or expired token, 403 for a
        # user the controller refuses
        return RestError(
            "auth" if code != 403 else "forbidden",
            f"slurmrestd {url} refused the token (HTTP {code}{detail}): it is missing, "
            "expired or not valid here; get a new one with `scontrol token`",
            where,
        )
    if code == 404:
        return RestError("not_found", f"slurmrestd {url}: no {where[len(url) :]} (HTTP 404)", where)
    msg = errs[0] if errs else f"HTTP {code}"
    kind = "unreachable" if "Unable to contact slurm controller" in msg else "server"
    return RestError(kind, f"slurmrestd {url}: {msg}", where)


def token_reader(token_env: str | None, token_file: str | None) -> Callable[[], str]:
    """The JWT from the environment variable ``token_env`` or the file ``token_file`` (a
    ``SLURM_JWT=...`` line as ``scontrol token`` prints it is accepted), read at each call."""

    def read() -> str:
        if token_env:
            tok = os.environ.get(token_env, "")
            if not tok.strip():
                raise RestError("auth", f"no slurmrestd token: ${token_env} is not set")
        else:
            path = os.path.expanduser(token_file or "")
            try:
                with open(path, encoding="utf-8") as f:
                    tok = f.read()
            except OSError as exc:
                raise RestError(
                    "auth", f"no slurmrestd token: cannot read {path}: {exc.strerror}"
                ) from None
        tok = tok.strip().removeprefix("SLURM_JWT=").strip()
        if not tok or any(c.isspace() for c in tok):
            raise RestError("auth", "slurmrestd token is empty or not one line")
        return tok

    return read


class RestSlurmSource(Source):
    """One Slurm cluster through slurmrestd. ``poll()`` never raises for remote trouble."""

    kind = "slurm"

    def __init__(
        self,
        name: str,
        client: RestClient,
        *,
        interval: float = 15.0,
        clock: Callable[[], datetime] | None = None,
        tz: tzinfo = UTC,
        background_evidence: bool = True,
    ) -> None:
        self.name = name
        self.client = client
        self.interval = interval
        self.tz = tz
        self.background_evidence = background_evidence
        self._clock = clock or (lambda: datetime.now(UTC))
        self.parser = ""  # the data_parser in use (v0.0.42), "" until negotiated
        self.version = ""  # the server's Slurm release
        self._last: dict[str, tuple[int | None, list[Any], list[str]]] = {}
        self._full_only: set[str] = set()  # kinds this server fails to answer by update_time
        self._inflight: Any = None

    async def _negotiate(self) -> None:
        reply = await self.client.get("/openapi/v3")
        try:
            doc = json.loads(reply.body)
        except ValueError:
            raise RestError(
                "parse", f"slurmrestd {self.client.url}: /openapi/v3 is not JSON"
            ) from None
        parser = newest_parser(doc)
        if not parser:
            raise RestError(
                "server",
                f"slurmrestd {self.client.url} offers no /slurm/v0.0.NN/jobs "
                "(is it started with the openapi/slurmctld plugin?)",
            )
        self.parser, self.version = parser, server_version(doc)
        self._last.clear()

    async def _fetch(self, kind: str) -> tuple[list[Any], list[str], str]:
        prev = self._last.get(kind)
        since = prev[0] if prev and kind not in self._full_only else None
        path = f"/slurm/{self.parser}/{kind}"
        try:
            reply, doc, text = await self._get_json(path, since)
        except RestError as exc:
            if since is None or exc.kind != "server":
                raise
            # 24.11's /nodes loads the partitions with the same update_time and fails with
            # "Unable to query partitions" when only the nodes changed: ask this kind whole
            self._full_only.add(kind)
            since = None
            reply, doc, text = await self._get_json(path, None)
        if reply.status == 304 and prev:
            return prev[1], prev[2], ""  # running jobs run on from elapsed_at
        if prev and unchanged(doc, kind):
            return prev[1], prev[2], payload_version(doc)
        parse = {
            "jobs": lambda: parse_squeue_json(text, self.tz, self._clock()),
            "nodes": lambda: parse_sinfo_json(text, self.tz),
            "partitions": lambda: parse_partitions_json(text),
        }[kind]
        items, warnings = parse() if doc.get(kind) else ([], [])
        self._last[kind] = (_last_update(doc), items, warnings)
        return items, warnings, payload_version(doc)

    async def _get_json(self, path: str, since: int | None) -> tuple[RestReply, Any, str]:
        reply = await self.client.get(path, {"update_time": str(since)} if since else None)
        if reply.status == 304:
            return reply, {}, ""
        text = reply.body.decode("utf-8", errors="replace")
        try:
            doc = json.loads(text)
        except ValueError:
            raise RestError("parse", f"slurmrestd {path}: answer is not JSON", path) from None
        errs = _errors(doc)
        if errs:
            kind = "unreachable" if "Unable to contact slurm controller" in errs[0] else "server"
            raise RestError(kind, f"slurmrestd {self.client.url}: {errs[0]}", path)
        return reply, doc, text

    async def poll(self) -> Snapshot:
        if self._inflight is None or self._inflight.done():
            self._inflight = asyncio.ensure_future(self._poll())
        return await asyncio.shield(self._inflight)

    async def _poll(self) -> Snapshot:
        taken = self._clock()
        try:
            if not self.parser:
                await self._negotiate()
            results = await asyncio.gather(*(self._fetch(k) for k in KINDS))
        except RestError as exc:
            if exc.kind == "not_found":
                self.parser = ""  # the server changed under us: negotiate again next poll
            return Snapshot(
                self.name, "slurm", taken, error=SourceError(exc.kind, exc.message, exc.where)
            )
        except ParseError as exc:
            return Snapshot(
                self.name, "slurm", taken, error=SourceError("parse", str(exc), exc.where)
            )
        (jobs, w1, v1), (nodes, w2, _), (parts, w3, _) = results
        return Snapshot(
            source=self.name,
            kind="slurm",
            taken_at=taken,
            jobs=tuple(jobs),
            nodes=tuple(nodes),
            partitions=tuple(parts),
            warnings=tuple(w1 + w2 + w3),
            slurm_version=v1 or self.version,
        )

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """No logs and no sacct through slurmrestd: the engine works from the job as the
        controller reports it; the note says where the rest would come from."""
        return Artifacts(
            commands={
                "error: logs": "slurmrestd serves no log files or accounting here: "
                'stdout/stderr and slurmctld.log need transport = "ssh" or "local"'
            }
        )

    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        return []

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        raise RemoteFileError(f"{path}: slurmrestd serves no files", where=path)

    async def stat(self, path: str) -> FileStat:
        raise RemoteFileError(f"{path}: slurmrestd serves no files", where=path)
