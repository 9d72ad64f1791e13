"""changes' line counts against git's own: a repository made here with dulwich, then read by the
tool and by `git log --numstat` (run with no user or system configuration, renames off as the tool
has none). Every expectation is git's output, never the tool's.

The edit shapes are those where git's diff is minimal and the tool's must agree with plain
`git log --numstat`. A rewrite of thousands of lines is where git's cost heuristics may count more
than the minimum: there the tool agrees with `git log --numstat --minimal`.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from scenario.registry import Record, load_scenario
from tests.tools.repo import gitmade
from tools.repo import changes
from tools.repo.args import ChangesArgs

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is the ground truth")

WORDS = [f"assign w{n} = r{n};" for n in range(40)]


def _text(lines: list[str], newline_at_end: bool = True) -> bytes:
    return ("\n".join(lines) + ("\n" if newline_at_end and lines else "")).encode()


def _repeating(blocks: int) -> list[str]:
    """Lines that repeat: a block `begin`, a body line, `end`, many times over."""
    return [line for n in range(blocks) for line in ("begin", f"  x <= {n % 3};", "end", "")]


def _scattered(seed: int) -> tuple[bytes, bytes]:
    """A 300-line file of lines drawn from 12, and the same with 25 seeded edits of every kind."""
    rng = random.Random(seed)
    old = [f"line {rng.randrange(12)}" for _ in range(300)]
    new = list(old)
    for _ in range(25):
        at = rng.randrange(len(new))
        kind = rng.randrange(4)
        if kind == 0:
            new.insert(at, f"line {rng.randrange(12)}")
        elif kind == 1:
            del new[at]
        elif kind == 2:
            new[at] = f"new {rng.randrange(5)}"
        else:
            block = new[at : at + 4]
            del new[at : at + 4]
            where = rng.randrange(len(new) + 1)
            new[where:where] = block
    return _text(old), _text(new)


SHAPES: dict[str, tuple[bytes, bytes]] = {
    "inserted_in_the_middle.sv": (_text(WORDS), _text([*WORDS[:20], "a", "b", "c", *WORDS[20:]])),
    "deleted_here_and_there.sv": (_text(WORDS), _text([*WORDS[1:9], *WORDS[12:30], *WORDS[31:]])),
    "block_replaced.sv": (_text(WORDS), _text([*WORDS[:10], "new 1", "new 2", *WORDS[15:]])),
    "block_moved_down.sv": (_text(WORDS), _text([*WORDS[4:30], *WORDS[:4], *WORDS[30:]])),
    "line_moved_up.sv": (_text(WORDS), _text([*WORDS[:5], WORDS[35], *WORDS[5:35], *WORDS[36:]])),
    "reversed.sv": (_text(WORDS[:20]), _text(WORDS[:20][::-1])),
    "lines_repeat.sv": (
        _text(_repeating(12)),
        _text([*_repeating(5), "begin", "  y <= 1;", "end", "", *_repeating(7)[1:]]),
    ),
    "repeats_swapped.sv": (_text(["a", "b"] * 15), _text(["b", "a"] * 15)),
    "changed_and_appended.sv": (
        _text(WORDS),
        _text([*WORDS[:7], "assign w7 = 0;", *WORDS[8:], "// added", "wire w40;"]),
    ),
    "newline_added_at_end.sv": (_text(WORDS[:5], newline_at_end=False), _text(WORDS[:5])),
    "last_line_changed_without_newline.sv": (
        _text(WORDS[:5], newline_at_end=False),
        _text([*WORDS[:4], "assign w4 = 0;"], newline_at_end=False),
    ),
    "crlf.sv": (
        b"".join(f"{line}\r\n".encode() for line in WORDS[:10]),
        b"".join(f"{line}\r\n".encode() for line in [*WORDS[:3], "x", *WORDS[4:10]]),
    ),
    "lone_carriage_returns.sv": (b"a\rb\rc\n", b"a\rB\rc\n"),
    "emptied.sv": (_text(WORDS[:6]), b""),
    "filled.sv": (b"", _text(WORDS[:6])),
    "scattered_edits.sv": _scattered(57),
}
BINARY = (b"\x00\x01\x02\n" * 4, b"\x00\x01\x03\n" * 4)


def _git_numstat(repo: Path, since: str, *options: str) -> dict[str, dict[str, tuple[str, str]]]:
    """commit id → path → (added, deleted), as git prints them (`-` for a binary file)."""
    environment = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    command = ["git", "-C", str(repo), "log", "--numstat", "--no-renames", "--format=commit %H"]
    log = subprocess.run(
        [*command, *options, f"{since}..HEAD"],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    ).stdout
    found: dict[str, dict[str, tuple[str, str]]] = {}
    current: dict[str, tuple[str, str]] = {}
    for line in log.splitlines():
        if line.startswith("commit "):
            current = found.setdefault(line.split()[1][: changes.SHORT_SHA], {})
        elif counted := re.fullmatch(r"(\d+|-)\t(\d+|-)\t(.+)", line):
            current[counted[3]] = (counted[1], counted[2])
    return found


def _tool_numstat(record: Record, since: str) -> dict[str, dict[str, tuple[str, str]]]:
    excerpt = changes.run(ChangesArgs(repo="rtl", since=since, until="HEAD"), {"repo": record})
    found: dict[str, dict[str, tuple[str, str]]] = {}
    current: dict[str, tuple[str, str]] = {}
    for line in excerpt.lines:
        if counted := re.fullmatch(r"  \+(\d+|-) -(\d+|-) (.+)", line.text):
            current[counted[3]] = (counted[1], counted[2])
        else:
            current = found.setdefault(line.text.split()[0], {})
    return found


def _made(root: Path, states: list[dict[str, bytes]]) -> tuple[Record, str]:
    """A repository of one commit per state, admitted; the first commit's id."""
    repo = gitmade.init(root / "design")
    shas: list[bytes] = []
    for n, files in enumerate(states):
        when = f"2026-11-0{n + 1}T10:00:00+00:00"
        shas.append(gitmade.commit(repo, files, f"state {n}", when, shas[-1:]))
    repo.refs[b"refs/heads/master"] = shas[-1]
    repo.close()
    (root / "m.toml").write_text(
        'id = "G"\nprofile = "triage"\n[[record]]\nid = "rtl"\nkind = "repository"\n'
        'path = "design"\n'
    )
    return load_scenario(root / "m.toml").records["rtl"], shas[0].decode()


