"""Entry's direct answer reads only what a run could read without a person: a specification the
manifest marks `approval = "human"` is never opened (every open this process makes is watched)
and the answer says so in one line naming it. And a `share = "local"` specification quoted in a
direct answer reaches only the local terminal: Entry's remote model route, which decided, was
sent record names, never their content."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI

CANARY = "Jx5approvalcanary"
# the scenario and its spec, without the spec's approval or share: each manifest adds its own
MINE = """\
id = "MINE"
profile = "triage"
goal = "Why did fifo_smoke fail?"
[[record]]
id = "spec/fifo.md"
kind = "spec"
path = "spec/fifo.md"
"""
MANIFEST = (
    MINE
    + """\
approval = "human"
[[record]]
id = "spec/open.md"
kind = "spec"
path = "spec/open.md"
"""
)
QUESTION = "what does OVERFLOW_ERR mean?"

_watched: list[str] = []
_opened: list[str] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _watched and isinstance(args[0], str | bytes):
        path = os.fsdecode(args[0])
        if any(path.endswith(name) for name in _watched):
            _opened.append(path)


sys.addaudithook(_audit)  # for the whole process (a hook cannot be removed); idle unless watching


@contextmanager
def opens_of(name: str) -> Iterator[list[str]]:
    """Every open of a path ending in `name` this process makes meanwhile, by any code."""
    _watched.append(name)
    _opened.clear()
    try:
        yield _opened
    finally:
        _watched.remove(name)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "mine"
    (root / "spec").mkdir(parents=True)
    (root / "spec" / "fifo.md").write_text(
        f"# FIFO\nFIFO-3: an OVERFLOW_ERR is raised when a write arrives while full ({CANARY}).\n"
    )
    (root / "spec" / "open.md").write_text("# Open\nOVERFLOW_ERR: see the FIFO chapter.\n")
    (root / "scenario.toml").write_text(MANIFEST)
    return root


def asked(folder: Path, tmp_path: Path, *more: str, env: dict[str, str] | None = None):
    return warrant(
        "ask",
        QUESTION,
        "--in",
        str(folder),
        *more,
        "--db",
        str(tmp_path / "w.sqlite"),
        cwd=tmp_path,
        env=env,
    )


def test_a_spec_that_needs_a_persons_approval_is_not_opened_and_the_answer_says_so(
    folder, tmp_path
):
    assert CANARY in (folder / "spec" / "fifo.md").read_text()  # the ground truth
    with opens_of("spec/fifo.md") as opened:
        result = asked(folder, tmp_path, "--json")
        text = asked(folder, tmp_path)
    assert result.returncode == 0, result.stderr
    assert opened == []
    shown = json.loads(result.stdout)
    assert shown["route"] == "direct"
    assert [quote["source"] for quote in shown["answer"]["quotes"]] == ["spec spec/open.md"]
    assert "spec spec/open.md" in shown["answer"]["read"]
    assert "spec spec/fifo.md" not in shown["answer"]["read"]
    assert shown["answer"]["unopened"] == ["spec spec/fifo.md"]  # as the entered event records it
    line = "spec spec/fifo.md needs a person's approval to be read; not opened"
    assert shown["not_opened"] == [line]
    assert CANARY not in result.stdout and CANARY not in text.stdout
    assert text.stdout.count(line) == 1


def test_a_spec_another_scenario_lets_be_read_without_a_person_is_read_under_it(folder, tmp_path):
    (folder / "open.toml").write_text(
        MANIFEST.replace('approval = "human"\n', "").replace("MINE", "OPEN")
    )
    result = asked(folder, tmp_path, "--json")
    shown = json.loads(result.stdout)
    assert "spec spec/fifo.md" in shown["answer"]["read"] and shown["not_opened"] == []
    assert CANARY in result.stdout


LOCAL_MANIFEST = MINE + 'share = "local"\n'


def test_a_remote_entry_model_is_sent_no_content_of_a_local_spec_the_answer_quotes(
    folder, tmp_path
):
    """The direct answer is made after the model decided, and printed here, never sent."""
    (folder / "scenario.toml").write_text(LOCAL_MANIFEST)
    choice = {"route": "direct", "scenario": None, "reason": "the specification defines it"}
    model = FakeOpenAI([json.dumps(choice)])
    env = model.env(WARRANT_MODEL_LOCALITY="remote")
    with model.running():
        result = asked(folder, tmp_path, "--json", "--entry", "model", env=env)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["route"] == "direct" and shown["reason"].startswith("the model: ")
    assert CANARY in result.stdout  # the local terminal is shown the local spec
    assert len(model.requests) == 1
    assert CANARY not in json.dumps(model.requests[0]) and "spec/fifo.md" in model.prompts[0]
