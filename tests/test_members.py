"""Aggregated incidents and their members view: ``m`` on an incident lists the findings behind
its count, ``enter`` on one opens that job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.app import CockpitApp
from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.incident_views import member_rows
from cockpit.model import Finding, Incident, Subject
from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.members import MembersScreen, MemberTable
from cockpit.screens.panes import IncidentTable, QueueTable
from cockpit.store.acks import AckStore

NOW = DEMO_START + timedelta(minutes=10)


def _held(job: str, user: str, minutes: int) -> Finding:
    return Finding(
        "pending_held_user",
        "warning",
        Subject("job", "hpc", job),
        "held by its user",
        related=(Subject("user", "hpc", user),),
        first_seen=datetime(2026, 11, 29, 20, minutes, tzinfo=UTC),
    )


def test_member_rows_list_every_job_oldest_first():
    inc = Incident(
        "group|hpc|pending_held_user|ana",
        "pending_held_user",
        "warning",
        Subject("cluster", "hpc", "hpc"),
        "3 jobs (ana): held by its user",
        findings=(_held("12", "ana", 30), _held("10", "ana", 5), _held("11", "ana", 20)),
    )
    rows = member_rows(inc)
    assert [r.cells[1] for r in rows] == ["job 10 @hpc", "job 11 @hpc", "job 12 @hpc"]
    assert rows[0].key == "job\x1fhpc\x1f10"


async def test_m_opens_the_members_and_enter_opens_a_member(tmp_path):
    app = CockpitApp(
        demo_sources(7, clock=lambda: NOW), clock=lambda: NOW, acks=AckStore(tmp_path / "s.json")
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await app.hub.first_round.wait()
        for _ in range(200):
            if app.screen.query(QueueTable) and app.screen.query_one(QueueTable).row_count:
                break
            await pilot.pause(0.02)
        many = [i for i in app.hub.incidents if len(i.findings) > 1]
        assert many, "the demo has an incident with several findings (a node and its jobs)"
        await pilot.press("i")
        assert isinstance(app.screen, IncidentScreen)
        table = app.screen.query_one(IncidentTable)
        assert table.move_to_key(many[0].key)
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MembersScreen)
        members = app.screen.query_one(MemberTable)
        assert members.row_count == len(many[0].findings)
        job = next(f.subject for f in many[0].findings if f.subject.kind == "job")
        assert members.move_to_key(f"job\x1f{job.source}\x1f{job.id}")
        await pilot.press("enter")
        await pilot.pause()
        assert getattr(app.screen, "subject", None) == job
        await pilot.press("escape")
        assert isinstance(app.screen, MembersScreen)


async def test_the_members_header_names_what_affected_counts(tmp_path):
    # job 48106 shows AFFECTED 4 (its nodes) and m listed "1 finding(s)": the header now says
    # which 4 the incident view counted
    app = CockpitApp(
        demo_sources(7, clock=lambda: NOW), clock=lambda: NOW, acks=AckStore(tmp_path / "s.json")
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await app.hub.first_round.wait()
        inc = next(i for i in app.hub.incidents if i.subject == Subject("job", "demo-hpc", "48106"))
        assert len(inc.affected) == 4 and len(inc.findings) == 1
        app.push_screen(MembersScreen(inc))
        await pilot.pause()
        title = str(app.screen.query_one("#members-title").render())
        assert "1 finding ·" in title and "affected 4: node " in title
        await app.hub.close()
