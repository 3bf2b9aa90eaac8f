"""The optional outputs hung on a :class:`~cockpit.watch.watcher.Watcher` from ``[alerts]``:
the Alertmanager channel (``[alerts.alertmanager]``) and ``/metrics`` (``metrics_listen`` or
``cockpit watch --metrics-port``).

Both take each poll's incidents through the watcher's ``sync`` hook, so they see what the alert
channels see; ``/metrics`` also times each poll (:meth:`Outputs.polled`). Errors are kept, and
:meth:`Outputs.news` gives each change of an error once, for ``cockpit watch`` to print as
one line (an Alertmanager that stays down is said once, and again when it is back).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.model import Snapshot
from cockpit.watch.alerts import AlertConfig, parse_listen

if TYPE_CHECKING:
    from cockpit.watch.alertmanager import AlertmanagerChannel
    from cockpit.watch.metrics import Metrics, MetricsServer
    from cockpit.watch.notify import NotifyResult


def alertmanager_channel(
    config: AlertConfig, store: Any = None, metrics: Metrics | None = None
) -> AlertmanagerChannel | None:
    """The channel for ``[alerts.alertmanager]``, None when the table is absent."""
    if config.alertmanager is None:
        return None
    from cockpit.watch.alertmanager import AlertmanagerChannel

    channel = AlertmanagerChannel(config.alertmanager, store=store)
    if metrics is not None:
        count_deliveries(channel, metrics)
    return channel


def count_deliveries(channel: AlertmanagerChannel, metrics: Metrics) -> None:
    """Alertmanager posts into ``cockpit_alerts_sent_total`` (alerts per post, by outcome)."""

    def on_result(r: NotifyResult, n: int) -> None:
        metrics.delivered(r.channel, r.ok, n)

    channel.on_result = on_result


@dataclass
class Outputs:
    """What :func:`attach` hung on a watcher; :meth:`close` stops the metrics server."""

    channel: AlertmanagerChannel | None = None
    metrics: Metrics | None = None
    server: MetricsServer | None = None
    _said: dict[str, str] = field(default_factory=dict)

    def polled(self, snap: Snapshot, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.polled(snap.source, snap.kind, snap.ok, seconds, snap.taken_at)

    def news(self) -> list[str]:
        """One line per output whose error appeared, changed or cleared since the last call."""
        out = []
        if self.channel is not None:
            err = self.channel.last_error
            before = self._said.get("alertmanager", "")
            if err != before:
                out.append(err or f"alertmanager: delivering again to {self.channel.config.url}")
                self._said["alertmanager"] = err
        return out

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


def attach(
    watcher: Any,
    config: AlertConfig,
    *,
    store: Any = None,
    metrics_port: int | None = None,
    on_listen: Callable[[str], None] | None = None,
    serve: bool = True,
) -> Outputs:
    """Hang the Alertmanager channel and /metrics (when configured) on ``watcher``.

    ``metrics_port`` (``--metrics-port``) overrides the port of ``config.metrics_listen``
    (host default 127.0.0.1); ``serve`` False (a ``--once`` run) serves none. Raises UserError
    when the metrics address cannot be bound.
    """
    out = Outputs()
    listen = config.metrics_listen
    if metrics_port is not None:
        host = parse_listen(listen)[0] if listen else "127.0.0.1"
        listen = f"[{host}]:{metrics_port}" if ":" in host else f"{host}:{metrics_port}"
    if listen and serve:
        from cockpit.watch.metrics import Metrics

        out.metrics = Metrics()
        host, port = parse_listen(listen)
        try:
            out.server = out.metrics.serve(host, port)
        except OSError as exc:
            raise UserError(
                _("cannot serve /metrics on {listen}: {error}").format(
                    listen=listen, error=exc.strerror or exc
                )
            ) from None
        if on_listen is not None:
            on_listen(out.server.url)
        _count_notifier_results(watcher, out.metrics)
        watcher.channels.append(out.metrics)
    # watcher_for already hangs it on a configured watcher; a bare Watcher gets it here
    out.channel = next(
        (c for c in watcher.channels if getattr(c, "name", "") == "alertmanager"), None
    )
    if out.channel is None:
        out.channel = alertmanager_channel(config, store)
        if out.channel is not None:
            watcher.channels.append(out.channel)
    if out.channel is not None and out.metrics is not None:
        count_deliveries(out.channel, out.metrics)
    return out


def _count_notifier_results(watcher: Any, metrics: Metrics) -> None:
    """The webhook and command channels' deliveries into ``cockpit_alerts_sent_total``."""
    for ch in watcher.channels:
        notifier = getattr(ch, "notifier", None)
        if notifier is not None:
            notifier.on_result = lambda r: metrics.delivered(r.channel, r.ok)
