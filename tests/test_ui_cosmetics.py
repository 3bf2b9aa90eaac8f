"""Small things a new user noticed: narrow screens, titles, notifications, palette ranking."""

from __future__ import annotations

from cockpit.screens.panes import QueueTable, TrainingJobTable


def _widths(table, width: int) -> dict[str, int]:
    return {table.columns[i].label: w for i, w in table._columns_for(width)}


def test_verdict_keeps_room_at_80_columns():
    cols = _widths(QueueTable(), 79)  # 80 columns minus the scrollbar
    assert cols["VERDICT"] >= 30
    assert {"JOBID", "NAME", "STATE"} <= cols.keys()
    assert sum(w + 1 for w in cols.values()) <= 79
    wide = _widths(QueueTable(), 159)
    assert {"USER", "TIME", "REASON", "PART"} <= wide.keys()  # nothing dropped when there is room
    tj = _widths(TrainingJobTable(), 79)
    assert tj["VERDICT"] >= 28 and "PHASE" in tj


async def test_esc_in_the_filter_clears_the_pane_title_at_once(tmp_path):
    from .test_ui_flows import make_app, ready

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        title = app.screen.query_one("#queue-title")
        await pilot.press("slash", *"48101", "enter")
        assert "filter" in str(title.render())
        gen = app.hub.generation
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert app.hub.generation == gen  # no poll in between: the title changed by itself
        assert "filter" not in str(title.render()) and " of " not in str(title.render())


async def test_palette_ranks_exact_ids_first_and_drops_subsequence_matches_for_ids(tmp_path):
    from cockpit.screens.commands import CockpitCommands

    from .test_ui_flows import make_app, ready

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        provider = CockpitCommands(app.screen)
        hits = provider.ranked("48102")
        assert [h[2] for h in hits] == ["48102"]  # not 48111 or 49181 (digits in order)
        node = provider.ranked("cn013")
        assert node[0][1:3] == ("node", "cn013")
        assert all("custom-alpine-train" not in h[3] for h in node)
        # a word still finds names by prefix first, then by subsequence
        bert = provider.ranked("bert")
        assert bert and bert[0][0] >= 0.9 and "bert" in bert[0][3]
        assert provider.ranked("alpine")[0][3].startswith("training job custom-alpine-train")


async def test_training_job_title_keeps_its_closing_bracket_when_narrow(tmp_path):
    from cockpit.model import Subject
    from cockpit.screens.subject import TrainingJobScreen

    from .test_ui_flows import make_app, ready, until

    for width in (120, 100, 160):
        app = make_app(tmp_path)
        async with app.run_test(size=(width, 40)) as pilot:
            await ready(app, pilot)
            snap = app.hub.snapshot("demo-modelarts")
            job = next(t for t in snap.training_jobs if t.name == "detr-coco-obs")
            app.open_subject(Subject("training_job", "demo-modelarts", job.job_id))
            await until(
                pilot, lambda a=app: isinstance(a.screen, TrainingJobScreen), "training job screen"
            )
            await pilot.pause()
            line = str(app.screen.query_one("#subject-title").render()).rstrip()
            assert "detr-coco-obs" in line and "Initializing" in line
            assert line.count("(") == line.count(")"), line
            assert len(line) <= width


async def test_export_notification_puts_a_short_path_on_its_own_line(tmp_path, monkeypatch):
    from cockpit.screens.incidents import short_path

    from .test_ui_flows import make_app, ready

    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path)  # export_dir None: the current directory
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("i", "x")
        await pilot.pause()
        note = list(app._notifications)[-1]
        head, _, where = note.message.partition("\n")
        assert head == "incidents exported to"
        assert where.startswith("./cockpit-incidents-") and (tmp_path / where[2:]).exists()
        # it quotes job output: readable by its owner only, as alerts.jsonl and the store
        assert (tmp_path / where[2:]).stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert short_path(tmp_path / "home" / "t" / "x.md") == "~/t/x.md"
    assert short_path(tmp_path / "homer" / "x.md") == str(tmp_path / "homer" / "x.md")


async def test_export_refuses_a_link_at_its_path_and_says_so(tmp_path, monkeypatch):
    """A link planted at the export's name (a shared export directory) is not written through;
    the toast said "[Errno 40] Too many levels of symbolic links", which reads as a loop in
    the operator's own directories, not as a link refused (hostile test)."""
    from .test_ui_flows import frozen, make_app, ready

    monkeypatch.chdir(tmp_path)
    target = tmp_path / "elsewhere.txt"
    target.write_text("not yours\n")
    name = f"cockpit-incidents-{frozen().strftime('%Y%m%d-%H%M%S')}.md"
    (tmp_path / name).symlink_to(target)
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("i", "x")
        await pilot.pause()
        note = list(app._notifications)[-1]
    assert target.read_text() == "not yours\n"
    assert note.severity == "error"
    assert "symbolic link" in note.message and "not written" in note.message
    assert "Too many levels" not in note.message


async def test_wrapped_evidence_lines_hang_under_the_evidence_text(tmp_path):
    from cockpit.model import Subject
    from cockpit.screens.panes import FindingList
    from cockpit.screens.subject import JobScreen

    from .test_ui_flows import OOM_JOB, make_app, ready, until

    app = make_app(tmp_path)
    async with app.run_test(size=(80, 40)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
        await until(
            pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "job logs"
        )
        fl = app.screen.query_one(FindingList)
        await pilot.pause()
        lines = [fl.render_line(y).text for y in range(fl.size.height)]
        at = next(i for i, t in enumerate(lines) if "node        slurmd-cn007.log" in t)
        indent = lines[at].index("slurmd-cn007.log")
        follow = lines[at + 1]
        assert follow[:indent].strip() == "" and follow[indent] != " ", (lines[at], follow)


async def test_pending_job_lists_no_missing_log_errors(tmp_path):
    from cockpit.model import Subject
    from cockpit.screens.panes import FindingList
    from cockpit.screens.subject import JobScreen

    from .test_ui_flows import make_app, ready, until

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", "48101"))  # PENDING (PartitionConfig)
        await until(
            pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "job logs"
        )
        labels = [label for label, _ in app.screen.logs]
        assert not any(label.startswith("error:") for label in labels), labels
        assert labels[-1] == "stdout (not written yet)"
        assert "slurmctld.log" in labels
        shown = " ".join(str(o.prompt) for o in app.screen.query_one(FindingList)._options)
        assert "error: stdout" not in shown
