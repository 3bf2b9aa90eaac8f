"""``cockpit incidents``: poll the sources once, diagnose, correlate, print the incident list.

``--json`` prints :func:`cockpit.report.incidents_json`, ``--markdown`` a ticket-ready
report, default a Rich table. Evidence from logs is included: artifacts (sacct rows, log
ranges, events) are fetched for failed jobs, unhealthy nodes and troubled training jobs
with bounded concurrency before the engine runs.

The incidents go into the store (:mod:`cockpit.store`) and the list printed is the store's
open incidents of the selected sources: one that left squeue since stays listed until
acknowledged, with who acknowledged it. A source that could not be read is an incident of its
own (``source_unreachable``) and the exit status is 1; 3 when no source answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime

from cockpit.commands.output import stdout_console
from cockpit.errors import EXIT_FOUND, EXIT_NO_SOURCE, EXIT_OK
from cockpit.i18n import _, ngettext

# subjects whose evidence is fetched per source: the TUI's first round (runtime.evidence's
# FIRST_ROUND_EVIDENCE; spelled here so the CLI's start does not load the runtime)
MAX_ARTIFACTS = 200


def register(sub: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = sub.add_parser(
        "incidents", help=_("open incidents (findings grouped by cause), most severe first")
    )
    add_common(p)
    p.add_argument(
        "--cluster", action="append", metavar="NAME", help=_("only this cluster (repeatable)")
    )
    p.add_argument(
        "--modelarts",
        action="append",
        metavar="NAME",
        help=_("only this ModelArts project (repeatable)"),
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help=_("machine-readable JSON"))
    fmt.add_argument("--markdown", action="store_true", help=_("Markdown for a ticket"))
    p.set_defaults(func=run)


async def collect(sources: list, store=None):  # -> cockpit.runtime.hub.Hub
    """One poll of each source through the core (evidence, diagnosis, incidents, and with
    ``store`` their lifecycle), as the TUI's pollers run it: the same incidents."""
    from cockpit.runtime.hub import one_shot

    return await one_shot(sources, store=store, evidence_budget=MAX_ARTIFACTS)


def source_errors(hub) -> list[str]:
    """What went wrong, one line each: the sources that did not answer, evidence not fetched."""
    out = []
    for name, st in hub.states.items():
        if st.error is not None:
            out.append(f"{name}: {st.error.kind}: {st.error.message}")
        out.extend(st.evidence.errors)
    return out


def _select(args: argparse.Namespace) -> list:
    try:
        from cockpit.connect import select_sources
    except ImportError:
        from cockpit.demo.site import demo_sources

        return demo_sources(getattr(args, "demo_seed", 7))
    return select_sources(args)  # --cluster/--modelarts select among the demo's sources too


def run(args: argparse.Namespace) -> int:
    from cockpit.commands.output import say_if_demo
    from cockpit.report import incidents_json, incidents_markdown, sort_incidents

    sources = _select(args)
    say_if_demo(args)
    names = [s.name for s in sources]
    store = store_for(args)  # a newer schema fails here, before any poll
    hub = asyncio.run(collect(sources, store))
    errors = source_errors(hub)
    taken = {
        n: st.snapshot.taken_at for n, st in hub.states.items() if st.error is None and st.snapshot
    }
    failed = {n for n, st in hub.states.items() if st.error is not None}
    # ages count from each source's snapshot time, as in the TUI (demo clock != wall clock)
    now = max(taken.values(), default=None) or datetime.now(UTC)
    stored = [s for s in store.incidents(now) if s.incident.subject.source in names]
    incidents = [s.incident for s in stored]
    acks = store.acks()
    acked = frozenset(acks)
    for e in errors:
        print(f"cockpit: {e}", file=sys.stderr)
    if not store.available:
        print(f"cockpit: {store.last_error} (incidents of this poll only)", file=sys.stderr)
    by_key = {s.key: s for s in stored}
    if args.json:
        doc = incidents_json(incidents, now, acked=acked, acks=acks, stored=by_key)
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(incidents_markdown(incidents, now, acked=acked, acks=acks, stored=by_key))
    elif not sys.stdout.isatty():  # | head, | grep, > file, a chat paste: a line each
        _lines(sort_incidents(incidents), now, acked, taken, by_key)
    else:
        _table(sort_incidents(incidents), now, acked, taken, by_key)
    store.close()
    # a source that could not be read is 1 (the list is partial); none answered is 3 (an
    # empty list must not read as "all clear"); 2 stays the usage error's
    if sources and not taken:
        return EXIT_NO_SOURCE
    # as `watch --once`: a critical incident nobody has acknowledged is something to act on
    critical = any(i.severity == "critical" and i.key not in acked for i in incidents)
    return EXIT_FOUND if failed or critical else EXIT_OK


def store_for(args: argparse.Namespace):  # -> cockpit.store.sql.Store
    """The store the TUI uses for the same site: the demo's own file when the TUI would show
    the demo, else ``[store]`` from the config (the SQLite file in the state dir by default)."""
    from cockpit.commands.tui import banner_for
    from cockpit.config import load_config
    from cockpit.store import open_store

    demo = bool(banner_for(args)[0])  # the demo site has a banner, in any language
    config = None if getattr(args, "demo", False) else load_config(getattr(args, "config", None))
    return open_store(config=config, demo=demo)


def ack_store_for(args: argparse.Namespace):  # -> cockpit.store.acks.AckStore
    """The acknowledgements the TUI reads and writes for the same site: the demo's own file
    (``state-demo.json``) when the TUI would show the demo, else the real one."""
    from cockpit.commands.tui import banner_for
    from cockpit.store.acks import AckStore, demo_state_path

    return AckStore(demo_state_path() if banner_for(args)[0] else None)


