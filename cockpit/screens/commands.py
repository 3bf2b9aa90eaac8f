"""``ctrl+p``: jump to a job id, node, training job or source from anywhere."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from cockpit.i18n import N_, _
from cockpit.model import Subject
from cockpit.text import clean
from cockpit.views import SEVERITY_MARK

MAX_HITS = 40
# what each kind of hit is called, in the language spoken (drawn with _())
_KIND = {
    "source": N_("source"),
    "job": N_("job"),
    "node": N_("node"),
    "training_job": N_("training job"),
    "incident": N_("incident"),
}


def _kind(kind: str) -> str:
    return _(_KIND.get(kind, kind.replace("_", " ")))


def rank(query: str, ident: str, name: str, label: str) -> float | None:
    """Score of one item for the palette, or None when it should not be listed.

    Exact id or name 1.0, id or name prefix 0.9, substring of the label 0.6. A query with a
    digit is an id (``48102``, ``cn013``): nothing else matches it, so subsequence
    ("fuzzy") matching is left to word queries, scored below 0.5 by the caller.
    """
    q = query.strip().lower()
    ids = (ident.lower(), name.lower())
    if q in ids:
        return 1.0
    if any(x.startswith(q) for x in ids if x):
        return 0.9
    if q in label.lower():
        return 0.6
    return None


def _id_like(query: str) -> bool:
    return any(ch.isdigit() for ch in query)


class CockpitCommands(Provider):
    """Searches the hub's latest snapshots: exact and prefix matches of ids and names first,
    then substrings; subsequence matches only for queries without digits (capped)."""

    def _items(self):
        hub = self.app.hub  # type: ignore[attr-defined]
        # two clusters may both have a job 38: each hit names its source
        multi = len(hub.states) > 1
        for st in hub.states.values():
            snap = st.snapshot
            at = f" @{st.name}" if multi else ""
            yield (
                "source",
                st.name,
                st.name,
                f"{_kind('source')} {st.name} ({st.source.kind})",
                None,
            )
            if snap is None:
                continue
            for j in snap.jobs:
                yield (
                    "job",
                    j.job_id,
                    j.name,
                    # a 26.05 SLUID finds the job as its id does
                    f"{_kind('job')} {j.job_id} {j.name} {j.user} {j.state}"
                    + (f" {j.sluid}" if j.sluid else "")
                    + at,
                    Subject("job", st.name, j.job_id),
                )
            for n in snap.nodes:
                yield (
                    "node",
                    n.name,
                    n.name,
                    f"{_kind('node')} {n.name} {n.state_label}{at}",
                    Subject("node", st.name, n.name),
                )
            for t in snap.training_jobs:
                yield (
                    "training_job",
                    t.job_id,
                    t.name,
                    f"{_kind('training_job')} {t.name} {t.console_phase} {t.job_id}{at}",
                    Subject("training_job", st.name, t.job_id),
                )

    def _command(self, kind: str, subject: Subject | None, name: str):
        app = self.app
        if subject is not None:
            return partial(app.open_subject, subject)  # type: ignore[attr-defined]
        return partial(self._show_source, name)

    def _show_source(self, name: str) -> None:
        """The source's own screen (health, counts, its poll's warnings), as ``F`` then ``i``."""
        st = self.app.hub.states.get(name)  # type: ignore[attr-defined]
        if st is None:
            return
        self.app.open_subject(Subject.of_source(name, st.source.kind))  # type: ignore[attr-defined]

    async def discover(self) -> Hits:
        hub = self.app.hub  # type: ignore[attr-defined]
        for st in hub.states.values():
            yield DiscoveryHit(
                Content(f"{_kind('source')} {clean(st.name, 60)}"),
                self._command("source", None, st.name),
                help=_("cluster / ModelArts project"),
            )
        for inc in list(hub.incidents)[:10]:
            sev = _(SEVERITY_MARK.get(inc.severity, inc.severity))
            yield DiscoveryHit(
                Content(clean(f"{sev}: {inc.subject.label()} {inc.title}", 120)),
                partial(self.app.open_subject, inc.subject),
                help=_kind("incident"),
            )  # type: ignore[attr-defined]

    def ranked(self, query: str) -> list[tuple[float, str, str, str, Subject | None]]:
        """(score, kind, ident, label, subject), best first, at most MAX_HITS."""
        q = query.strip().lower()
        if not q:
            return []
        strong: list = []
        weak: list = []
        for kind, ident, name, label, subject in self._items():
            score = rank(q, ident, name, label)
            if score is None:
                continue
            (strong if score >= 0.9 else weak).append((score, kind, ident, label, subject))
            if len(strong) >= MAX_HITS:
                break
        hits = sorted(strong, key=lambda h: -h[0]) + weak[: max(0, MAX_HITS - len(strong))]
        if len(hits) < MAX_HITS and not _id_like(q):
            matcher = self.matcher(query)
            seen = {(h[1], h[2]) for h in hits}
            for kind, ident, _name, label, subject in self._items():
                if len(hits) >= MAX_HITS:
                    break
                s = matcher.match(label)
                if s > 0 and (kind, ident) not in seen:
                    hits.append(
                        (0.5 * s / (s + 1.0), kind, ident, label, subject)
                    )  # Matcher scores are unbounded
        return hits[:MAX_HITS]

    async def search(self, query: str) -> Hits:
        for score, kind, ident, label, subject in self.ranked(query):
            text = clean(label, 120)
            yield Hit(
                score,
                Content(text),
                self._command(kind, subject, ident),
                text=text,
                help=_kind(kind),
            )
