"""``cockpit check-config``: validate the config and try each source once.

Secrets are never printed: ModelArts keys show as the environment variable names
with ``set``/``missing``. A bad config exits 2 with one line naming file, line, key.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re

from cockpit.errors import EXIT_USAGE, ConfigError, ConfigErrors, UserError, source_status
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

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise _joined([*getattr(exc, "errors", [exc]), *_alerts_problems(exc.path)]) from None
    if not config.exists:
        print(
            _("no config at {path}: nothing to check (the cockpit runs the demo site)").format(
                path=config.path
            )
        )
        return 2  # a deploy script's `check-config &&` must not pass on a missing file
    # [alerts] read by the one parser watch and the TUI use: "valid" here means they start
    AlertConfig.from_table(config.alerts, config.path)
    if not config.has_sources:  # valid, and watching nothing: say what the cockpit does then
        print(
            _(
                "config {path}: the file is valid but names no [clusters.NAME] or "
                "[modelarts.NAME]: the TUI runs the demo site, watch refuses"
            ).format(path=config.path)
        )
        return 0
    tried = "" if args.no_poll else _("; each source, tried now:")
    print(_("config {path}: the file is valid{tried}").format(path=config.path, tried=tried))
    lines: dict[str, str] = {}
    for c in config.clusters.values():
        if c.transport == "ssh":
            ssh_default, unchecked = _("(ssh default)"), _("NOT CHECKED")
            target = (
                f"ssh {c.user + '@' if c.user else ''}{c.host}:{c.port} "
                f"key={c.key or ssh_default} "
                f"known_hosts={c.known_hosts or unchecked}"
            )
        elif c.transport == "rest":
            target = f"rest {c.url} token {'$' + c.token_env if c.token_env else c.token_file}"
        else:
            target = "local"
        actions = _("actions ON") if c.allow_actions else _("read-only")
        lines[c.name] = _(
            "cluster {name}: {target}, every {interval} s, evidence {evidence}, {actions}"
        ).format(
            name=c.name,
            target=target,
            interval=f"{c.interval:g}",
            evidence=c.evidence,
            actions=actions,
        )
    for m in config.modelarts.values():
        ak = _("set") if os.environ.get(m.ak_env) else _("missing")
        sk = _("set") if os.environ.get(m.sk_env) else _("missing")
        where = m.endpoint or m.region
        lines[m.name] = _(
            "modelarts {name}: {where} project {project}, AK ${ak_env} {ak}, "
            "SK ${sk_env} {sk}, every {interval} s"
        ).format(
            name=m.name,
            where=where,
            project=m.project_id,
            ak_env=m.ak_env,
            ak=ak,
            sk_env=m.sk_env,
            sk=sk,
            interval=f"{m.interval:g}",
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
                print(
                    _("  {source}: FAILS [config] {error}").format(
                        source=lines.get(name, name), error=clean(str(exc), 300)
                    )
                )
    snaps = asyncio.run(poll_all(sources, args.timeout)) if sources else []
    unread = 0
    for snap in snaps:
        if snap.error:
            unread += 1
            # a one-shot check retries nothing: the transport's "(next retry in 1 s)" misleads
            message = re.sub(r"\s*\(next retry in \d+ s\)", "", snap.error.message)
            status = _("FAILS [{kind}] {error}").format(
                kind=snap.error.kind, error=clean(message, 300)
            )
        elif snap.kind == "slurm":
            status = _("answers (Slurm {version}: {nodes} nodes, {jobs} jobs)").format(
                version=snap.slurm_version or "?", nodes=len(snap.nodes), jobs=len(snap.jobs)
            )
        else:
            status = _("answers ({jobs} training jobs, {pools} pools)").format(
                jobs=len(snap.training_jobs), pools=len(snap.pools)
            )
        print(f"  {lines.get(snap.source, snap.source)}: {status}")
    if bad:  # an entry the config cannot build: a configuration error
        return EXIT_USAGE
    return source_status(len(snaps) - unread, len(snaps))


def _joined(errors: list[ConfigError]) -> ConfigError:
    return errors[0] if len(errors) == 1 else ConfigErrors(errors)


def _alerts_problems(path: str) -> list[ConfigError]:
    """What ``[alerts]`` holds wrong, read from the file when the loader refused it (so no
    Config holds the table): the loader leaves that table to the watcher's own parser, and
    its mistakes came one fix later, after every other table's."""
    import tomllib

    from cockpit.watch.alerts import AlertConfig

    try:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("alerts", {})
    except (OSError, ValueError, RecursionError):  # unreadable or not TOML: the loader says so
        return []
    if not isinstance(table, dict):
        return []
    try:
        AlertConfig.from_table(table, path)
    except ConfigError as exc:
        return list(getattr(exc, "errors", [exc]))
    return []
