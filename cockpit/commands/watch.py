"""``cockpit watch``: the TUI's alerting without the UI, for cron or a systemd unit.

Polls every source (on its interval, or once with ``--once``), diagnoses, detects
what changed, filters through the ``[alerts]`` rules (mutes, rate limit), appends to
the alert history, notifies (``[alerts.notify]`` webhook / command) and prints one
line per alert (JSON lines with ``--json``).

* Loop (default): transitions between polls, as in the TUI; ``Ctrl-C`` exits 0.
* ``--once`` (cron): the *conditions* true now (failed jobs still in squeue, drained
  nodes, full filesystems, slow Initializing jobs, unreachable sources) minus those
  already true at the previous ``--once`` run (kept in ``--state``, default the state
  dir's ``watch-state.json``), so each condition is reported once, when it appears.
  Exit status: 1 when an alert fired, 0 when none did, 2 for a usage/config error.

``--demo`` watches the built-in simulated site and keeps everything in memory (no
history, no state, no notifications).

Beside open TUIs (and other ``watch`` processes) on the same store (:mod:`cockpit.store`),
each alert is delivered once per channel, whoever sees it first: this process prints (channel
``stdout``) and pages (``webhook``, ``command``) only what no other process has delivered
there. The exit status of ``--once`` counts what this process printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from cockpit.errors import EXIT_FOUND, EXIT_NO_SOURCE, EXIT_OK, UserError
from cockpit.i18n import _
from cockpit.model import Finding, Snapshot
from cockpit.text import json_line
from cockpit.watch.alerts import Alert
from cockpit.watch.transitions import detect, fold_by_incident, storage_alerts
from cockpit.watch.watcher import Watcher

if TYPE_CHECKING:
    from cockpit.watch.outputs import Outputs


def default_state_path() -> Path:
    return Path(platformdirs.user_state_dir("cockpit")) / "watch-state.json"


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "watch",
        help=_("alert without the UI (cron / systemd)"),
        description=__doc__.splitlines()[0],
    )
    add_common(p)
    p.add_argument(
        "--once",
        action="store_true",
        help=_("poll every source once, report new conditions, exit (cron)"),
    )
    p.add_argument("--json", action="store_true", help=_("one JSON object per alert (JSON lines)"))
    p.add_argument(
        "--history", metavar="FILE", help=_("alert history file (default: state dir alerts.jsonl)")
    )
    p.add_argument(
        "--state",
        metavar="FILE",
        help=_("--once memory of active conditions (default {path})").format(
            path=default_state_path()
        ),
    )
    p.add_argument(
        "--metrics-port",
        type=_port,
        metavar="N",
        help=_(
            "serve Prometheus /metrics on this port (host: [alerts] metrics_listen or 127.0.0.1)"
        ),
    )
    p.add_argument(
        "--cluster", action="append", metavar="NAME", help=_("only this cluster (repeatable)")
    )
    p.add_argument(
        "--modelarts",
        action="append",
        metavar="NAME",
        help=_("only this ModelArts project (repeatable)"),
    )
    p.set_defaults(func=run)


# --------------------------------------------------------------------------- pure parts


def current_conditions(
    snap: Snapshot, findings: Sequence[Finding], now: datetime, watcher: Watcher
) -> list[Alert]:
    """Every alert condition true in ``snap`` (as if compared with an empty site), unfiltered.

    An empty previous snapshot turns each transition rule into a level check: a FAILED
    job in squeue, a DRAIN node, an Initializing job past the threshold; storage over
    the threshold; the source itself when unreachable.
    """
    cfg = watcher.config
    empty = Snapshot(snap.source, snap.kind, snap.taken_at)
    out = detect(empty, snap, findings, now, config=cfg, recent=watcher.alerts, last_good=empty)
    if snap.ok and snap.storage:
        files = [f for f in findings if f.subject.kind == "file"]
        out += storage_alerts(snap.source, None, snap.storage, now, config=cfg, findings=files)
    return out


def condition_keys(a: Alert) -> list[str]:
    """What a ``--once`` run remembers of an alert: its key, and for an incident of several
    jobs one key per job, so a job joining it since the last run is news."""
    if not a.is_group:
        return [a.key]
    return [a.key, *(f"{a.key}|{m.source}/{m.id}" for m in a.members)]


EVIDENCE_REPEAT_S = 3600.0  # an evidence error printed again after this long


def due_lines(
    lines: set[str], said: dict[str, float], now: float, every: float = EVIDENCE_REPEAT_S
) -> list[str]:
    """The ``lines`` not printed in the last ``every`` seconds, sorted; ``said`` remembers
    when each was (bounded: the oldest forgotten past 10,000)."""
    out = []
    for line in sorted(lines):
        if now - said.get(line, now - every) >= every:
            out.append(line)
            said.pop(line, None)
            said[line] = now
    while len(said) > 10_000:
        del said[next(iter(said))]
    return out


def new_conditions(
    alerts: Sequence[Alert],
    previous: Sequence[str],
    muted: Callable[[Alert], bool] = lambda a: False,
) -> list[Alert]:
    """Alerts not active at the last ``--once`` run, or an incident some job joined since
    (never ``source_recovered``). ``muted``: the mutes; a muted job joining is no news (the
    group's own alert, not muted, paged for it)."""
    before = set(previous)

    def news(a: Alert) -> bool:
        if a.key not in before:
            return True
        return any(
            f"{a.key}|{m.source}/{m.id}" not in before
            and not muted(replace(a, subject=m, incident="", members=()))
            for m in a.members
        )

    return [a for a in alerts if a.rule != "source_recovered" and news(a)]


def load_state(path: Path) -> dict[str, list[str]]:
    """``{source: [alert key, ...]}``; a missing or corrupt file is an empty state (first run)."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): [str(x) for x in v] for k, v in d.get("active", {}).items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def save_state(path: Path, active: dict[str, list[str]]) -> None:
    """Atomic write. Raises OSError when the state dir cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".watch-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": 1, "active": active}, fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- running


