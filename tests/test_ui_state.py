"""Acknowledgements survive a restart; a corrupt state file does not stop the cockpit."""

from cockpit.state import AckStore


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
