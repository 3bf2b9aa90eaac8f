"""``cockpit`` with no subcommand: the TUI. Builds sources from the config (or the demo)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from cockpit.errors import UserError

NO_CONFIG_BANNER = (
    "DEMO SITE (simulated; no config file). Add a real cluster: "
    "put [clusters.NAME] in {path} and run `cockpit check-config`"
)


def _quiet_libraries() -> None:
    """Textual draws on stderr: library loggers must not write there while it runs."""
    root = logging.getLogger()
    root.handlers[:] = [logging.NullHandler()]
    for name in ("asyncssh", "huaweicloudsdkcore", "huaweicloudsdkmodelarts"):
        lg = logging.getLogger(name)
        lg.handlers[:] = [logging.NullHandler()]
        lg.propagate = False


def banner_for(args: argparse.Namespace) -> tuple[str, bool]:
    """(header banner, bell from config). Demo → the banner says so and how to add a cluster."""
    if getattr(args, "demo", False):
        return "DEMO SITE (simulated, --demo)", True
    from cockpit.config import default_config_path, load_config

    config = load_config(getattr(args, "config", None))
    if not config.has_sources:
        return NO_CONFIG_BANNER.format(
            path=getattr(args, "config", None) or default_config_path()
        ), config.ui.bell
    return "", config.ui.bell


def demo_clock() -> Callable[[], datetime]:
    """Wall clock shifted so a live demo opens on the demo's story (``DEMO_START``).

    The app and the demo site must share it, or every age on screen would be off
    by the shift (and the data shown as STALE).
    """
    from cockpit.demo.site import DEMO_START

    offset = datetime.now(UTC) - DEMO_START
    return lambda: datetime.now(UTC) - offset


def _demo_watch(app) -> None:
    """The demo's alerts and baselines: in memory, nothing sent (``watcher_for(demo=True)``)."""
    from cockpit.watch.watcher import watcher_for

    app.hub.watcher = watcher_for(None, demo=True)


def run(args: argparse.Namespace) -> int:
    """Run the TUI until ``q``; returns the exit status (0; 1 when the app crashed)."""
    from cockpit.app import CockpitApp
    from cockpit.connect import select_sources

    banner, bell = banner_for(args)
    clock = demo_clock() if banner.startswith("DEMO") else None
    sources = select_sources(args, clock=clock)
    if not sources:
        raise UserError("no sources to watch")
    demo = bool(getattr(args, "demo", False))
    config = watcher = baselines = None
    if not demo:  # a bad [alerts] table must fail here, as one line, not inside the TUI
        from cockpit.config import load_config
        from cockpit.watch.watcher import baselines_for, watcher_for

        config = load_config(getattr(args, "config", None))
        watcher, baselines = watcher_for(config), baselines_for(config)
    _quiet_libraries()
    state = getattr(args, "state_file", None)
    from cockpit.store.acks import AckStore, demo_state_path

    if not state and banner.startswith("DEMO"):  # demo acks must not reappear on a real site
        state = str(demo_state_path())

    app = CockpitApp(
        sources,
        bell=bell and not getattr(args, "no_bell", False),
        acks=AckStore(Path(state) if state else None),
        banner=banner,
        watcher=watcher,
        clock=clock,
        baselines=baselines,
        # the demo's in-memory watcher (cannot fail) is built after the first frame
        late=_demo_watch if demo else None,
        export_dir=Path(config.ui.export_dir).expanduser()
        if config is not None and config.ui.export_dir
        else None,
    )
    code = app.run()
    # a crash returns None after Textual printed the traceback; its return_code is then 1
    return int(code if code is not None else (app.return_code or 0))
