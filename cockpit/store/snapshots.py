"""A poll's snapshot as the team's one poller publishes it to the store, and back.

``cockpit watch`` (the site's one poller, ``[store] follow = true``) writes each good poll's
snapshot here; the operators' TUIs that follow the store read it instead of asking slurmctld
(:mod:`cockpit.runtime.follow`), and run the same engine over it with the evidence the poller
captured. JSON of the model's frozen dataclasses (never pickle: a shared database must not be
able to run code in every cockpit that reads it), zlib-compressed: a 10k-job queue is ~0.5 MB.
Free text a job carries (its name, comment, command) is redacted on the way in, as every way
out of the cockpit is.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from datetime import datetime
from functools import cache
from typing import Any

from cockpit import model
from cockpit.model import Snapshot
from cockpit.safety import redact

FORMAT = 1  # bumped when the encoding changes; an older body is ignored, not misread


@cache
def _classes() -> dict[str, type]:
    return {
        name: obj
        for name, obj in vars(model).items()
        if isinstance(obj, type) and dataclasses.is_dataclass(obj)
    }


@cache
def _fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def _enc(v: Any, texts: dict[str, str]) -> Any:
    if isinstance(v, str):
        got = texts.get(v)
        if got is None:
            got = texts[v] = redact(v) if len(v) > 6 else v
        return got
    if v is None or isinstance(v, bool | int | float):
        return v
    if isinstance(v, datetime):
        return {"@d": v.isoformat()}
    if isinstance(v, tuple | list):
        return [_enc(x, texts) for x in v]
    if isinstance(v, dict):
        return {"@m": [[_enc(k, texts), _enc(x, texts)] for k, x in v.items()]}
    if isinstance(v, bytes):
        return {"@b": v.decode("latin-1")}
    if dataclasses.is_dataclass(v):
        cls = type(v)
        return {"@t": cls.__name__, **{n: _enc(getattr(v, n), texts) for n in _fields(cls)}}
    raise TypeError(f"cannot publish a {type(v).__name__}")


def _dec(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_dec(x) for x in v)
    if not isinstance(v, dict):
        return v
    if "@d" in v:
        return datetime.fromisoformat(v["@d"])
    if "@m" in v:
        return {_dec(k): _dec(x) for k, x in v["@m"]}
    if "@b" in v:
        return v["@b"].encode("latin-1")
    cls = _classes().get(v.get("@t", ""))
    if cls is None:
        raise ValueError(f"unknown type {v.get('@t')!r} in a published snapshot")
    return cls(**{n: _dec(v[n]) for n in _fields(cls) if n in v})


def encode(snap: Snapshot) -> bytes:
    doc = {"format": FORMAT, "snapshot": _enc(snap, {})}
    return zlib.compress(json.dumps(doc, ensure_ascii=False).encode("utf-8"), 1)


def decode(body: bytes) -> Snapshot:
    """Raises ValueError on a body this cockpit cannot read (corrupt, another format)."""
    try:
        doc = json.loads(zlib.decompress(body).decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable published snapshot: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("published snapshot of another format (a newer or older cockpit)")
    try:
        snap = _dec(doc["snapshot"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"unreadable published snapshot: {exc}") from exc
    if not isinstance(snap, Snapshot):
        raise ValueError("published snapshot is not a snapshot")
    return snap
