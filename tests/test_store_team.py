"""A team on one PostgreSQL: two TUIs (Pilot) and one ``cockpit watch`` over the same 1,000
failed jobs. Every alert reaches the webhook exactly once, ``watch`` prints what no other
process printed, and each TUI shows the other's acks (who, note) after its next poll."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from cockpit.app import CockpitApp
from cockpit.model import ExitCode, SlurmJob
from cockpit.store import open_store
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.history import AlertHistory
from cockpit.watch.notify import Notifier
from cockpit.watch.watcher import Watcher
from tests.am_support import Webhook
from tests.pg import postgres  # noqa: F401 - the session fixture
from tests.ui_support import NOW, FakeSource

N = int(__import__("os").environ.get("H1N", "1000"))


def _jobs(state: str) -> tuple[SlurmJob, ...]:
    return tuple(
        SlurmJob(
            str(1000 + i),
            f"align-{i}",
            f"user{i % 7}",
            "cpu",
            # two causes (a non-zero exit, an OOM kill): at least two incidents to ack
            state if state == "RUNNING" or i % 2 else "OUT_OF_MEMORY",
            "None" if state == "RUNNING" else "NonZeroExitCode",
            cpus=4,
            node_count=1,
            nodes=(f"c{i % 5}",),
            node_list=f"c{i % 5}",
            elapsed_s=600,
            submit_time=NOW - timedelta(hours=1),
            end_time=None if state == "RUNNING" else NOW - timedelta(minutes=1),
            exit_code=None if state == "RUNNING" else ExitCode(1, 0),
        )
        for i in range(N)
    )


ALL = {str(1000 + i) for i in range(N)}


def _stored_jobs(app) -> set[str]:
    """Failed jobs the TUI lists among the store's open incidents (as subject or affected)."""
    r = app.hub.remembered
    if r is None:
        return set()
    out = set()
    for si in r.incidents:
        for s in (si.incident.subject, *si.incident.affected):
            if s.kind == "job":
                out.add(s.id)
    return out


def _jobs_in(bodies: list[dict]) -> set[str]:
    """The failed jobs the webhook's bodies name: an incident's alert names its members."""
    out: set[str] = set()
    for b in bodies:
        if b["rule"] == "job_failed":
            out |= {m["id"] for m in b.get("members", ())} or {b["subject"]["id"]}
    return out


async def _until(pilot, cond, what, rounds: int = 1200, poll=()) -> None:
    """Wait for ``cond``; ``poll``: apps to ask for a poll (``r``) every second meanwhile (a
    wake during a poll in flight is not a new poll)."""
    for n in range(rounds):
        if cond():
            return
        if n % 10 == 0:
            for app in poll:
                app.hub.refresh_now()
        await pilot.pause(0.1)
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")


async def test_two_tuis_and_a_watch_deliver_every_alert_once_and_share_acks(
    postgres,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    url = postgres.fresh_database("team")
    hook = Webhook()
    cfg = AlertConfig.from_table({"notify": {"webhook": hook.url}})
    sources = [FakeSource("lab", jobs=_jobs("RUNNING")) for _ in range(3)]
    stores = [open_store(url) for _ in range(3)]
    history = tmp_path / "alerts.jsonl"  # shared, as on one host: it must not silence watch

    def watcher(store) -> Watcher:
        return Watcher(cfg, AlertHistory(history), Notifier(cfg.notify), store=store)

    watchers = [watcher(s) for s in stores[:2]]
    apps = [
        CockpitApp(
            [sources[i]], clock=lambda: NOW, bell=False, store=stores[i], watcher=watchers[i]
        )
        for i in range(2)
    ]
    for i, name in enumerate(("ana", "bo")):
        apps[i].acks.who = name
    try:
        async with apps[0].run_test() as p0, apps[1].run_test() as p1:
            for app, p in ((apps[0], p0), (apps[1], p1)):
                await _until(p, lambda a=app: a.hub.states["lab"].settled, "first poll")
            # the 1,000 jobs fail; both TUIs poll again
            for s in sources:
                s.jobs = _jobs("FAILED")
            for app, p in ((apps[0], p0), (apps[1], p1)):
                await _until(
                    p,
                    lambda a=app: _stored_jobs(a) >= ALL,
                    lambda: f"the failures in the store: {[len(_stored_jobs(x)) for x in apps]}",
                    poll=[app],
                )
            # the `cockpit watch --once` beside them: prints only what nobody printed
            from cockpit.commands.watch import PrintChannel, watch_once

            printed = []
            watchers.append(watcher(stores[2]))  # started by cron after the TUIs fired
            watchers[2].channels.append(PrintChannel(printed.append))
            await watch_once([sources[2]], watchers[2], stores[2], {})
            for w in watchers:
                w.join(30)
            await _until(
                p0,
                lambda: _jobs_in(hook.bodies) >= ALL,
                lambda: f"the webhook: {len(hook.bodies)} bodies",
                300,
            )
            await p0.pause(1.0)  # a duplicate would arrive within this
            sent = Counter(
                (b["rule"], b.get("incident") or b["subject"]["id"]) for b in hook.bodies
            )
            assert max(sent.values()) == 1  # no alert twice, whichever process sent it
            # one alert per incident: 1,000 failed jobs of two causes are a few alerts, not 1,000
            assert len(sent) < 20 and _jobs_in(hook.bodies) == ALL
            # no other process prints: the watch prints each alert once, the TUIs' ones too
            assert Counter((a.rule, a.incident or a.subject.id) for a in printed) == sent
            # both TUIs show the alerts in their own pane, whoever sent them
            for w in watchers[:2]:
                shown = {m.id for a in w.alerts if a.rule == "job_failed" for m in a.members} | {
                    a.subject.id for a in w.alerts if a.rule == "job_failed" and not a.members
                }
                assert shown == ALL

            # acks from both, with notes, through the keys
            keys = []
            for app, p, note in ((apps[0], p0, "rerun with module load"), (apps[1], p1, "mine")):
                await p.press("i")
                await p.pause(0.3)
                table = app.screen.query_one("#incident-table")
                if keys:
                    await p.press("down")
                    await p.pause(0.1)
                keys.append(table.cursor_key)
                await p.press("a")
                await p.pause(0.3)
                for ch in note:
                    await p.press("space" if ch == " " else ch)
                await p.press("enter")
                await p.pause(0.3)
            assert keys[0] != keys[1]
            for app, p in ((apps[0], p0), (apps[1], p1)):
                await _until(
                    p,
                    lambda a=app: (
                        all(a.acks.ack_of(k) is not None for k in keys)
                        and a.hub.acks.keys() >= set(keys)
                    ),
                    "the other's ack",
                    poll=[app],
                )
            a = apps[0].acks.ack_of(keys[1])
            assert (a.who, a.note) == ("bo", "mine")
            b = apps[1].acks.ack_of(keys[0])
            assert (b.who, b.note) == ("ana", "rerun with module load")
            detail = str(apps[1].screen.query_one("#incident-detail").render())
            assert "acked by" in detail
    finally:
        hook.close()
        for s in stores:
            s.close()
