"""``cockpit snapshot``: poll each source once and print what it sees (tables or JSON).

Exit status 0 when every source answered, 2 when one did not (its error is printed as
one line on stderr; the JSON output carries it in ``error``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from cockpit.commands.output import stdout_console
from cockpit.errors import source_status
from cockpit.i18n import N_, _
from cockpit.model import Snapshot
from cockpit.text import clean


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "snapshot",
        help=_("poll once and print jobs, nodes, partitions"),
        description=__doc__.splitlines()[0],
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
    p.add_argument(
        "--json", action="store_true", help=_("machine-readable JSON (one object per source)")
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help=_("give up on a source after S seconds (default 60)"),
    )
    p.set_defaults(func=run)


def to_jsonable(obj: Any) -> Any:
    """Dataclasses -> dicts, datetimes -> ISO 8601, tuples and sets -> lists, bytes -> text."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, set | frozenset):  # Snapshot.acct_only: sorted, so two runs diff clean
        return sorted(to_jsonable(v) for v in obj)
    if isinstance(obj, bytes):
        return obj.decode("utf-8", errors="replace")
    return obj


async def poll_all(sources: list[Any], timeout: float) -> list[Snapshot]:
    """One poll per source through the core, concurrently, and no evidence (``check-config``
    asks whether each source answers, not why its jobs failed); a source exceeding
    ``timeout`` gets an error snapshot."""
    hub = await poll_core(sources, timeout, evidence_budget=0)
    return [_snapshot_of(st) for st in hub.states.values()]


async def poll_core(
    sources: list[Any], timeout: float, evidence_budget: int | None = None
):  # -> cockpit.runtime.hub.Hub
    """The core after one poll of every source, with the evidence round the TUI's first poll
    has (``evidence_budget``: subjects per source; default the incidents command's)."""
    from cockpit.commands.incidents import MAX_ARTIFACTS
    from cockpit.runtime.hub import one_shot

    budget = MAX_ARTIFACTS if evidence_budget is None else evidence_budget
    return await one_shot(sources, evidence_budget=budget, timeout=timeout)


def _snapshot_of(st: Any) -> Snapshot:
    from datetime import UTC

    if st.error is not None or st.snapshot is None:
        at = st.last_attempt or datetime.now(UTC)
        return Snapshot(st.name, st.source.kind, at, error=st.error)
    return st.snapshot


def verdicts(st: Any) -> list[dict]:
    """One verdict per subject of a source, as every head shows it."""
    out = []
    for f in st.verdicts.values():
        s = f.subject
        out.append(
            {
                "subject": {"kind": s.kind, "source": s.source, "id": s.id},
                "root_cause": f.root_cause,
                "severity": f.severity,
                "title": f.title,
                "first_seen": f.first_seen.isoformat() if f.first_seen else None,
            }
        )
    return out


def _fmt_mib(v: int | None) -> str:
    if v is None:
        return "-"
    return f"{v / 1024:.1f}G" if v >= 10240 else f"{v}M"


