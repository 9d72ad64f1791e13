"""R42's design history and waveform, made by the lab (lab/rtlgen.py, lab/wavegen.py), checked
against the lab's other records with independent readers: `git` for the repository, pyvcd's
tokenizer for the waveform, the log's own lines and the history CSV for what they must agree with."""

from __future__ import annotations

import csv
import re
import subprocess
import threading
from pathlib import Path

from vcd.reader import TokenKind, tokenize

from lab import LAB_DIR
from lab.rtlgen import REPOSITORY, ensure_repository
from lab.wavegen import WAVEFORM, vcd_text


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    ).stdout


def test_the_repository_is_sound_and_each_tag_is_the_newest_commit_before_its_night():
    ensure_repository()
    git(REPOSITORY, "fsck", "--strict", "--no-dangling")
    with (LAB_DIR / "history" / "regressions.csv").open(newline="") as handle:
        nights = {row["run"]: row["date"] for row in csv.DictReader(handle)}
    dated = [
        line.split(" ", 1)
        for line in git(REPOSITORY, "log", "--format=%H %cs", "main").splitlines()
    ]
    tags = git(REPOSITORY, "tag", "--list").split()
    assert sorted(tags) == sorted(nights)
    for night, day in nights.items():
        newest = next(sha for sha, when in dated if when < day)
        assert git(REPOSITORY, "rev-parse", f"{night}^{{commit}}").strip() == newest


def test_between_r41_and_r42_the_reset_controller_changed():
    ensure_repository()
    numstat = git(REPOSITORY, "log", "--format=%s", "--numstat", "R41..R42")
    assert re.search(r"^\d+\t\d+\trtl/rst_ctrl\.sv$", numstat, re.MULTILINE)
    assert len(git(REPOSITORY, "rev-list", "R41..R42").split()) == 2


def test_the_build_is_the_same_everywhere_and_repairs_a_moved_ref(tmp_path):
    first, second = ensure_repository(tmp_path / "a.git"), ensure_repository(tmp_path / "b.git")
    assert git(first, "show-ref") == git(second, "show-ref") == git(REPOSITORY, "show-ref")
    git(first, "update-ref", "refs/tags/R42", git(first, "rev-parse", "R41").strip())
    ensure_repository(first)
    assert git(first, "show-ref") == git(REPOSITORY, "show-ref")


def test_builders_at_once_leave_one_whole_copy(tmp_path):
    folder = tmp_path / "rtl.git"
    builders = [threading.Thread(target=ensure_repository, args=(folder,)) for _ in range(4)]
    for builder in builders:
        builder.start()
    for builder in builders:
        builder.join()
    assert git(folder, "show-ref") == git(REPOSITORY, "show-ref")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["rtl.git"]  # no staging left


def _changes(path: Path) -> dict[str, list[tuple[int, str]]]:
    """Each signal's (time, value) changes, read by pyvcd's tokenizer."""
    names: dict[str, str] = {}
    scope: list[str] = []
    changes: dict[str, list[tuple[int, str]]] = {}
    time = 0
    with path.open("rb") as handle:
        for token in tokenize(handle):
            if token.kind is TokenKind.SCOPE:
                scope.append(token.scope.ident)
            elif token.kind is TokenKind.UPSCOPE:
                scope.pop()
            elif token.kind is TokenKind.VAR:
                names[token.var.id_code] = ".".join([*scope, token.var.reference])
            elif token.kind is TokenKind.CHANGE_TIME:
                time = token.time_change
            elif token.kind in (TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR):
                value = token.data
                changes.setdefault(names[value.id_code], []).append((time, str(value.value)))
    return changes


def test_the_waveform_tells_the_logs_story():
    """Each time the log gives for reset release, the synchronizer, the error and clk_en's rise
    is where the waveform changes (or does not)."""
    log = (LAB_DIR / "runs" / "R42" / "reset_smoke.log").read_text()
    released = int(re.search(r"@ (\d+): \S+ \[RST\] rst_n -> 1", log)[1])  # type: ignore[index]
    synced = int(re.search(r"rst_sync stage 2 high at (\d+)", log)[1])  # type: ignore[index]
    error = int(re.search(r"UVM_ERROR \S+ @ (\d+):", log)[1])  # type: ignore[index]
    enabled = int(re.search(r"clk_en asserted at (\d+)", log)[1])  # type: ignore[index]
    changes = _changes(WAVEFORM)
    top = "top.dut.u_rst_ctrl."
    assert (released, "1") in changes[top + "rst_n"]
    assert (synced, "1") in changes[top + "rst_sync_n"]
    [(rise, _)] = [(time, value) for time, value in changes[top + "clk_en"] if value == "1"]
    assert rise == enabled and error < enabled
    assert changes[top + "clk_en"][0] == (0, "0")


def test_the_committed_waveform_is_what_the_lab_writes():
    assert WAVEFORM.read_text(encoding="ascii") == vcd_text()


def test_admission_builds_the_repository_only_for_a_manifest_that_approves_it(
    tmp_path, monkeypatch
):
    import lab.rtlgen

    built: list[str] = []
    monkeypatch.setattr(lab.rtlgen, "ensure_repository", lambda: built.append("built"))
    lab.rtlgen.prepare(LAB_DIR / "STA1.toml")
    lab.rtlgen.prepare(LAB_DIR / "R43.toml")
    assert built == []
    lab.rtlgen.prepare(LAB_DIR / "R42.toml")
    assert built == ["built"]
    broken = tmp_path / "broken.toml"
    broken.write_text("id = \n")
    lab.rtlgen.prepare(broken)  # left to admission to refuse, in one line
    assert built == ["built"]
