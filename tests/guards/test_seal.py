"""The seal key: taken from where the process's environment says, whenever that changes."""

from __future__ import annotations

from guards.seal import KEY_ENV, is_sealed, seal_of


def test_a_process_whose_config_folder_changes_seals_with_that_folders_key(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "one"))
    first = seal_of("grant", {"id": "R42"})
    assert (tmp_path / "one" / "warrant" / "seal.key").exists()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "two"))  # another user's store, a test
    second = seal_of("grant", {"id": "R42"})
    assert (tmp_path / "two" / "warrant" / "seal.key").exists()
    assert first != second  # two random keys
    assert not is_sealed("grant", {"id": "R42"}, first)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "one"))
    assert is_sealed("grant", {"id": "R42"}, first)  # the first folder's key, read again


def test_the_environments_key_wins_and_is_read_when_it_changes(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "team key")
    sealed = seal_of("goal", "Which tests failed?")
    monkeypatch.setenv(KEY_ENV, "another key")
    assert not is_sealed("goal", "Which tests failed?", sealed)
    monkeypatch.setenv(KEY_ENV, "team key")
    assert is_sealed("goal", "Which tests failed?", sealed)
