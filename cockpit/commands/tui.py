"""``cockpit`` with no subcommand: the TUI. Builds sources from the config (or the demo)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from cockpit.errors import UserError
from cockpit.i18n import N_, _

NO_CONFIG_BANNER = N_(
    "DEMO SITE (simulated; no config file). Add a real cluster: "
    "put [clusters.NAME] in {path} and run `cockpit check-config`"
)
DEMO_BANNER = N_("DEMO SITE (simulated, --demo)")


NOT_A_TERMINAL = N_(
    "the TUI needs a terminal, but {stream} is {what}; for plain text (pipes, files, "
    "scripts) run `cockpit snapshot`, `cockpit incidents` or `cockpit diagnose JOB`"
)


def require_terminal() -> None:
    """The TUI draws escape codes and reads keys: with a stream piped or redirected
    (``cockpit | less``, ``cockpit > file``, cron) it would fill the pipe with them or wait
    for keys that never come. Refuse in one line (UserError: exit 2) naming the commands
    made for that."""
    for name, stream in (("stdout", sys.stdout), ("stdin", sys.stdin), ("stderr", sys.stderr)):
        try:
            tty = stream is not None and stream.isatty()
        except (ValueError, AttributeError):  # closed, or replaced by something without a fd
            tty = False
        if not tty:
            what = _("not open") if stream is None else _("piped or redirected")
            raise UserError(_(NOT_A_TERMINAL).format(stream=name, what=what))


def _quiet_libraries() -> None:
    """Textual draws on stderr: library loggers must not write there while it runs."""
    root = logging.getLogger()
    root.handlers[:] = [logging.NullHandler()]
    for name in ("asyncssh", "huaweicloudsdkcore", "huaweicloudsdkmodelarts"):
        lg = logging.getLogger(name)
        lg.handlers[:] = [logging.NullHandler()]
        lg.propagate = False


def banner_for(args: argparse.Namespace) -> tuple[str, bool]:
    """(header banner, bell from config). Demo → the banner says so and how to add a cluster;
    a real site → no banner. The banner is in the language spoken: ``bool(banner)``, never its
    words, says whether this is the demo site (a Chinese "演示站点" once opened the real
    store)."""
    if getattr(args, "demo", False):
        return _(DEMO_BANNER), True
    from cockpit.config import default_config_path, load_config

    config = load_config(getattr(args, "config", None))
    if not config.has_sources:
        return _(NO_CONFIG_BANNER).format(
            path=getattr(args, "config", None) or default_config_path()
        ), config.ui.bell
    return "", config.ui.bell


def demo_clock(epoch: float | None = None) -> Callable[[], datetime]:
    """Wall clock shifted so a live demo opens on the demo's story (``DEMO_START``).

    The app and the demo site must share it, or every age on screen would be off
    by the shift (and the data shown as STALE). ``epoch``: the wall time (POSIX seconds) at
    which the demo's story began, when another process polls the demo (``cockpit web``'s
    browser sessions follow its poller); None: now.
    """
    from cockpit.demo.site import DEMO_START

    began = datetime.now(UTC) if epoch is None else datetime.fromtimestamp(epoch, UTC)
    offset = began - DEMO_START
    return lambda: datetime.now(UTC) - offset


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _demo_watch(app) -> None:
    """The demo's alerts and baselines: in memory, nothing sent (``watcher_for(demo=True)``)."""
    from cockpit.watch.watcher import watcher_for

    app.hub.watcher = watcher_for(None, demo=True, store=app.store)


