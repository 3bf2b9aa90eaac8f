"""Watch and alert: transitions between snapshots become alerts, kept and sent out.

Public surface: :func:`detect`, :func:`storage_alerts` (transitions),
:class:`Alert`, :class:`AlertConfig`, :class:`AlertRules` (alerts),
:class:`AlertHistory` (history), :class:`Notifier` (notify),
:class:`Watcher` (the glue the hub uses).
"""

from cockpit.watch.alerts import Alert, AlertConfig, AlertRules, NotifyConfig
from cockpit.watch.history import AlertHistory
from cockpit.watch.notify import Notifier
from cockpit.watch.transitions import detect, storage_alerts
from cockpit.watch.watcher import Watcher

__all__ = [
    "Alert",
    "AlertConfig",
    "AlertHistory",
    "AlertRules",
    "Notifier",
    "NotifyConfig",
    "Watcher",
    "detect",
    "storage_alerts",
]
