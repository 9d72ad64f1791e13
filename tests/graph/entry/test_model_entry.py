"""Entry by a model route, through the real transport against a local OpenAI-compatible server
the test starts: its choice is taken when it is one of the candidates, and refused — the refusal
said, the rules deciding — when it names a scenario outside the user's roots or is not an Entry
choice at all. The prompt carries record names and counts, never a record's content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.entry.ask import ask
from nodes.choosers.route import route_from_env
from tests.fake_openai import FakeOpenAI

MANIFEST = """\
id = "MINE"
profile = "triage"
goal = "Why did fifo_smoke fail?"
[[record]]
id = "logs/fifo_smoke.log"
kind = "log"
path = "logs/fifo_smoke.log"
"""
SECRET = "CONTENT-NEVER-SENT-7f3a"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "fifo_smoke.log").write_text(f"UVM_ERROR {SECRET}\nTEST FAILED\n")
    (tmp_path / "scenario.toml").write_text(MANIFEST)
    return tmp_path


def routed(server: FakeOpenAI, monkeypatch, question: str, folder: Path):
    monkeypatch.setenv("WARRANT_MODEL", "warrant-test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with server.running():
        return ask(question, str(folder), None, model=route_from_env())


def test_the_model_s_choice_among_the_candidates_is_taken(folder, monkeypatch):
    manifest = str((folder / "scenario.toml").resolve())
    choice = {"route": "research", "scenario": manifest, "reason": "the log can settle it"}
    server = FakeOpenAI([json.dumps(choice)])
    asked = routed(server, monkeypatch, "anything wrong with the fifo?", folder)
    assert (asked.decision.route, asked.decision.scenario) == ("research", manifest)
    assert (
        asked.decision.reason == "the model: the log can settle it" and asked.actor == "entry:model"
    )
    sent = json.dumps(server.requests[0])
    assert "fifo_smoke" in sent and SECRET not in sent  # names, never contents


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        (
            json.dumps({"route": "research", "scenario": "R42", "reason": "x"}),
            "scenario 'R42' is outside your scenario roots",
        ),
        (
            json.dumps({"route": "research", "scenario": "/etc/passwd", "reason": "x"}),
            "scenario '/etc/passwd' is outside your scenario roots",
        ),
        ("route: research", "the model's answer is not an Entry choice"),
        (
            json.dumps({"route": "direct", "scenario": None, "reason": "x", "run": "rm -rf"}),
            "the model's answer is not an Entry choice",
        ),
    ],
)
def test_a_choice_outside_the_roots_or_malformed_is_refused(folder, monkeypatch, reply, refused):
    server = FakeOpenAI([reply])
    asked = routed(server, monkeypatch, "why did fifo_smoke fail?", folder)
    assert asked.decision.reason.startswith(f"the model's choice was refused: {refused}")
    assert "; by the rules: the question names fifo_smoke" in asked.decision.reason
    assert asked.decision.scenario == str((folder / "scenario.toml").resolve())
    assert asked.actor == "entry:rules"