def _printer(as_json: bool) -> Callable[[Alert], None]:
    from cockpit.commands.alerts import print_alert, terminal_console

    console = None if as_json else terminal_console()

    def emit(a: Alert) -> None:
        if as_json:
            print(json_line(a.to_json()), flush=True)
        else:
            print_alert(a, console)

    return emit


async def watch_once(
    sources: list,
    watcher: Watcher,
    store,
    previous: dict[str, list[str]],
    publish: bool = False,
    answered: list[str] | None = None,
) -> tuple[list[Alert], dict[str, list[str]], bool]:
    """Poll each source once through the core; returns (alerts that fired, the new
    active-condition state, whether a critical incident is open). ``answered`` gets the names
    of the sources that answered."""
    from cockpit.commands.incidents import MAX_ARTIFACTS
    from cockpit.runtime.hub import one_shot

    hub = await one_shot(sources, store=store, evidence_budget=MAX_ARTIFACTS, publish=publish)
    for st in hub.states.values():
        for err in st.evidence.errors:
            print(f"cockpit: {err}", file=sys.stderr)
    fired: list[Alert] = []
    active = dict(previous)
    now = hub.clock()
    for name, st in hub.states.items():
        mine = [i for i in hub.incidents if i.subject.source == name]
        if st.error is not None:
            snap = Snapshot(name, st.source.kind, st.last_attempt or now, error=st.error)
            findings: tuple[Finding, ...] = ()
        else:
            assert st.snapshot is not None
            snap, findings = st.snapshot, st.findings
        conds = current_conditions(snap, findings, now, watcher)
        # one alert per incident of several jobs (its key is the condition's)
        conds = fold_by_incident(conds, mine)
        fresh = new_conditions(conds, previous.get(name, ()), watcher.rules.is_muted)
        if snap.ok:
            if answered is not None:
                answered.append(name)
            active[name] = sorted({k for a in conds for k in condition_keys(a)})
        else:  # keep what we knew about jobs and nodes; remember the outage itself
            known = {k for a in conds for k in condition_keys(a)}
            active[name] = sorted(set(previous.get(name, ())) | known)
        fired += watcher.record(fresh, now, snap)
        # the incident channels (Alertmanager, /metrics): the store has them from the core
        if st.outage is not None:
            await asyncio.to_thread(watcher.incidents, name, [st.outage], now, ok=False)
        else:
            await asyncio.to_thread(watcher.incidents, name, mine, now)
    critical = any(i.severity == "critical" for i in hub.incidents) or any(
        st.outage is not None for st in hub.states.values()
    )
    return fired, active, critical


class PrintChannel:
    """``cockpit watch``'s own output as a delivery channel (``stdout``): with a store, a cron
    ``watch`` prints an alert only if no other ``watch`` printed it."""

    name = "stdout"

    def __init__(self, emit: Callable[[Alert], None]) -> None:
        self.emit = emit
        self.count = 0
        # `watch --json | head`: the reader left. Set from the delivering thread; the loop
        # then ends (exit 141, as any command whose reader left)
        self.reader_left: Callable[[], None] | None = None
        self.left = False

    def send(self, alerts: Sequence[Alert]) -> None:
        if self.left:
            return
        try:
            for a in alerts:
                self.emit(a)
        except BrokenPipeError:
            self.left = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error
            if self.reader_left is not None:
                self.reader_left()
            return
        self.count += len(alerts)


async def watch_loop(
    sources: list,
    watcher: Watcher,
    clock: Callable[[], datetime],
    store=None,
    outputs: Outputs | None = None,
    publish: bool = False,
) -> None:
    """Poll each source on its interval forever through the core (the TUI's pollers, without
    the UI): the watcher hears every poll, the store keeps the incidents' lifecycle."""
    from cockpit.runtime.hub import Hub

    hub = Hub(sources, clock=clock)
    hub.watcher, hub.store = watcher, store
    hub.publish_snapshots = publish  # [store] follow: the team's TUIs read its polls
    if outputs is not None:
        hub.on_poll = outputs.polled

    # evidence errors already printed -> when: each once an hour (a retry with backoff fails
    # every other round, and printing what was new since the last round repeated it all day)
    said: dict[str, float] = {}

    def news(_update: object) -> None:
        now_failing = {e for st in hub.states.values() for e in st.evidence.errors}
        for err in due_lines(now_failing, said, time.monotonic()):
            print(f"cockpit: {err}", file=sys.stderr, flush=True)
        for line in outputs.news() if outputs is not None else ():
            print(f"cockpit: {line}", file=sys.stderr, flush=True)

    hub.post = news
    await hub.run()