def test_each_edit_shape_is_counted_as_git_log_numstat_counts_it(tmp_path):
    names = sorted(SHAPES)
    halves = [names[: len(names) // 2], names[len(names) // 2 :]]  # 20 files a commit at most
    states = [{name: SHAPES[name][0] for name in names}]
    for half in halves:
        states.append({**states[-1], **{name: SHAPES[name][1] for name in half}})
    states.append(states[-1] | {"deleted.sv": _text(WORDS[:3]), "image.bin": BINARY[0]})
    states.append(states[-1] | {"added.sv": _text(WORDS[:4]), "image.bin": BINARY[1]})
    del states[-1]["deleted.sv"]
    record, first = _made(tmp_path, states)

    git = _git_numstat(tmp_path / "design", first)

    assert _tool_numstat(record, first) == git
    assert sum(len(files) for files in git.values()) == len(SHAPES) + 2 + 3
    assert git[next(iter(git))]["image.bin"] == ("-", "-")


def test_a_rewrite_of_thousands_of_lines_is_counted_as_git_minimal_counts_it(tmp_path):
    rng = random.Random(8)
    old = [f"line {rng.randrange(30)}" for _ in range(3000)]
    new = [line for line in old if rng.random() < 0.5] + [f"line {rng.randrange(30)}"] * 40
    rng.shuffle(new)
    record, first = _made(tmp_path, [{"big.sv": _text(old)}, {"big.sv": _text(new)}])

    minimal = _git_numstat(tmp_path / "design", first, "--minimal")

    assert _tool_numstat(record, first) == minimal
