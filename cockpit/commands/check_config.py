"""``cockpit check-config``: validate the config and try each source once.

Secrets are never printed: ModelArts keys show as the environment variable names
with ``set``/``missing``. A bad config exits 2 with one line naming file, line, key.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re

from cockpit.errors import EXIT_USAGE, UserError, source_status
from cockpit.i18n import _
from cockpit.text import clean


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "check-config",
        help=_("validate the config and test each source"),
        description=__doc__.splitlines()[0],
    )
    add_common(p)
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help=_("per-source poll timeout (default 30)"),
    )
    p.add_argument(
        "--no-poll", action="store_true", help=_("only validate, do not contact the sources")
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cockpit.commands.snapshot import poll_all
    from cockpit.config import load_config
    from cockpit.connect import build_sources
    from cockpit.watch.alerts import AlertConfig

    config = load_config(args.config)
    if not config.exists:
        print(f"no config at {config.path}: nothing to check (the cockpit runs the demo site)")
        return 2  # a deploy script's `check-config &&` must not pass on a missing file
    # [alerts] read by the one parser watch and the TUI use: "valid" here means they start
    AlertConfig.from_table(config.alerts, config.path)
    if not config.has_sources:  # valid, and watching nothing: say what the cockpit does then
        print(
            f"config {config.path}: the file is valid but names no [clusters.NAME] or "
            "[modelarts.NAME]: the TUI runs the demo site, watch refuses"
        )
        return 0
    tried = "" if args.no_poll else "; each source, tried now:"
    print(f"config {config.path}: the file is valid{tried}")
    lines: dict[str, str] = {}
    for c in config.clusters.values():
        if c.transport == "ssh":
            target = (
                f"ssh {c.user + '@' if c.user else ''}{c.host}:{c.port} "
                f"key={c.key or '(ssh default)'} "
                f"known_hosts={c.known_hosts or 'NOT CHECKED'}"
            )
        elif c.transport == "rest":
            target = f"rest {c.url} token {'$' + c.token_env if c.token_env else c.token_file}"
        else:
            target = "local"
        actions = "actions ON" if c.allow_actions else "read-only"
        lines[c.name] = (
            f"cluster {c.name}: {target}, every {c.interval:g} s, evidence {c.evidence}, {actions}"
        )
    for m in config.modelarts.values():
        ak = "set" if os.environ.get(m.ak_env) else "missing"
        sk = "set" if os.environ.get(m.sk_env) else "missing"
        where = m.endpoint or m.region
        lines[m.name] = (
            f"modelarts {m.name}: {where} project {m.project_id}, AK ${m.ak_env} {ak}, "
            f"SK ${m.sk_env} {sk}, every {m.interval:g} s"
        )
    if args.no_poll:
        for ln in lines.values():
            print(f"  {ln}")
        return 0
    # One source at a time: a ModelArts entry whose key variables are unset must not stop the
    # check of the clusters (each problem gets its own FAILS line).
    sources, bad = [], 0
    for kind, names in (("clusters", list(config.clusters)), ("modelarts", list(config.modelarts))):
        for name in names:
            try:
                sources += build_sources(
                    config,
                    clusters=[name] if kind == "clusters" else [],
                    modelarts=[name] if kind == "modelarts" else [],
                )
            except UserError as exc:
                bad += 1
                print(f"  {lines.get(name, name)}: FAILS [config] {clean(str(exc), 300)}")
    snaps = asyncio.run(poll_all(sources, args.timeout)) if sources else []
    unread = 0
    for snap in snaps:
        if snap.error:
            unread += 1
            # a one-shot check retries nothing: the transport's "(next retry in 1 s)" misleads
            message = re.sub(r"\s*\(next retry in \d+ s\)", "", snap.error.message)
            status = f"FAILS [{snap.error.kind}] {clean(message, 300)}"
        elif snap.kind == "slurm":
            status = (
                f"answers (Slurm {snap.slurm_version or '?'}: "
                f"{len(snap.nodes)} nodes, {len(snap.jobs)} jobs)"
            )
        else:
            status = f"answers ({len(snap.training_jobs)} training jobs, {len(snap.pools)} pools)"
        print(f"  {lines.get(snap.source, snap.source)}: {status}")
    if bad:  # an entry the config cannot build: a configuration error
        return EXIT_USAGE
    return source_status(len(snaps) - unread, len(snaps))
