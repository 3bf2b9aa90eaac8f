"""A training job's drill-down at 80x24: the one-line title leads with the job's name and what
decides (its verdict), not with its UUID (which used to take the whole line); the UUID is in
the fields below."""

from __future__ import annotations

from textual.geometry import Region

from cockpit.model import Subject
from cockpit.screens.subject import TrainingJobScreen

from .test_ui_flows import make_app, ready, until


async def test_title_leads_with_name_and_verdict_at_80_columns(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        src = next(st for st in app.hub.states.values() if st.source.kind == "modelarts")
        job = next(j for j in src.snapshot.training_jobs if j.name == "custom-alpine-train")
        app.open_subject(Subject("training_job", src.name, job.job_id))
        await until(pilot, lambda: isinstance(app.screen, TrainingJobScreen), "the drill-down")
        screen = app.screen

        def title() -> str:
            found = screen.query("#subject-title")
            return found.first().render().plain if found else ""

        await until(pilot, lambda: "127" in title(), "the verdict in the title", 300)
        shown = title()
        assert shown.startswith(" custom-alpine-train ")
        assert "Failed: exit 127: boot command not found" in shown
        assert len(shown) <= 80 and job.job_id not in shown[:60]
        widget = screen.query_one("#fields")
        strips = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
        fields = "\n".join("".join(seg.text for seg in strip) for strip in strips)
        assert job.job_id in fields  # the id is still one look away
