"""Acknowledgements survive a restart; a corrupt state file does not stop the cockpit."""

from cockpit.store.acks import AckStore


def test_ack_persists_and_toggles(tmp_path):
    path = tmp_path / "sub" / "state.json"
    store = AckStore(path)
    assert store.toggle("oom|job|lab|4") is True
    again = AckStore(path)
    assert again.is_acked("oom|job|lab|4")
    assert again.toggle("oom|job|lab|4") is False
    assert not AckStore(path).is_acked("oom|job|lab|4")


def test_corrupt_state_file_is_ignored_with_a_message(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{not json")
    store = AckStore(path)
    assert store.acked == frozenset()
    assert str(path) in store.load_error
    store.toggle("k")
    assert AckStore(path).is_acked("k")


def test_demo_acks_live_in_their_own_state_file(tmp_path, monkeypatch):
    """Acks made on the demo site must not reappear when the cockpit next starts on a real site."""
    import argparse

    import cockpit.app
    from cockpit.commands import tui
    from cockpit.store.acks import default_state_path, demo_state_path

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert str(default_state_path()).startswith(str(tmp_path))  # never the tester's own state
    assert demo_state_path() != default_state_path()
    assert demo_state_path().parent == default_state_path().parent
    seen = {}

    class FakeApp:
        def __init__(self, sources, **kw) -> None:
            seen.update(kw)

        def run(self) -> int:
            return 0

    monkeypatch.setattr(cockpit.app, "CockpitApp", FakeApp)
    args = argparse.Namespace(
        demo=True, demo_seed=7, config=str(tmp_path / "none.toml"), no_bell=True
    )
    assert tui.run(args) == 0
    # the demo's acks go to the demo's own store file (cockpit.store), never the real one
    from datetime import UTC, datetime

    from cockpit.store import default_store_path, open_store

    seen["store"].ack("k", "ana", "", datetime.now(UTC))
    assert default_store_path(demo=True).exists() and not default_store_path().exists()
    assert "k" not in open_store(config=None).acks()
    assert seen["export_dir"] is None


def test_export_dir_comes_from_the_ui_config(tmp_path):
    from cockpit.config import load_config

    cfg = tmp_path / "cockpit.toml"
    cfg.write_text('[ui]\nexport_dir = "~/tickets"\n', encoding="utf-8")
    assert load_config(str(cfg)).ui.export_dir == "~/tickets"
