"""What a store process holds of the incidents' bodies from one poll to the next, by each body's
digest (``incidents.digest``, schema v4): the incidents it encoded (an unchanged one is not
encoded again) and the ones it read back (a body whose digest it holds is not read or decoded
again; one it wrote itself is made into its stored form from the live incident). At 10k jobs
with churn a poll rewrites ~480 of ~1,400 open incidents' bodies and read back all of them
(#33, round 13); now it reads the ones another cockpit changed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import cockpit.store.codec as codec
from cockpit.model import Incident

log = logging.getLogger("cockpit.store.sql")  # the store's own: its warnings read as before


def shared(decoded: Incident, live: Incident) -> Incident:
    """``decoded`` with the objects of ``live`` (the incident its body was encoded from) in
    place of equal ones: the same values (frozen, compared field by field), one copy."""
    if decoded == live:
        return live
    lf = live.findings
    findings = tuple(
        lf[i] if i < len(lf) and f == lf[i] else f for i, f in enumerate(decoded.findings)
    )
    subject = live.subject if decoded.subject == live.subject else decoded.subject
    affected = live.affected if decoded.affected == live.affected else decoded.affected
    return replace(decoded, findings=findings, subject=subject, affected=affected)


def folded(
    keys: Sequence[str], live: dict[str, Incident], memo: dict[str, Any] | None = None
) -> list[str]:
    """The keys of one-job incidents (``job|source|id|...``) whose job is now a member of a
    live incident of several (a group, a node's casualties): folded into it, not gone.
    ``memo``: where the members of ``live`` are kept for the next call on the same ``live``
    (the mirror's and the database's sync ask alike)."""
    if not keys:
        return []
    members = memo.get("members") if memo is not None else None
    if members is None:
        members = {
            (s.kind, s.source, s.id)
            for inc in live.values()
            if len(inc.affected) > 1 or inc.subject.kind != "job"
            for s in inc.affected
            if s.kind in ("job", "training_job")
        }
        if memo is not None:
            memo["members"] = members
    out = []
    for k in keys:
        parts = k.split("|")
        if len(parts) >= 4 and parts[0] in ("job", "training_job"):
            if (parts[0], parts[1], parts[2]) in members:
                out.append(k)
    return out


class Held:
    """``encoded``: key -> (the live incident last encoded, its body's digest, its title
    column); ``decoded``: key -> (digest, the incident read back for that body); ``fresh``:
    key -> the bodies encoded at the last sync (as :func:`codec.incident_json`), until the read
    back makes them into incidents."""

    __slots__ = ("decoded", "encoded", "fresh")

    def __init__(self) -> None:
        self.encoded: dict[str, tuple[Incident, int, str]] = {}
        self.decoded: dict[str, tuple[int, Incident]] = {}
        self.fresh: dict[str, dict[str, Any]] = {}

    def holds(self, key: str, dg: int | None) -> bool:
        """Whether :meth:`known` answers without the body."""
        if dg is None:
            return False
        hit = self.decoded.get(key)
        if hit is not None and hit[0] == dg:
            return True
        enc = self.encoded.get(key)
        return enc is not None and enc[1] == dg

    def known(self, key: str, dg: int | None) -> Incident | None:
        """The incident of ``key``'s body of digest ``dg`` without reading the body: one read
        before, or one this process wrote (its stored form made from the live incident, not
        decoded from the JSON just encoded). None: the body must be read."""
        if dg is None:  # a row a v3 cockpit wrote: its body is read
            return None
        hit = self.decoded.get(key)
        if hit is not None and hit[0] == dg:
            return hit[1]
        enc = self.encoded.get(key)
        if enc is None or enc[1] != dg:
            return None
        # the live incident's objects where the stored ones are equal (most are: ~2/3 of the
        # store's memory at 10k jobs was a second copy of the incidents and their bodies)
        try:
            inc = shared(codec.incident_stored(enc[0], self.fresh.pop(key, None)), enc[0])
        except (ValueError, KeyError, TypeError):  # as decoding its body would have
            log.warning("store: unreadable incident %s skipped", key)
            return None
        self.decoded[key] = (dg, inc)
        return inc

    def decode(self, key: str, body: str, dg: int | None) -> Incident | None:
        """The incident of a body read from the store (None: unreadable, skipped)."""
        if dg is None:
            dg = codec.digest(body)
        known = self.known(key, dg)
        if known is not None:
            return known
        try:
            inc = codec.incident_from_json(body)
        except (ValueError, KeyError, TypeError):
            log.warning("store: unreadable incident %s skipped", key)
            return None
        self.decoded[key] = (dg, inc)
        return inc
