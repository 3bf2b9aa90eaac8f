"""What a resource pool can still place: ``show_training_flavor_max_available_resource`` for
the flavors that waiting training jobs ask of it (a job Initializing because no node of a
fragmented pool fits its flavor)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import Pool, TrainingJob
from cockpit.modelarts.parse import parse_flavor_max_available

Optional = Callable[..., Awaitable[dict | None]]
WAITING_PHASES = frozenset({"Creating", "Pending"})  # the phases whose flavor is asked


async def with_max_available(
    optional: Optional,
    api: Any,
    pools: tuple[Pool, ...],
    jobs: tuple[TrainingJob, ...],
    warnings: list[str],
) -> tuple[Pool, ...]:
    """``pools`` with the maximum available resource of each flavor a waiting job of theirs
    asks (``optional``: the source's call that turns an API failure into a warning)."""
    wanted: dict[str, set[str]] = {}
    for j in jobs:
        if j.phase in WAITING_PHASES and j.flavor_id and j.pool_id:
            wanted.setdefault(j.pool_id, set()).add(j.flavor_id)
    out = []
    for pool in pools:
        flavors = sorted(wanted.get(pool.pool_id, set()) - set(pool.max_available))
        if not flavors:
            out.append(pool)
            continue
        answers = await asyncio.gather(
            *(
                optional(
                    api.flavor_max_available,
                    f,
                    pool.pool_id,
                    warnings=warnings,
                    what=f"flavor {f} on {pool.pool_id}",
                )
                for f in flavors
            )
        )
        extra = dict(pool.max_available)
        for f, a in zip(flavors, answers, strict=True):
            if a is not None:
                try:
                    extra[f] = parse_flavor_max_available(a)
                except ParseError as exc:
                    warnings.append(str(exc))
        out.append(dataclasses.replace(pool, max_available=extra))
    return tuple(out)