def run(args: argparse.Namespace) -> int:
    """Run the TUI until ``q``; returns the exit status (0; 1 when the app crashed)."""
    from cockpit.app import CockpitApp
    from cockpit.connect import select_sources

    replay_dir = getattr(args, "replay", None)
    replay = None
    # a browser tab of `cockpit web` (cockpit.web.session.WebSession): it follows the store
    # that web's poller (or the site's `cockpit watch`) publishes to, read-only unless [web]
    # actions allows them
    web = getattr(args, "web_session", None)
    if replay_dir:
        from cockpit.record import replay_sources

        sources, replay = replay_sources(Path(replay_dir).expanduser())
        banner, bell, clock = replay.label(), False, replay
    else:
        banner, bell = banner_for(args)
        epoch = web.demo_epoch if web is not None else None
        # a banner only for the demo site (translated: never test its words)
        clock = demo_clock(epoch) if banner else None
        sources = select_sources(args, clock=clock)
    if not sources:
        raise UserError(_("no sources to watch"))
    # the demo by --demo or by having no config (the banner says which): its alerts and
    # baselines stay in memory, never in the real alert history a real site's run reads
    demo = bool(getattr(args, "demo", False)) or replay is not None or bool(banner)
    record_dir = getattr(args, "record", None)
    if record_dir and replay is not None:
        raise UserError(_("--record and --replay: one at a time (a replay is already recorded)"))
    if record_dir:
        from cockpit.record import start_recording

        skipped = start_recording(Path(record_dir).expanduser(), sources, clock or _utc_now)
        rec = f"● REC {Path(record_dir).expanduser()}"
        banner = f"{banner}   {rec}" if banner else rec
        if skipped:
            print(
                f"cockpit: --record keeps Slurm and ModelArts sources; not recorded: "
                f"{', '.join(skipped)}",
                file=sys.stderr,
            )
    config = watcher = baselines = None
    # the incident store opens on a thread while the first poll runs (cockpit.store.opening):
    # a newer schema (or a bad [store] url) ends the TUI and is printed below, as one line; a
    # database that cannot be reached does not (the TUI says "store unavailable")
    from functools import partial

    from cockpit.store import open_store
    from cockpit.store.opening import OpeningStore

    state = getattr(args, "state_file", None)
    # demo acks must not reappear on a real site (a replay keeps its own store below)
    on_demo = replay is None and bool(banner)
    if not demo:  # a bad [alerts] table must fail here, as one line, not inside the TUI
        from cockpit.config import load_config
        from cockpit.watch.watcher import baselines_for, watcher_for

        config = load_config(getattr(args, "config", None))
    if replay is not None:  # the replay's incidents and acks stay with the recording
        url = f"sqlite:///{Path(replay_dir).expanduser() / 'replay-store.db'}"
        store = OpeningStore(partial(open_store, url))
    else:
        legacy = Path(state).expanduser() if state else None
        url = web.store_url if web is not None else None
        if on_demo and url is None and web is None:
            forget_last_demo()
        store = OpeningStore(
            partial(open_store, url, config=config, demo=on_demo, legacy_acks=legacy)
        )
    if not demo:
        watcher, baselines = watcher_for(config, store=store), baselines_for(config)
    # the site's `cockpit watch` (or `cockpit web`'s poller) polls; this TUI reads the store
    if web is not None or (config is not None and config.store.follow):
        from cockpit.runtime.follow import following

        sources = following(sources, store, actions=web is not None and web.actions)
        banner = f"{banner}   following the store" if banner else "following the store"
    from cockpit.audit import default_audit_path

    _quiet_libraries()

    app = CockpitApp(
        sources,
        bell=bell and not getattr(args, "no_bell", False),
        store=store,
        banner=banner,
        watcher=watcher,
        clock=clock,
        baselines=baselines,
        # the demo's in-memory watcher (cannot fail) is built after the first frame
        late=_demo_watch if demo else None,
        readonly=bool(getattr(args, "readonly", False))
        or replay is not None
        or (web is not None and not web.actions),
        replay=replay,
        audit_path=default_audit_path(demo=on_demo),
        export_dir=Path(config.ui.export_dir).expanduser()
        if config is not None and config.ui.export_dir
        else None,
    )
    try:
        code = app.run()
    finally:
        queued = store.pending
        store.close()
        if queued:  # the TUI is gone: say it on the terminal, once
            print(
                f"cockpit: {queued} acknowledgement(s) could not be written: the store was "
                "unavailable when the cockpit quit; give them again when it is back",
                file=sys.stderr,
            )
    if store.error is not None:  # the app quit on it (CockpitApp._store_opened)
        raise store.error
    # a crash returns None after Textual printed the traceback; its return_code is then 1
    return int(code if code is not None else (app.return_code or 0))


def forget_last_demo() -> None:
    """A new demo run starts from an empty demo store: its clock restarts at the scenario's
    start, and the last run's incidents and acks (first seen hours "later", an ack "0 s ago",
    "(gone)" moving between incidents) would not fit it. One-shot heads (`incidents --demo`)
    read the running demo's store as it is, so an ack in this TUI shows there."""
    from cockpit.store import default_store_path
    from cockpit.store.acks import demo_state_path

    db = default_store_path(demo=True)
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        path.unlink(missing_ok=True)
    demo_state_path().unlink(missing_ok=True)
