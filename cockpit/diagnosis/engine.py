"""The diagnosis engine: pure functions from (snapshot, artifacts, now) to findings.

Rules are small functions registered per subject kind (``@rule("job")``). A rule
receives one subject object (SlurmJob, SlurmNode, Partition, TrainingJob, Pool, or
the Snapshot itself for kind "site") and a :class:`RuleContext`, and yields Findings.
Rules never do I/O. ``diagnose`` runs them all; ``correlate`` folds findings that
share a cause into incidents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from cockpit.model import Artifacts, Finding, Snapshot

RuleFn = Callable[[object, "RuleContext"], Iterable[Finding]]

# kind -> rules, in registration order
_RULES: dict[str, list[RuleFn]] = {}


def rule(kind: str) -> Callable[[RuleFn], RuleFn]:
    """Register ``fn`` for subjects of ``kind``: job | node | partition | training_job | pool | site."""

    def deco(fn: RuleFn) -> RuleFn:
        _RULES.setdefault(kind, []).append(fn)
        return fn

    return deco


def rules_for(kind: str) -> list[RuleFn]:
    _load_rule_modules()
    return list(_RULES.get(kind, ()))


@dataclass(frozen=True)
class RuleContext:
    snapshot: Snapshot
    artifacts: Artifacts
    now: datetime
    # lookups built once per diagnose() so rules stay O(1) per subject
    partitions: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    pools: dict = field(default_factory=dict)


_loaded = False


def _load_rule_modules() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    # Imported for their @rule side effects.
    from cockpit.diagnosis import modelarts_rules, slurm_rules  # noqa: F401


def iter_subjects(snapshot: Snapshot) -> Iterator[tuple[str, object]]:
    for j in snapshot.jobs:
        yield "job", j
    for n in snapshot.nodes:
        yield "node", n
    for p in snapshot.partitions:
        yield "partition", p
    for t in snapshot.training_jobs:
        yield "training_job", t
    for pool in snapshot.pools:
        yield "pool", pool
    yield "site", snapshot
