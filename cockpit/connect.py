"""Config -> live sources, and the source selection every CLI command shares."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cockpit.errors import UserError
from cockpit.i18n import N_, _

if TYPE_CHECKING:  # config/zoneinfo are imported where used: the demo's start-up needs neither
    from cockpit.config import ClusterConfig, Config
    from cockpit.source import Source


def build_transport(cfg: ClusterConfig) -> Any:
    """LocalTransport or SshTransport for one cluster entry."""
    from cockpit.transport import LocalTransport, SshTransport

    if cfg.transport == "local":
        return LocalTransport(name=cfg.name)
    return SshTransport(
        cfg.host,
        cfg.port,
        cfg.user,
        cfg.key,
        cfg.known_hosts,
        cfg.connect_timeout,
        ssh_config=cfg.ssh_config,
        insecure_ignore_host_key=cfg.insecure_ignore_host_key,
        name=cfg.name,
        # the poller already paces retries; the transport must not refuse the next poll's
        # reconnect, or recovery after sshd returns would take longer than two intervals
        max_backoff=float(cfg.interval),
    )


def build_cluster(cfg: ClusterConfig, *, clock: Callable[[], datetime] | None = None) -> Source:
    from zoneinfo import ZoneInfo

    if cfg.transport == "rest":
        return build_rest_cluster(cfg, clock=clock)
    from cockpit.slurm.source import SlurmSource

    return SlurmSource(
        cfg.name,
        build_transport(cfg),
        interval=cfg.interval,
        clock=clock,
        tz=ZoneInfo(cfg.timezone),
        slurmctld_log=cfg.slurmctld_log,
        slurmd_log=cfg.slurmd_log,
        storage_paths=cfg.storage_paths,
        command_timeout=cfg.command_timeout,
        background_evidence=cfg.evidence == "failures",
        backfill_hours=cfg.backfill_hours,
    )


def build_rest_cluster(
    cfg: ClusterConfig, *, clock: Callable[[], datetime] | None = None
) -> Source:
    """A cluster read through slurmrestd (``transport = "rest"``)."""
    from zoneinfo import ZoneInfo

    from cockpit.slurm.rest import RestClient, RestSlurmSource, token_reader

    client = RestClient(
        cfg.url, token_reader(cfg.token_env, cfg.token_file), cfg.user, cfg.command_timeout
    )
    return RestSlurmSource(
        cfg.name,
        client,
        interval=cfg.interval,
        clock=clock,
        tz=ZoneInfo(cfg.timezone),
        background_evidence=cfg.evidence == "failures",
    )


def build_sources(
    config: Config,
    *,
    clock: Callable[[], datetime] | None = None,
    clusters: list[str] | None = None,
    modelarts: list[str] | None = None,
) -> list[Source]:
    """One source per config entry (optionally only the named ones), clusters first.

    Raises UserError when a ModelArts entry exists but the ModelArts source is unavailable.
    """
    sources: list[Source] = []
    for name, cfg in config.clusters.items():
        if clusters is None or name in clusters:
            source = build_cluster(cfg, clock=clock)
            source.allow_actions = cfg.allow_actions
            source.use_risk(config.risk)  # a no-op where there is no sstat (slurmrestd)
            sources.append(source)
    wanted = [(n, c) for n, c in config.modelarts.items() if modelarts is None or n in modelarts]
    if wanted:
        try:
            from cockpit.modelarts.source import ModelArtsSource
        except ImportError as exc:
            raise UserError(
                _("ModelArts support is not available: {error}").format(error=exc)
            ) from None
        for _name, cfg in wanted:
            source = ModelArtsSource.from_config(cfg, clock=clock)
            source.allow_actions = cfg.allow_actions
            source.use_risk(config.risk)  # log_silent_s for Running jobs' logs
            sources.append(source)
    return sources


def demo(seed: int = 7, clock: Callable[[], datetime] | None = None) -> list[Source]:
    try:
        from cockpit.demo.site import demo_sources
    except ImportError as exc:
        raise UserError(_("the demo site is not available: {error}").format(error=exc)) from None
    return demo_sources(seed=seed) if clock is None else demo_sources(seed=seed, clock=clock)


def _demo_selection(
    args: argparse.Namespace,
    clock: Callable[[], datetime] | None,
    clusters: list[str] | None,
    projects: list[str] | None,
) -> list[Source]:
    """The demo site's sources (``demo-hpc``, ``demo-modelarts``), restricted by ``--cluster`` /
    ``--modelarts`` like a config's: either flag may name either demo source; an unknown name
    is a UserError."""
    sources = demo(getattr(args, "demo_seed", 7), clock)
    wanted = [*(clusters or ()), *(projects or ())]
    if not wanted:
        return sources
    names = [s.name for s in sources]
    for n in wanted:
        if n not in names:
            # either flag may name either demo source, but the list offered is of its own kind
            cluster = n in (clusters or ())
            known = [s.name for s in sources if (s.kind == "slurm") == cluster]
            msg = (
                _("unknown cluster {name} on the demo site (known: {known})")
                if cluster
                else _("unknown ModelArts project {name} on the demo site (known: {known})")
            )
            raise UserError(msg.format(name=repr(n), known=", ".join(known)))
    return [s for s in sources if s.name in wanted]


def _names(arg: Any) -> list[str] | None:
    if arg is None:
        return None
    return [arg] if isinstance(arg, str) else list(arg)


def select_sources(
    args: argparse.Namespace, *, clock: Callable[[], datetime] | None = None
) -> list[Source]:
    """Sources for a CLI command: ``--demo``, else the config (no config -> the demo).

    ``--cluster NAME`` / ``--modelarts NAME`` (when the command has them) restrict the
    selection; an unknown name raises UserError listing the known ones.
    """
    clusters = _names(getattr(args, "cluster", None))
    projects = _names(getattr(args, "modelarts", None))
    if getattr(args, "demo", False):
        return _demo_selection(args, clock, clusters, projects)
    from cockpit.config import load_config

    config = load_config(getattr(args, "config", None))
    if not config.has_sources:
        if getattr(args, "config", None):
            raise UserError(
                _("{path}: no [clusters.NAME] or [modelarts.NAME] entries").format(path=config.path)
            )
        return _demo_selection(args, clock, clusters, projects)
    for names, known, unknown in (
        (clusters, config.clusters, N_("unknown cluster {name} in {path} (known: {known})")),
        (
            projects,
            config.modelarts,
            N_("unknown ModelArts project {name} in {path} (known: {known})"),
        ),
    ):
        for n in names or ():
            if n not in known:
                listed = ", ".join(sorted(known)) or _("none")
                raise UserError(_(unknown).format(name=repr(n), path=config.path, known=listed))
    if clusters is not None and projects is None:
        projects = []
    elif projects is not None and clusters is None:
        clusters = []
    return build_sources(config, clock=clock, clusters=clusters, modelarts=projects)
