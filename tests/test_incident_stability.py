"""One verdict per subject across polls: an incident's jobs keep one incident while they are
in the live data (no key flipping between a group and a surge, no new cluster group for the
casualties of a node that was resumed), and a gone job group is not worded as an outage."""

from __future__ import annotations

from datetime import timedelta

from cockpit.app import CockpitApp
from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.diagnosis.correlate import correlate
from cockpit.model import Finding, Incident, Subject
from cockpit.screens.incidents import lifecycle_line
from cockpit.screens.members import MembersScreen
from cockpit.store import open_store
from cockpit.store.codec import STORED_FINDINGS, incident_from_json, incident_to_json
from cockpit.store.types import StoredIncident


def _members(inc: Incident) -> set[Subject]:
    return {s for s in (*inc.affected, *(f.subject for f in inc.findings)) if s.kind == "job"}


async def _poll(app, pilot) -> None:
    g0 = app.hub.generation
    app.hub.refresh_now()
    for _ in range(400):
        await pilot.pause(0.05)
        if app.hub.generation != g0 and app.hub.open_incidents:
            break
    await pilot.pause(0.2)


def _check(app, when: str) -> None:
    # the incremental path (delta, memo) says what a from-scratch correlate says
    scratch = correlate([f for st in app.hub.states.values() for f in st.findings])
    assert sorted(i.key for i in app.hub.incidents) == sorted(i.key for i in scratch), when
    live = [s for s in app.hub.open_incidents if not s.gone]
    in_live = set().union(*(_members(s.incident) for s in live)) if live else set()
    for s in app.hub.open_incidents:
        if s.gone:
            still = _members(s.incident) & in_live
            assert not still, f"{when}: {s.key} is gone while {len(still)} of its jobs are live"
    for s in live:  # each job in one live incident: one verdict per subject
        others = [o for o in live if o is not s and _members(o.incident) & _members(s.incident)]
        assert not others, f"{when}: {s.key} shares jobs with {[o.key for o in others]}"


async def test_demo_polls_keep_one_incident_per_job_and_a_resumed_node_makes_no_group(tmp_path):
    now = [DEMO_START]
    sources = demo_sources(7, lambda: now[0])
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    app = CockpitApp(sources, clock=lambda: now[0], bell=False, store=store)
    async with app.run_test() as pilot:
        for step in range(6):
            await _poll(app, pilot)
            _check(app, f"poll {step}")
            now[0] += timedelta(seconds=15)
        keys = {s.key for s in app.hub.open_incidents if not s.gone}
        node = next(k for k in keys if k.startswith("node|demo-hpc|cn013|"))
        res = await sources[0].transport.run(
            ["scontrol", "update", "NodeName=cn013", "State=RESUME"]
        )
        assert res.exit_status == 0
        for step in range(3):
            now[0] += timedelta(seconds=15)
            await _poll(app, pilot)
            _check(app, f"after resume, poll {step}")
        live = {s.key for s in app.hub.open_incidents if not s.gone}
        assert node not in live  # the node's incident resolved
        # its jobs are not a second, cluster-level incident of the same failure
        assert not any("node_drain_kill_task_failed" in k for k in live), live


def test_a_gone_job_group_is_not_worded_as_an_outage():
    head = Finding(
        "pending_qos_limit", "warning", Subject("job", "hpc", "1"), "QOSMaxJobsPerUserLimit"
    )
    inc = Incident(
        "group|hpc|pending_qos_limit|ines",
        "pending_qos_limit",
        "warning",
        Subject("cluster", "hpc", "hpc"),
        "2 jobs (ines): QOSMaxJobsPerUserLimit",
        (head, head),
    )
    t = DEMO_START
    si = StoredIncident(inc, t, t, gone=True, resolved_at=t)
    line = lifecycle_line(si, None, t + timedelta(seconds=36)).plain
    assert "answers again" not in line
    assert line.startswith("its jobs left this state 36s ago")  # the one age format
    outage = StoredIncident(
        Incident("source|hpc|x", "source_unreachable", "critical", inc.subject, "t", (head,)),
        t,
        t,
        gone=True,
        resolved_at=t,
    )
    assert lifecycle_line(outage, None, t).plain.startswith("answers again")


def test_members_of_a_stored_incident_say_how_many_of_its_findings_are_shown():
    jobs = [
        Finding(
            "pending_qos_limit",
            "warning",
            Subject("job", "hpc", str(i)),
            "QOSMaxJobsPerUserLimit",
            related=(Subject("user", "hpc", "ines"),),
        )
        for i in range(30)
    ]
    live = Incident(
        "group|hpc|pending_qos_limit|ines",
        "pending_qos_limit",
        "warning",
        Subject("cluster", "hpc", "hpc"),
        "30 jobs (ines): QOSMaxJobsPerUserLimit",
        tuple(jobs),
        tuple(f.subject for f in jobs),
    )
    stored = incident_from_json(incident_to_json(live))
    assert len(stored.findings) == STORED_FINDINGS

    class Hub:
        def incident_for(self, key):
            return None  # gone from the live data: the stored record is all there is

    class Title:
        text = ""

        def update(self, t):
            Title.text = t.plain

    class Table:
        def set_rows(self, rows):
            pass

    screen = MembersScreen(stored)
    type(screen).hub = property(lambda self: Hub())
    try:
        screen.query_one = lambda what, *a: Title() if "title" in str(what) else Table()
        screen.refresh_data()
    finally:
        del type(screen).hub
    assert "20 of 30 finding(s) shown" in Title.text
