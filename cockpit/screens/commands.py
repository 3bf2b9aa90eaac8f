"""``ctrl+p``: jump to a job id, node, training job or source from anywhere."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from cockpit.model import Subject
from cockpit.text import clean

MAX_HITS = 40


class CockpitCommands(Provider):
    """Searches the hub's latest snapshots; ids match by prefix, names fuzzily (capped)."""

    def _items(self):
        hub = self.app.hub  # type: ignore[attr-defined]
        for st in hub.states.values():
            snap = st.snapshot
            yield ("source", st.name, f"source {st.name} ({st.source.kind})", None)
            if snap is None:
                continue
            for j in snap.jobs:
                yield ("job", j.job_id, f"job {j.job_id} {j.name} {j.user} {j.state}", Subject("job", st.name, j.job_id))
            for n in snap.nodes:
                yield ("node", n.name, f"node {n.name} {n.state_label}", Subject("node", st.name, n.name))
            for t in snap.training_jobs:
                yield ("training_job", t.job_id, f"training job {t.name} {t.console_phase} {t.job_id}", Subject("training_job", st.name, t.job_id))

    def _command(self, kind: str, subject: Subject | None, name: str):
        app = self.app
        if subject is not None:
            return partial(app.open_subject, subject)  # type: ignore[attr-defined]
        return partial(self._show_source, name)

    def _show_source(self, name: str) -> None:
        app = self.app
        while len(app.screen_stack) > 2:
            app.pop_screen()
        app.screen.notify(f"source {name}: see the status line", timeout=3)

    async def discover(self) -> Hits:
        hub = self.app.hub  # type: ignore[attr-defined]
        for st in hub.states.values():
            yield DiscoveryHit(Content(f"source {clean(st.name, 60)}"), self._command("source", None, st.name), help="cluster / ModelArts project")
        for inc in list(hub.incidents)[:10]:
            yield DiscoveryHit(Content(clean(f"{inc.severity}: {inc.subject} {inc.title}", 120)), partial(self.app.open_subject, inc.subject), help="incident")  # type: ignore[attr-defined]

    async def search(self, query: str) -> Hits:
        q = query.strip().lower()
        if not q:
            return
        matcher = self.matcher(query)
        n = 0
        exact: list = []
        fuzzy: list = []
        for kind, ident, label, subject in self._items():
            lid = ident.lower()
            if lid == q or lid.startswith(q):
                exact.append((1.0 if lid == q else 0.9, kind, ident, label, subject))
            elif len(fuzzy) < 2000 and q in label.lower():
                fuzzy.append((0.6, kind, ident, label, subject))
            if len(exact) >= MAX_HITS:
                break
        if len(exact) + len(fuzzy) < MAX_HITS:
            for kind, ident, label, subject in self._items():
                if len(fuzzy) >= MAX_HITS:
                    break
                s = matcher.match(label)
                if s > 0 and not any(f[2] == ident and f[1] == kind for f in fuzzy + exact):
                    fuzzy.append((0.5 * s / (s + 1.0), kind, ident, label, subject))  # Matcher scores are unbounded
        for score, kind, ident, label, subject in (exact + fuzzy)[:MAX_HITS]:
            n += 1
            text = clean(label, 120)
            yield Hit(score, Content(text), self._command(kind, subject, ident), text=text, help=kind.replace("_", " "))