def _port(text: str) -> int:
    """A TCP port for --metrics-port (argparse prints the refusal as a usage error)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port (1-65535): {text!r}")
    return port


def run(args: argparse.Namespace) -> int:
    from cockpit.config import load_config
    from cockpit.connect import select_sources
    from cockpit.watch.alerts import AlertConfig
    from cockpit.watch.history import AlertHistory
    from cockpit.watch.notify import Notifier

    demo = bool(args.demo)
    clock: Callable[[], datetime] | None = None
    store = config = None
    if demo:
        from cockpit.commands.tui import demo_clock

        clock = demo_clock()
        cfg = AlertConfig()
        watcher = Watcher(cfg, announce_open=not args.once)
    else:
        from cockpit.store import open_store

        config = load_config(args.config)
        if not config.exists:  # unlike the other commands, no demo: a cron job must not page
            raise UserError(
                _(
                    "no config file ({path}): watch needs one with [clusters.NAME] or "
                    "[modelarts.NAME] (see `cockpit check-config`), or --demo to try it"
                ).format(path=config.path)
            )
        if not config.has_sources:
            raise UserError(
                _("{path}: no [clusters.NAME] or [modelarts.NAME] to watch (try --demo)").format(
                    path=config.path
                )
            )
        store = open_store(config=config)  # a newer schema: one line here, exit 2
        if not store.available:
            print(
                _("cockpit: {error} (alerts may repeat)").format(error=store.last_error),
                file=sys.stderr,
            )
        cfg = AlertConfig.from_table(config.alerts, config.path)
        watcher = Watcher(
            cfg,
            history=AlertHistory(args.history),
            notifier=Notifier(cfg.notify),
            store=store,
            announce_open=not args.once,  # a watch started late still says what is open
        )
        if watcher.last_error:
            print(f"cockpit: {watcher.last_error}", file=sys.stderr)
    sources = select_sources(args, clock=clock)
    if not sources:
        raise UserError(_("no sources to watch"))
    now_fn = clock or (lambda: datetime.now(UTC))
    emit = _printer(args.json)
    printer = PrintChannel(emit)
    watcher.channels.append(printer)
    state_path = Path(args.state) if args.state else default_state_path()
    if args.once and args.metrics_port is not None:
        raise UserError(_("--metrics-port serves while watch runs: not with --once"))
    from cockpit.watch.outputs import attach

    outputs = attach(  # Alertmanager (not for the demo: it never pages anyone) and /metrics
        watcher,
        cfg,
        store=store,
        metrics_port=args.metrics_port,
        on_listen=lambda url: print(
            _("cockpit: metrics on {url}").format(url=url), file=sys.stderr, flush=True
        ),
        serve=not args.once,
    )

    async def main() -> int:
        try:
            if args.once:
                previous = {} if demo else load_state(state_path)
                follow = config is not None and config.store.follow
                answered: list[str] = []
                fired, active, critical = await watch_once(
                    sources, watcher, store, previous, publish=follow, answered=answered
                )
                for line in outputs.news():
                    print(f"cockpit: {line}", file=sys.stderr)
                if not demo:
                    try:
                        save_state(state_path, active)
                    except OSError as exc:
                        print(
                            _("cockpit: cannot write {path}: {error}").format(
                                path=state_path, error=exc.strerror or exc
                            ),
                            file=sys.stderr,
                        )
                # 3: no source answered (cron must not read silence as all clear); 1: something
                # to act on, printed here now or still open since an earlier run
                if printer.left:
                    return 141  # the reader left (`watch --once | true`), as any command
                if sources and not answered:
                    return EXIT_NO_SOURCE
                return EXIT_FOUND if printer.count or critical else EXIT_OK
            follow = config is not None and config.store.follow
            loop = asyncio.get_running_loop()
            main_task = asyncio.current_task()
            assert main_task is not None
            printer.reader_left = lambda: loop.call_soon_threadsafe(main_task.cancel)
            try:
                await watch_loop(sources, watcher, now_fn, store, outputs, publish=follow)
            except asyncio.CancelledError:
                if not printer.left:
                    raise
            return 141 if printer.left else 0
        finally:
            outputs.close()
            for s in sources:
                try:
                    await s.close()
                except Exception:  # noqa: BLE001 - closing a dead connection must not hide the result
                    pass

    try:
        code = asyncio.run(main())
    except KeyboardInterrupt:
        return 0
    if watcher.notifier is not None:
        watcher.notifier.join(timeout=watcher.config.notify.timeout_s + 5)
    watcher.join(timeout=watcher.config.notify.timeout_s + 5)  # the channels' deliveries
    if store is not None:
        store.close()
    return code
