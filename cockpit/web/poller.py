"""The one poller of ``cockpit web``: N browser tabs cost the clusters one poll per interval.

Every browser session runs the TUI as a follower of the store (:mod:`cockpit.runtime.follow`):
it reads the snapshots and evidence a poller published, and never polls a platform. When the
site already runs that poller (``[store] follow = true`` and a ``cockpit watch``), the sessions
follow it and this module is not used. Otherwise ``cockpit web`` is the poller: the core's
:class:`~cockpit.runtime.hub.Hub` runs headless beside the web server, in its event loop, and
publishes each good poll to the store the sessions read (the configured one, or the demo's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

from aiohttp import web

from cockpit.runtime.hub import Hub
from cockpit.source import Source

log = logging.getLogger(__name__)


def publishing_hub(
    sources: list[Source], store: Any, clock: Callable[[], datetime] | None = None
) -> Hub:
    """A headless hub over ``sources`` that keeps the incidents in ``store`` and publishes
    each good poll there for the followers."""
    hub = Hub(sources, clock=clock)
    hub.store = store
    hub.publish_snapshots = True
    return hub


def run_beside(app: web.Application, hub: Hub) -> None:
    """Poll with ``hub`` while ``app`` serves: started with the server, stopped (its sources
    closed) when the server stops."""

    async def polling(_app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(hub.run(), name="cockpit-web-poller")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await hub.close()

    app.cleanup_ctx.append(polling)
