"""A poll's snapshot as the team's one poller publishes it to the store, and back.

``cockpit watch`` (the site's one poller, ``[store] follow = true``) writes each good poll's
snapshot here; the operators' TUIs that follow the store read it instead of asking slurmctld
(:mod:`cockpit.runtime.follow`), and run the same engine over it with the evidence the poller
captured. JSON of the model's frozen dataclasses (never pickle: a shared database must not be
able to run code in every cockpit that reads it), zlib-compressed: a 10k-job queue is ~0.5 MB.

The queue is published as squeue printed it, not redacted: a follower must see the text its
poller saw, or a title the redaction changed would give the same failure another incident key
in each (and lose an ack between them). What the store keeps of logs (the evidence) is
redacted, as before. A body that is not a well-formed snapshot of this format (another
cockpit's, a corrupt one, one that would decompress beyond :data:`MAX_BYTES`) is refused with
one line, never half-read.
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

FORMAT = 1  # bumped when the encoding changes; an older body is ignored, not misread
MAX_BYTES = 512 << 20  # decompressed: a 100k-job queue is ~60 MB of JSON
# the collections of a snapshot and what each must hold
_HOLDS = {
    "jobs": model.SlurmJob,
    "nodes": model.SlurmNode,
    "partitions": model.Partition,
    "training_jobs": model.TrainingJob,
    "pools": model.Pool,
}


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
        return v
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
        at = datetime.fromisoformat(v["@d"])
        if at.tzinfo is None:  # every time of the model is aware; a naive one breaks ages
            raise ValueError("a time without a zone")
        return at
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
    if not isinstance(body, bytes | bytearray | memoryview):
        raise ValueError("unreadable published snapshot: not bytes")
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(bytes(body), MAX_BYTES)
        if inflate.unconsumed_tail:
            raise ValueError(f"published snapshot larger than {MAX_BYTES >> 20} MB")
        doc = json.loads(raw.decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"unreadable published snapshot: {type(exc).__name__}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("published snapshot of another format (a newer or older cockpit)")
    try:
        snap = _dec(doc["snapshot"])
    except (KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(f"unreadable published snapshot: {type(exc).__name__}") from exc
    if not isinstance(snap, Snapshot) or not isinstance(snap.taken_at, datetime):
        raise ValueError("published snapshot is not a snapshot")
    for name, cls in _HOLDS.items():
        items = getattr(snap, name)
        if not isinstance(items, tuple) or not all(isinstance(x, cls) for x in items):
            raise ValueError(f"published snapshot: its {name} are not {cls.__name__} records")
    return snap
