"""``/metrics`` for Prometheus: what ``cockpit watch`` sees, as numbers to graph and alert on.

Metric names (every ``cluster`` label is the source's name: a Slurm cluster or a ModelArts
project, as in the Alertmanager alerts):

* ``cockpit_open_incidents{cluster, severity, root_cause}`` gauge: the incidents open after the
  source's last poll (the numbers ``cockpit incidents`` lists);
* ``cockpit_poll_duration_seconds{cluster}`` histogram: how long a poll took;
* ``cockpit_source_up{cluster, kind}`` gauge: 1 when the last poll answered, else 0;
* ``cockpit_last_successful_poll_timestamp_seconds{cluster}`` gauge (Unix time);
* ``cockpit_alerts_sent_total{channel, outcome}`` counter: alerts handed to a channel
  (``alertmanager``, ``webhook``, ``command``), ``outcome`` ``sent`` or ``failed``;
  Alertmanager counts its re-posts too.

Each :class:`Metrics` has its own ``CollectorRegistry`` (not the process-global one), so
tests and several watchers never share counters. prometheus-client is imported when a
:class:`Metrics` is made, never at start-up.
"""

from __future__ import annotations

import threading
from collections import Counter as Tally
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from cockpit.model import Incident

POLL_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class Metrics:
    """The cockpit's metrics: call :meth:`polled`, :meth:`set_incidents`, :meth:`delivered`;
    :meth:`serve` exposes them over HTTP."""

    name = "metrics"

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        self._lock = threading.Lock()
        self._incidents: dict[str, dict[str, tuple[str, str]]] = {}  # key -> (severity, cause)
        self._up: dict[str, tuple[str, bool]] = {}
        self._last_ok: dict[str, float] = {}
        self.poll_seconds = Histogram(
            "cockpit_poll_duration_seconds",
            "Seconds one poll of a source took",
            ["cluster"],
            buckets=POLL_BUCKETS,
            registry=self.registry,
        )
        self.alerts_sent = Counter(
            "cockpit_alerts_sent",
            "Alerts handed to a notification channel, by outcome",
            ["channel", "outcome"],
            registry=self.registry,
        )
        self.registry.register(_StateCollector(self))

    def polled(self, source: str, kind: str, ok: bool, seconds: float, at: datetime) -> None:
        """One poll of ``source`` ended at ``at`` after ``seconds``; ``ok`` it answered."""
        self.poll_seconds.labels(source).observe(max(0.0, seconds))
        with self._lock:
            self._up[source] = (kind, ok)
            if ok:
                self._last_ok[source] = at.timestamp()

    def set_incidents(self, source: str, incidents: Iterable[Incident], ok: bool = True) -> None:
        """``source``'s open incidents now: they replace what its previous poll said, or, after
        a failed poll (``ok`` False), are added to it (an outage says nothing of the jobs)."""
        fresh = {i.key: (i.severity, i.root_cause) for i in incidents}
        with self._lock:
            self._incidents[source] = fresh if ok else {**self._incidents.get(source, {}), **fresh}

    def sync(self, source: str, incidents: Iterable[Any], now: datetime, ok: bool = True) -> None:
        """The watcher's per-poll hook (as the Alertmanager channel's): the store's
        ``StoredIncident`` count while open, a resolved one no longer does."""
        open_ = [
            getattr(x, "incident", x) for x in incidents if getattr(x, "resolved_at", None) is None
        ]
        self.set_incidents(source, open_, ok)

    def delivered(self, channel: str, ok: bool, count: int = 1) -> None:
        if count > 0:
            self.alerts_sent.labels(channel, "sent" if ok else "failed").inc(count)

    def text(self) -> str:
        """The exposition text (what a scrape gets)."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry).decode()

    def serve(self, host: str, port: int) -> MetricsServer:
        """Serve ``/metrics`` on ``host:port`` (0: a free port) in a daemon thread.
        Raises OSError when the address cannot be bound."""
        return MetricsServer(self, host, port)

    # -- read by the collector at scrape time

    def _state(self) -> tuple[dict[str, Tally[tuple[str, str]]], dict, dict]:
        with self._lock:
            tallies = {s: Tally(d.values()) for s, d in self._incidents.items()}
            return tallies, dict(self._up), dict(self._last_ok)


class _StateCollector:
    """Gauges built from the latest poll of each source at scrape time, so an incident that
    closed leaves no stale series behind."""

    def __init__(self, metrics: Metrics) -> None:
        self._m = metrics

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        incidents, up, last_ok = self._m._state()
        open_ = GaugeMetricFamily(
            "cockpit_open_incidents",
            "Open incidents after the source's last poll",
            labels=["cluster", "severity", "root_cause"],
        )
        for source, tally in sorted(incidents.items()):
            for (severity, cause), n in sorted(tally.items()):
                open_.add_metric([source, severity, cause], n)
        yield open_
        alive = GaugeMetricFamily(
            "cockpit_source_up",
            "1 when the source's last poll answered",
            labels=["cluster", "kind"],
        )
        for source, (kind, ok) in sorted(up.items()):
            alive.add_metric([source, kind], 1.0 if ok else 0.0)
        yield alive
        last = GaugeMetricFamily(
            "cockpit_last_successful_poll_timestamp_seconds",
            "Unix time of the source's last poll that answered",
            labels=["cluster"],
        )
        for source, ts in sorted(last_ok.items()):
            last.add_metric([source], ts)
        yield last


class MetricsServer:
    """A small threaded HTTP server for one registry; :meth:`close` stops it."""

    def __init__(self, metrics: Metrics, host: str, port: int) -> None:
        import socket
        from socketserver import ThreadingMixIn
        from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

        from prometheus_client import make_wsgi_app

        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # stderr belongs to the watch output

        class Server(ThreadingMixIn, WSGIServer):
            daemon_threads = True
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        self._httpd = make_server(host, port, make_wsgi_app(metrics.registry), Server, Quiet)
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="cockpit-metrics", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