def _age_and_state(i, now, taken, stored) -> tuple[str, str]:
    """An incident's age in the TUI's words (3h10m, from its source's clock: the demo's is not
    the wall clock), and what the store says of it: gone from the live data (the job left
    squeue, the node resumed; open until acknowledged, as the incident view says) or resolved."""
    from cockpit.widgets.fmt import age as fmt_age

    at = (taken or {}).get(i.subject.source, now)
    age = "" if i.first_seen is None else fmt_age((at - i.first_seen).total_seconds())
    kept = (stored or {}).get(i.key)
    if kept is not None and getattr(kept, "gone", False):
        return age, " " + _("(gone)")
    if kept is not None and getattr(kept, "resolved_at", None) is not None:
        return age, " " + _("(resolved)")
    return age, ""


def _count_line(n: int, n_acked: int) -> str:
    """``3 incident(s), 1 acknowledged``."""
    return ngettext(
        "{n} incident(s), {acked} acknowledged", "{n} incident(s), {acked} acknowledged", n
    ).format(n=n, acked=n_acked)


def _lines(incidents, now, acked, taken, stored) -> None:
    """The piped form: a count (a ``#`` line), a header, then one line per incident, its
    fields tab-separated and each cleaned to one line (severity first: `grep ^critical`)."""
    from cockpit.report import affected_count
    from cockpit.safety import redact
    from cockpit.text import clean

    n_acked = sum(1 for i in incidents if i.key in acked)
    out = [
        "# " + _count_line(len(incidents), n_acked),
        "\t".join(
            (
                _("severity"),
                _("root cause"),
                _("subject"),
                _("title"),
                _("affected"),
                _("first seen"),
                _("ack"),
            )
        ),
    ]
    for i in incidents:
        age, state = _age_and_state(i, now, taken, stored)
        fields = (
            i.severity,
            i.root_cause,
            i.subject.label(),
            redact(i.title) + state,
            str(affected_count(i)),
            _("{age} ago").format(age=age) if age else "",
            _("yes") if i.key in acked else "",
        )
        out.append("\t".join(clean(f, 1000).replace("\t", " ") for f in fields))
    sys.stdout.write("\n".join(out) + "\n")


def _table(
    incidents: list,
    now: datetime,
    acked: frozenset[str] = frozenset(),
    taken: dict[str, datetime] | None = None,
    stored: dict | None = None,
) -> None:
    from rich.table import Table
    from rich.text import Text

    from cockpit.report import affected_count
    from cockpit.safety import redact
    from cockpit.text import clean

    colour = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
    # the TUI's marks (views.SEVERITY_MARK), spelled here: the views module imports Textual
    mark = {"critical": _("CRIT"), "warning": _("WARN"), "info": _("INFO")}
    n_acked = sum(1 for i in incidents if i.key in acked)
    console = stdout_console()
    # A terminal (piped output is _lines'): the boxed seven columns need ~160 cells to leave the
    # title room (at 120 it had 7, at 80 every column folded: 155 lines for 24 incidents), so
    # narrower ones drop the cause (the title says it in words), and under 110 the subject
    # goes over the title (at 80 the side-by-side cut the subject and folded the title into
    # 26-cell pieces: "training job llama-sft-im…").
    mode = "wide" if console.width >= 160 else "narrow"
    if mode == "narrow" and console.width < 110:
        mode = "tiny"
    cut = {"no_wrap": True, "overflow": "ellipsis"}
    fixed = {"no_wrap": True}
    # (header, cell, column options) per mode
    columns = {
        "wide": [
            (_("severity"), "severity", fixed),
            (_("root cause"), "cause", {**cut, "max_width": 26}),
            (_("subject"), "subject", {**cut, "max_width": 36}),
            (_("title"), "title", {"ratio": 1}),  # the room left over goes to the title
            (_("affected"), "affected", fixed),
            (_("first seen"), "age", fixed),
            (_("ack"), "ack", fixed),
        ],
        # CRIT, 3h10m, ✓: the words the TUI's incident view uses
        "narrow": [
            (_("sev"), "mark", fixed),
            (_("subject"), "subject", {**cut, "max_width": 26}),
            (_("title"), "title", {"ratio": 1}),
            (_("aff"), "affected", {**fixed, "justify": "right"}),
            (_("since"), "since", fixed),
            (_("ack"), "tick", fixed),
        ],
        "tiny": [
            (_("sev"), "mark", fixed),
            (_("subject / title"), "subject_title", {"ratio": 1}),
            (_("since"), "since", fixed),
        ],
    }[mode]
    title = _count_line(len(incidents), n_acked)
    if mode in ("narrow", "tiny"):
        from rich import box

        table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, expand=True)
    else:
        table = Table(title=title, expand=True)
    for header, _cell, options in columns:
        table.add_column(header, **options)
    for i in incidents:
        age, state = _age_and_state(i, now, taken, stored)
        style = colour.get(i.severity, "")
        is_acked = i.key in acked
        subject = Text(clean(i.subject.label()))
        headline = Text(clean(redact(i.title)) + state)
        cells = {
            "severity": Text(i.severity, style=style),
            "mark": Text(mark.get(i.severity, "?"), style=style),
            "cause": Text(i.root_cause),
            "subject": subject,
            "title": headline,
            "subject_title": Text.assemble(
                subject,
                "\n",
                headline,
                (" ✓ " + _("acknowledged") if is_acked else "", "green"),
            ),
            "affected": Text(str(affected_count(i))),
            "age": Text(_("{age} ago").format(age=age) if age else ""),
            "since": Text(age),
            "ack": Text(_("yes") if is_acked else "", style="green"),
            "tick": Text("✓" if is_acked else "", style="green"),
        }
        table.add_row(*(cells[cell] for _header, cell, _options in columns))
    console.print(table)