def _fmt_s(v: int | None) -> str:
    if v is None:
        return "-"
    d, rem = divmod(v, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return (f"{d}-" if d else "") + (f"{h:02d}:{m:02d}:{s:02d}" if d or h else f"{m}:{s:02d}")


def _fmt_t(t: datetime | None) -> str:
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S") if t else "-"


Section = tuple[str, tuple[str, ...], list[tuple[str, ...]]]  # title, columns, rows


def sections(snap: Snapshot) -> list[Section]:
    """What a snapshot shows, as plain cleaned text: (title, columns, rows) per table."""

    def T(v: object, n: int = 200) -> str:
        return clean(str(v), n)

    out: list[Section] = []
    if snap.jobs:
        rows = []
        for j in snap.jobs:
            mem = _fmt_mib(j.min_memory_mib) + (
                "/cpu" if j.mem_per_cpu and j.min_memory_mib else ""
            )
            rows.append((
                T(j.job_id), T(j.name, 40), T(j.user), T(j.partition), T(j.state),
                T(j.reason, 80), T(j.cpus if j.cpus is not None else "-"), T(mem),
                T(_fmt_s(j.elapsed_by(snap.taken_at))),
                T(_fmt_s(j.time_limit_s) if j.time_limit_s is not None else "UNLIMITED"),
                T(j.node_list or "-"),
            ))  # fmt: skip
        cols = (N_("JobID"), N_("Name"), N_("User"), N_("Partition"), N_("State"), N_("Reason"),
                N_("CPUs"), N_("Mem"), N_("Elapsed"), N_("Limit"), N_("Nodes"))  # fmt: skip
        out.append((N_("Jobs"), cols, rows))
    if snap.nodes:
        rows = [
            (
                T(n.name),
                T(n.state_label),
                T(f"{n.cpus_alloc if n.cpus_alloc is not None else '-'}/{n.cpus_total or '-'}"),
                T(f"{_fmt_mib(n.alloc_memory_mib)}/{_fmt_mib(n.real_memory_mib)}"),
                T(",".join(n.partitions)),
                T(n.reason or "", 500),
                T(n.reason_user),
                T(_fmt_t(n.reason_time) if n.reason_time else ""),
            )
            for n in snap.nodes
        ]
        cols = (N_("Node"), N_("State"), N_("CPUs alloc/total"), N_("Mem alloc/total"),
                N_("Partitions"), N_("Reason"), N_("By"), N_("Since"))  # fmt: skip
        out.append((N_("Nodes"), cols, rows))
    if snap.partitions:
        rows = []
        for p in snap.partitions:
            mem = (
                _fmt_mib(p.max_mem_per_node_mib)
                if p.max_mem_per_node_mib
                else (
                    f"{_fmt_mib(p.max_mem_per_cpu_mib)}/cpu"
                    if p.max_mem_per_cpu_mib
                    else "UNLIMITED"
                )
            )
            rows.append((
                T(p.name + ("*" if p.default else "")), T(p.state), T(p.node_list),
                T(p.total_cpus or "-"), T(p.max_cpus_per_node or "UNLIMITED"), T(mem),
                T(_fmt_s(p.max_time_s) if p.max_time_s is not None else "UNLIMITED"),
                T(p.max_nodes or "UNLIMITED"),
            ))  # fmt: skip
        cols = (N_("Partition"), N_("State"), N_("Nodes"), N_("CPUs"), N_("MaxCPUsPerNode"),
                N_("MaxMemPerNode"), N_("MaxTime"), N_("MaxNodes"))  # fmt: skip
        out.append((N_("Partitions"), cols, rows))
    if snap.training_jobs:
        rows = [
            (
                T(tj.name, 60),
                T(f"{tj.phase}{'/' + tj.secondary_phase if tj.secondary_phase else ''}"),
                T(tj.console_phase),
                T(tj.flavor_id),
                T(tj.node_count),
                T(tj.pool_name or tj.pool_id or "-"),
                T(_fmt_t(tj.create_time)),
            )
            for tj in snap.training_jobs
        ]
        cols = (
            N_("Name"),
            N_("Phase"),
            N_("Console"),
            N_("Flavor"),
            N_("Nodes"),
            N_("Pool"),
            N_("Created"),
        )
        out.append((N_("Training jobs"), cols, rows))
    if snap.pools:
        rows = [
            (
                T(pool.name),
                T("public" if pool.public else "dedicated"),
                T(pool.phase),
                T(len(pool.nodes)),
                T(pool.available if pool.available is not None else "-"),
                T(pool.abnormal if pool.abnormal is not None else "-"),
            )
            for pool in snap.pools
        ]
        cols = (N_("Pool"), N_("Type"), N_("Phase"), N_("Nodes"), N_("Available"), N_("Abnormal"))
        out.append((N_("Pools"), cols, rows))
    return out


def _head(snap: Snapshot) -> str:
    head = f"{snap.source} ({snap.kind})" + (
        f" Slurm {snap.slurm_version}" if snap.slurm_version else ""
    )
    return "== " + _("{source} at {time}").format(source=head, time=_fmt_t(snap.taken_at))


def render(snap: Snapshot, console: Any) -> None:
    """Rich tables for one snapshot (a terminal). All cluster-controlled text is cleaned,
    never markup."""
    from rich.table import Table
    from rich.text import Text

    console.print(Text(_head(snap), style="bold"))
    if snap.error:
        console.print(
            Text(
                "   " + _("error") + f" [{snap.error.kind}] {clean(snap.error.message, 500)}",
                style="red",
            )
        )
        return
    from rich import box

    for title, cols, rows in sections(snap):
        keep = fit_columns(cols, rows, _PRIORITY.get(title, ()), console.width)
        t = Table(title=_(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for i in keep:
            # a state or id is one word: it stays whole, the text columns fold
            t.add_column(_(cols[i]), overflow="fold")
        for row in rows:
            t.add_row(*(Text(row[i]) for i in keep))
        console.print(t)
        hidden = [_(cols[i]) for i in range(len(cols)) if i not in keep]
        if hidden:
            console.print(
                Text(
                    "   "
                    + _("not shown at this width: {columns} (a wider terminal, or pipe it)").format(
                        columns=", ".join(hidden)
                    ),
                    style="dim",
                )
            )
    for w in snap.warnings:
        console.print(Text("   " + _("warning") + f": {clean(w, 300)}", style="yellow"))


# per table, each column's priority in a terminal too narrow for all of them: 0 always shown,
# higher numbers go first (the facts that decide stay: the state, the reason, the limit)
_PRIORITY: dict[str, tuple[int, ...]] = {
    "Jobs": (0, 2, 3, 4, 0, 1, 5, 5, 4, 6, 3),
    "Nodes": (0, 0, 3, 4, 5, 0, 2, 1),
    "Partitions": (0, 1, 5, 4, 0, 2, 1, 3),
    "Training jobs": (0, 2, 0, 3, 4, 3, 1),
    "Pools": (0, 3, 0, 2, 1, 1),
}
_FIT_CAP = 40  # a long reason counts this wide when columns are fitted: it folds beyond


def fit_columns(
    cols: tuple[str, ...], rows: list[tuple[str, ...]], priority: tuple[int, ...], width: int
) -> list[int]:
    """The columns (indices) a terminal ``width`` cells wide shows: all when they fit at their
    natural width, else the least needed are dropped first ("IDLE+DR…" and a reason "Kill"
    at 80 columns: 11 columns squeezed instead of 6 whole)."""
    from rich.cells import cell_len

    natural = [
        min(_FIT_CAP, max([cell_len(_(c))] + [cell_len(r[i]) for r in rows]))
        for i, c in enumerate(cols)
    ]
    keep = list(range(len(cols)))
    prio = priority if len(priority) == len(cols) else tuple(range(len(cols)))
    # each column: its padding (one cell each side) and the box's separator
    while sum(natural[i] + 3 for i in keep) > width:
        optional = [i for i in keep if prio[i] > 0]
        if not optional:
            break
        keep.remove(max(optional, key=lambda i: (prio[i], i)))
    return keep


def render_lines(snap: Snapshot, write: Any) -> None:
    """The piped form (``| grep``, ``| awk -F'\t'``): per table a ``# Title`` line, a header
    and one tab-separated line per row, whole whatever the width; nothing squeezed."""
    write(_head(snap) + "\n")
    if snap.error:
        write("# " + _("error") + f" [{snap.error.kind}] {clean(snap.error.message, 500)}\n")
        return
    for title, cols, rows in sections(snap):
        write(f"# {_(title)}\n" + "\t".join(_(c) for c in cols) + "\n")
        write("".join("\t".join(c.replace("\t", " ") for c in row) + "\n" for row in rows))
    for w in snap.warnings:
        write("# " + _("warning") + f": {clean(w, 300)}\n")


def run(args: argparse.Namespace) -> int:
    from cockpit.commands.output import say_if_demo
    from cockpit.connect import select_sources

    sources = select_sources(args)
    say_if_demo(args)
    hub = asyncio.run(poll_core(sources, args.timeout))
    states = list(hub.states.values())
    snaps = [_snapshot_of(st) for st in states]
    # `| head`: BrokenPipeError goes to cli.main, which exits 141 as every command does
    if args.json:
        docs = [
            {**to_jsonable(s), "verdicts": verdicts(st)}
            for s, st in zip(snaps, states, strict=True)
        ]
        json.dump(docs, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif sys.stdout.isatty():
        console = stdout_console()
        for s in snaps:
            render(s, console)
    else:
        for s in snaps:
            render_lines(s, sys.stdout.write)
    sys.stdout.flush()
    failed = [s for s in snaps if s.error]
    for s in failed:
        print(f"cockpit: {s.source}: {clean(s.error.message, 500)}", file=sys.stderr)
    return source_status(len(snaps) - len(failed), len(snaps))
